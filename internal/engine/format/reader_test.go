package format

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// checkReader checks that rd.Parse reads data exactly as Parse does: the
// same Parsed (format, reason, form, warning and trace, compared as JSON)
// or the same error text, and that it leaves data as it was.
func checkReader(t *testing.T, rd *Reader, data []byte, name string) {
	t.Helper()
	want, werr := Parse(data, name)
	keep := bytes.Clone(data)
	got, gerr := rd.Parse(data, name)
	if !bytes.Equal(data, keep) {
		t.Fatalf("%q as %s: Reader.Parse changed its input", keep, name)
	}
	checkSameParsed(t, data, name, "Reader.Parse", want, werr, got, gerr)
}

// checkReaderValue checks that rd.ParseValue reads data, when it is one
// JSON value, exactly as ParseValue does (checkSameParsed).
func checkReaderValue(t *testing.T, rd *Reader, data []byte, name string) {
	t.Helper()
	v, err := jsondoc.Parse(data)
	if err != nil {
		return
	}
	want, werr := ParseValue(v, name)
	got, gerr := rd.ParseValue(v, name)
	checkSameParsed(t, data, name, "Reader.ParseValue", want, werr, got, gerr)
}

// TestReader reads every example trace (JSON, JSON Lines and SSE, of every
// format), detected and forced to every format, with one Reader in turn,
// so that each is read into the memory of all those before it, and
// compares each with Parse, and with ParseValue when detected.
func TestReader(t *testing.T) {
	var docs [][]byte
	err := filepath.WalkDir("testdata", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) == ".golden" {
			return err
		}
		data, err := os.ReadFile(path)
		docs = append(docs, data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) < 100 {
		t.Fatalf("%d example traces, want at least 100", len(docs))
	}
	rd := NewReader()
	names := append([]string{"auto", "custom"}, Names()...)
	for _, name := range names {
		for _, data := range docs {
			checkReader(t, rd, data, name)
			if name == "auto" {
				checkReaderValue(t, rd, data, name)
			}
		}
	}
	// The largest first, then the smallest: what is left of the larger
	// one in the buffers does not show through.
	big := openAIMessages(1 << 16)
	checkReader(t, rd, big, "auto")
	checkReader(t, rd, []byte(`[{"tool":"a"}]`), "auto")
	checkReaderValue(t, rd, big, "auto")
	checkReaderValue(t, rd, []byte(`[{"tool":"a"}]`), "auto")
	checkReader(t, rd, []byte(`{"calls":[]}`), "auto")
	if _, err := rd.Parse([]byte(`[]`), "nope"); err == nil {
		t.Error("Reader.Parse accepted format nope")
	}
}

// FuzzReader compares a Reader that has read a seed and the input with
// Parse (checkReader) and ParseValue (checkReaderValue), on the input and
// on the seed read again after it.
func FuzzReader(f *testing.F) {
	addSeeds(f)
	seed := openAIMessages(4 << 10)
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := NewReader()
		checkReader(t, rd, seed, "auto")
		checkReader(t, rd, data, "auto")
		checkReader(t, rd, seed, "auto")
		checkReader(t, rd, data, "auto")
		checkReaderValue(t, rd, seed, "auto")
		checkReaderValue(t, rd, data, "auto")
		checkReaderValue(t, rd, seed, "auto")
		checkReaderValue(t, rd, data, "auto")
	})
}

// TestReaderRelease checks that a released Reader refers to nothing of
// the trace it read (records, calls, result) and reads the next trace as
// a new Reader does.
func TestReaderRelease(t *testing.T) {
	rd := NewReader()
	data := []byte(`{"messages": [{"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "sunny"}]}`)
	if _, err := rd.Parse(data, "auto"); err != nil {
		t.Fatal(err)
	}
	if len(rd.in.recs) == 0 || len(rd.b.calls) == 0 {
		t.Fatalf("the trace read %d records and %d calls, want some of each", len(rd.in.recs), len(rd.b.calls))
	}
	rd.Release()
	for i, v := range rd.in.recs[:cap(rd.in.recs)] {
		if v.Exists() {
			t.Errorf("record %d is still held after Release", i)
		}
	}
	for i, c := range rd.b.calls[:cap(rd.b.calls)] {
		if c.Tool != "" || c.Args.Exists() {
			t.Errorf("call %d (%q) is still held after Release", i, c.Tool)
		}
	}
	if rd.out.Trace.Calls != nil || rd.out.Format != "" || rd.in.value.Exists() {
		t.Errorf("the result or the document is still held after Release: %+v", rd.out)
	}
	checkReader(t, rd, data, "auto")
	checkReaderValue(t, rd, data, "auto")
}
