package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"golang.org/x/net/html"
)

// Text from a trace or contract that tries to become markup in a
// pull-request comment or a job summary.
var hostileNames = []string{
	"search</td><script>alert('name')</script>",
	"<img src=y onerror=alert(3)>",
	"![x](http://evil.example/t.png)",
	"[click](javascript:alert(1)) *bold* _it_ ~~s~~ x&lt;y&gt; www.evil.example",
	"a|b`c d",
}

// renderGFM renders Markdown as GitHub does (CommonMark with tables,
// strikethrough, autolinks and task lists) and returns the HTML elements
// it made and the text content of the page.
func renderGFM(t *testing.T, md string) (tags map[string]int, text string) {
	t.Helper()
	var out bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.GFM)).Convert([]byte(md), &out); err != nil {
		t.Fatal(err)
	}
	tags = map[string]int{}
	var b strings.Builder
	z := html.NewTokenizer(&out)
	for {
		switch z.Next() {
		case html.ErrorToken:
			return tags, b.String()
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			tags[string(name)]++
			b.WriteByte(' ')
		case html.EndTagToken:
			b.WriteByte(' ')
		case html.TextToken:
			b.Write(z.Text())
		}
	}
}

// hostileFixture is the report of testdata/hostile-trace.json against
// testdata/hostile-contract.json, under file names holding markup.
func hostileFixture(t *testing.T) *Eval {
	t.Helper()
	c, _, res := grade(t, "internal/report/testdata/hostile-contract.json", "internal/report/testdata/hostile-trace.json")
	return &Eval{Expectation: "hostile|contract.json", Kind: "contract v2", Contract: c, Trace: "hostile`trace.json", Format: "openai", Result: res}
}

// TestMarkdownEscapes grades a trace whose tool names, arguments, results
// and final answer hold HTML and Markdown against a contract that does
// too, and renders the report's Markdown as GitHub does: it makes no
// link, image, emphasis, strikethrough or HTML of its own, every name
// reads as written (the engine's backtick-quoted names as code), and the
// whole Markdown is pinned by a golden file.
func TestMarkdownEscapes(t *testing.T) {
	e := hostileFixture(t)
	var md bytes.Buffer
	if err := WriteEvalMarkdown(&md, e); err != nil {
		t.Fatal(err)
	}
	compareGolden(t, "eval_hostile.md", md.String())
	tags, text := renderGFM(t, md.String())
	for _, bad := range []string{"a", "img", "script", "iframe", "svg", "em", "del", "b", "h1"} {
		if tags[bad] > 0 {
			t.Errorf("the rendered report has %d <%s> elements", tags[bad], bad)
		}
	}
	// One table each for the metrics and the evidence checks, with
	// exactly their rows: no pipe from a trace split a cell or a row.
	if tags["table"] != 2 || tags["tr"] != 1+7+1+7 || tags["td"] != 7*4+7*3 {
		t.Errorf("tables %d, rows %d, cells %d; want 2, 16, 49", tags["table"], tags["tr"], tags["td"])
	}
	flat := strings.Join(strings.Fields(text), " ")
	for _, name := range hostileNames {
		if !strings.Contains(flat, name) {
			t.Errorf("the rendered report does not show %q as written", name)
		}
	}
	for _, want := range []string{"hostile|contract.json", "hostile`trace.json"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the rendered report does not show %q", want)
		}
	}
}
