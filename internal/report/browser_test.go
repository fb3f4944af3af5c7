package report

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolscore/toolscore/internal/browsertest"
)

var screenshot = flag.Bool("screenshot", false, "write docs/img/report-eval.png from the browser test")

// TestHTMLInBrowser opens every kind of HTML report in headless Chromium:
// each renders its heading and sections, logs no console message, throws
// no exception, asks the network for nothing, fits a 1280 px wide window
// without scrolling sideways, and gives a screenshot 1280 px wide that is
// not blank. With -screenshot the one-trace report's screenshot is
// written to docs/img.
func TestHTMLInBrowser(t *testing.T) {
	dir := t.TempDir()
	pages := []struct {
		name  string
		write func(*bytes.Buffer) error
		texts []string
		// problems is true for a page made to break the rules, to show
		// the test sees it.
		problems bool
	}{
		{"eval", func(b *bytes.Buffer) error { return WriteEvalHTML(b, evalFixture(t, unsafeTrace, goodTrace)) },
			[]string{"score 0.788 (78.8%)", "Compared with the baseline", "Alternatives (2 combinations)", "Trace: 3 calls", "Top issues to fix", "Evidence: 2 pass, 3 fail, 2 unknown"}, false},
		{"batch", func(b *bytes.Buffer) error { return WriteBatchHTML(b, batchFixture(t)) },
			[]string{"4 traces against contract.json", "Grades", "Scores", "Worst traces", "Traces that could not be graded (1)"}, false},
		{"harness", func(b *bytes.Buffer) error {
			rep := harnessFixture()
			return WriteHarnessHTML(b, rep, CompareHarness(harnessBaseline(t), rep, DefaultMaxDrop))
		}, []string{"suite flight-booking", "Regression: 2 tasks regressed", "Tasks"}, false},
		// Tool names, arguments, results (collapsed, so not in the text),
		// a final answer and a contract that hold HTML and Markdown: shown
		// as text, nothing runs or loads.
		{"hostile", func(b *bytes.Buffer) error { return WriteEvalHTML(b, hostileFixture(t)) },
			[]string{"search</td><script>alert('name')</script>", "<img src=y onerror=alert(3)>", "![x](http://evil.example/t.png)",
				`"<script>fetch('http://evil.example/x')</script>"`, "Done <script>alert('final')</script>"}, false},
		{"injected", func(b *bytes.Buffer) error {
			err := WriteEvalHTML(b, evalFixture(t, goodTrace, ""))
			b.WriteString(`<script>console.log("x")</script><img src="http://127.0.0.1:9/x.png">`)
			return err
		}, nil, true},
	}
	bctx := browsertest.Start(t, dir, 1280, 900)
	for _, pg := range pages {
		t.Run(pg.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := pg.write(&buf); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, pg.name+".html")
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			pageURL := (&url.URL{Scheme: "file", Path: path}).String()
			ctx, cancel := chromedp.NewContext(bctx)
			defer cancel()
			ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
			defer cancelTimeout()
			watch, err := browsertest.Watch(ctx, func(u string) bool { return u == pageURL })
			if err != nil {
				t.Fatal(err)
			}
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(pageURL), chromedp.WaitVisible("main h1")); err != nil {
				t.Fatalf("load %s: %v", pageURL, err)
			}
			title, err := chromedp.Run(ctx, chromedp.Title())
			if err != nil {
				t.Fatal(err)
			}
			text, err := chromedp.Run(ctx, chromedp.Text("main"))
			if err != nil {
				t.Fatal(err)
			}
			scrollWidth, err := chromedp.Run(ctx, chromedp.Evaluate[int]("document.documentElement.scrollWidth"))
			if err != nil {
				t.Fatal(err)
			}
			shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(title, "toolscore") {
				t.Errorf("title %q", title)
			}
			for _, want := range pg.texts {
				if !strings.Contains(strings.Join(strings.Fields(text), " "), want) {
					t.Errorf("rendered text lacks %q", want)
				}
			}
			if scrollWidth > 1280 {
				t.Errorf("the page is %d px wide in a 1280 px window", scrollWidth)
			}
			atLeast := 0
			if pg.problems {
				atLeast = 1
			}
			if problems := watch.Settled(ctx, atLeast, 200*time.Millisecond); (len(problems) > 0) != pg.problems {
				t.Errorf("console, exceptions or requests: %v (want some: %v)", problems, pg.problems)
			}
			img, err := png.Decode(bytes.NewReader(shot))
			if err != nil {
				t.Fatalf("screenshot: %v", err)
			}
			if w := img.Bounds().Dx(); w != 1280 {
				t.Errorf("screenshot %d px wide, want 1280", w)
			}
			colors := map[uint32]bool{}
			b := img.Bounds()
			for y := b.Min.Y; y < b.Max.Y; y += 7 {
				for x := b.Min.X; x < b.Max.X; x += 7 {
					r, g, bl, _ := img.At(x, y).RGBA()
					colors[r>>12<<8|g>>12<<4|bl>>12] = true
				}
			}
			if len(colors) < 8 {
				t.Errorf("the screenshot looks blank: %d colours", len(colors))
			}
			if *screenshot && pg.name == "eval" {
				if err := os.WriteFile(filepath.Join("..", "..", "docs", "img", "report-eval.png"), shot, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
