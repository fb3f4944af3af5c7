package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// TestLightDocRead checks that lightDoc.read, reading a saved result
// from its jsondoc tree, reads what json.Unmarshal decodes from its
// text, or declines (and ReadBatchBaseline decodes it): for saved
// results of a contract and of a gold file, and for every variant of
// them with one value replaced by a value of another type, with one key
// in capitals, and with one member repeated before itself with another
// value.
func TestLightDocRead(t *testing.T) {
	var lines []string
	for _, tc := range []struct{ contract, trace string }{
		{contractFile, goodTrace}, {contractFile, unsafeTrace}, {"examples/contracts/gold.json", goodTrace},
	} {
		_, _, res := grade(t, tc.contract, tc.trace)
		line, err := AppendSaved(nil, Header{Source: "runs/a.json"}, res)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(line))
	}
	replacements := []string{`"x"`, `1`, `-0.5`, `1e400`, `true`, `null`, `{}`, `[]`, `[null]`, `[{}]`, `{"tool": 1}`, `[{"name": 1}]`}
	read, declined := 0, 0
	try := func(text string) {
		t.Helper()
		root, err := jsondoc.ParseString(text)
		if err != nil {
			t.Fatalf("%v in %s", err, text)
		}
		var fast, want lightDoc
		ok := fast.read(root)
		if !ok {
			declined++
			return
		}
		read++
		if err := json.Unmarshal([]byte(text), &want); err != nil {
			t.Errorf("read %s, json.Unmarshal: %v", text, err)
			return
		}
		if diff := cmp.Diff(want, fast); diff != "" {
			t.Errorf("read %s (-json.Unmarshal +read):\n%s", text, diff)
		}
	}
	for _, line := range lines {
		var fast lightDoc
		if root, _ := jsondoc.ParseString(line); !fast.read(root) {
			t.Fatalf("declined the saved result %s", line)
		}
		root, _ := jsondoc.ParseString(line)
		var w jsondoc.Walker
		w.Reset(root)
		for step := w.Next(); step != jsondoc.StepDone; step = w.Next() {
			x := w.Value()
			off, end := x.Offset(), x.Offset()+len(x.Raw())
			switch step {
			case jsondoc.StepValue:
				for _, r := range replacements {
					try(line[:off] + r + line[end:])
				}
			case jsondoc.StepKey:
				try(line[:off] + strings.ToUpper(x.Raw()) + line[end:])
				try(line[:off] + x.Raw() + `: "x", ` + line[off:])
			}
		}
	}
	if read == 0 || declined == 0 {
		t.Errorf("read %d variants, declined %d", read, declined)
	}
	t.Logf("read %d variants, declined %d", read, declined)
}
