package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/engine"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// traceFiles lists the example traces: testdata/<format>/<case>.<ext>, each
// with <case>.golden beside it.
func traceFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	for _, name := range Names() {
		matches, err := filepath.Glob(filepath.Join("testdata", name, "*"))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range matches {
			if !strings.HasSuffix(m, ".golden") && !strings.HasSuffix(m, ".md") {
				files = append(files, m)
			}
		}
	}
	return files
}

func goldenPath(file string) string {
	return strings.TrimSuffix(file, filepath.Ext(file)) + ".golden"
}

// checkGolden compares got with the golden file, or rewrites it with -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/engine/format -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

func marshal(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGolden reads every example trace with detection, checks it was
// detected as the format its directory names, and compares the normalised
// result with its golden file.
func TestGolden(t *testing.T) {
	files := traceFiles(t)
	perFormat := map[string]int{}
	for _, file := range files {
		format := filepath.Base(filepath.Dir(file))
		perFormat[format]++
		t.Run(filepath.ToSlash(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse(data, "auto")
			if err != nil {
				t.Fatalf("Parse(%s) error: %v", file, err)
			}
			if got.Format != format {
				t.Errorf("Parse(%s) detected %q (%s), want %q", file, got.Format, got.Reason, format)
			}
			checkGolden(t, goldenPath(file), marshal(t, got))

			forced, err := Parse(data, format)
			if err != nil {
				t.Fatalf("Parse(%s, %q) error: %v", file, format, err)
			}
			if diff := cmp.Diff(got.Trace, forced.Trace); diff != "" {
				t.Errorf("forced format gives another trace (-auto +forced):\n%s", diff)
			}
			roundTrip(t, got.Trace)
		})
	}
	for _, name := range Names() {
		if perFormat[name] < 3 {
			t.Errorf("testdata/%s has %d traces, want at least 3", name, perFormat[name])
		}
	}
}

// roundTrip checks that a normalised trace, written as JSON, reads back as
// the same trace in the plain format.
func roundTrip(t testing.TB, tr engine.Trace) {
	t.Helper()
	data, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(data, "plain")
	if err != nil {
		t.Fatalf("plain round trip: Parse(%s) error: %v", data, err)
	}
	if diff := cmp.Diff(tr, back.Trace); diff != "" {
		t.Errorf("plain round trip differs (-first +second):\n%s", diff)
	}
}

// TestErrors checks the error text for bad documents: testdata/errors/*
// with the expected message in <case>.golden.
func TestErrors(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "errors", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if strings.HasSuffix(file, ".golden") {
			continue
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			format := "auto"
			if base := filepath.Base(file); strings.Contains(base, "@") {
				format = strings.TrimSuffix(strings.SplitN(base, "@", 2)[1], filepath.Ext(base))
			}
			_, err = Parse(data, format)
			if err == nil {
				t.Fatalf("Parse(%s, %q) succeeded, want an error", file, format)
			}
			if !errors.Is(err, engine.ErrInvalidTrace) {
				t.Errorf("Parse(%s) error %v does not match engine.ErrInvalidTrace", file, err)
			}
			checkGolden(t, goldenPath(file), []byte(err.Error()+"\n"))
		})
	}
}

// TestCustomAlias: "custom", Python Toolscore's name for its plain
// shapes, reads as plain.
func TestCustomAlias(t *testing.T) {
	p, err := Parse([]byte(`[{"name": "a", "arguments": "{\"x\": 1}"}]`), "custom")
	if err != nil {
		t.Fatal(err)
	}
	if p.Format != "plain" || p.Reason != "format custom was requested" || len(p.Trace.Calls) != 1 || p.Trace.Calls[0].Tool != "a" {
		t.Errorf("Parse(custom) = %+v", p)
	}
	if _, err := Parse([]byte(`[]`), "custm"); err == nil || !strings.Contains(err.Error(), `unknown format "custm"`) {
		t.Errorf("error = %v", err)
	}
}

// TestKnown: the names Parse accepts, "custom" among them.
func TestKnown(t *testing.T) {
	for _, n := range append([]string{"", "auto", "custom"}, Names()...) {
		if !Known(n) {
			t.Errorf("Known(%q) = false", n)
		}
	}
	for _, n := range []string{"custm", "xml", "Plain"} {
		if Known(n) {
			t.Errorf("Known(%q) = true", n)
		}
	}
}

// TestOpenAIListReason checks the detected reason of OpenAI lists that
// mix chat messages and chat.completion objects: an element without a
// "role" is counted as a chat.completion.
func TestOpenAIListReason(t *testing.T) {
	completion := `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"}}]}`
	msg := `{"role":"user","content":"hi"}`
	for doc, want := range map[string]string{
		"[" + msg + "," + msg + "]":               "a list of 2 OpenAI chat messages (role/content)",
		"[" + completion + "," + completion + "]": "a list of 2 OpenAI chat.completion objects (choices[0].message of each)",
		"[" + msg + "," + completion + "]":        "a list of 1 OpenAI chat message and 1 chat.completion object (choices[0].message of each), in order",
	} {
		p, err := Parse([]byte(doc), "auto")
		if err != nil {
			t.Fatalf("Parse(%s): %v", doc, err)
		}
		if p.Format != "openai" || p.Reason != want {
			t.Errorf("Parse(%s): format %q, reason %q; want openai, %q", doc, p.Format, p.Reason, want)
		}
	}
}
