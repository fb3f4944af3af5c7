package format

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// embedded returns data as the "trace" member of a larger document, as an
// API request carries it, read with jsondoc; ok is false when data is not
// one JSON value.
func embedded(data []byte) (jsondoc.Value, bool) {
	if !jsondoc.Valid(string(data)) {
		return jsondoc.Value{}, false
	}
	doc := `{"contract":{"required":[]},"trace":` + string(data) + `,"task_id":"t"}`
	v, err := jsondoc.ParseString(doc)
	if err != nil {
		return jsondoc.Value{}, false
	}
	return v.Get("trace"), true
}

// checkParseValue checks that ParseValue on data embedded in a larger
// document gives exactly what Parse gives on data alone: the same trace,
// format, reason and form, or the same error text.
func checkParseValue(t *testing.T, data []byte, name string) {
	t.Helper()
	v, ok := embedded(data)
	if !ok {
		return
	}
	want, werr := Parse(data, name)
	got, gerr := ParseValue(v, name)
	checkSameParsed(t, data, name, "ParseValue", want, werr, got, gerr)
}

// checkSameParsed fails the test unless got and gerr (from the function
// named fn) are what Parse gave on data: the same error text, or the same
// Parsed (format, reason, form, warning and trace) compared as JSON.
func checkSameParsed(t *testing.T, data []byte, name, fn string, want *Parsed, werr error, got *Parsed, gerr error) {
	t.Helper()
	if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
		t.Fatalf("%q as %s: Parse error %v, %s error %v", data, name, werr, fn, gerr)
	}
	if werr != nil {
		return
	}
	wj, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	gj, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(wj) != string(gj) {
		t.Fatalf("%q as %s:\nParse: %s\n%s: %s", data, name, wj, fn, gj)
	}
}

// TestParseValue compares ParseValue with Parse on every example trace
// that is one JSON value, detected and forced to every format (so the
// errors of traces that do not fit are compared too).
func TestParseValue(t *testing.T) {
	var files []string
	err := filepath.WalkDir("testdata", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(path) != ".golden" {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	names := append([]string{"auto", "custom"}, Names()...)
	compared := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := embedded(data); !ok {
			continue
		}
		compared++
		for _, name := range names {
			t.Run(file+"/"+name, func(t *testing.T) { checkParseValue(t, data, name) })
		}
	}
	if compared < 100 {
		t.Errorf("compared %d example traces, want at least 100", compared)
	}
	// The unknown format is refused alike.
	v, _ := embedded([]byte(`[]`))
	if _, err := ParseValue(v, "nope"); err == nil || err.Error() != `invalid trace: unknown format "nope" (known: auto, `+joinNames()+`)` {
		t.Errorf("ParseValue(nope) = %v", err)
	}
}

func joinNames() string {
	s := ""
	for i, n := range Names() {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}

// FuzzParseValue compares ParseValue with Parse (checkParseValue) on any
// input, detected.
func FuzzParseValue(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { checkParseValue(t, data, "auto") })
}
