package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBatchNoTraces: trace files holding no line to grade (empty, or
// blank lines only) are one error naming them, without the summary of
// zero traces, as text and with --json.
func TestBatchNoTraces(t *testing.T) {
	gold := writeFile(t, "gold.json", `[{"tool": "a"}]`)
	empty := writeFile(t, "empty.jsonl", "")
	blank := writeFile(t, "blank.jsonl", "\n  \n")
	blank2 := writeFile(t, "blank2.jsonl", "\n")
	for _, tc := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"one empty file", []string{"eval", "--each-line", gold, empty}, "toolscore: no traces to grade: " + empty + " holds none\n"},
		{"json", []string{"eval", "--each-line", "--json", gold, blank}, "toolscore: no traces to grade: " + blank + " holds none\n"},
		{"many", []string{"eval", "--each-line", gold, empty, blank, blank2}, "toolscore: no traces to grade: " + empty + ", " + blank + " and " + blank2 + " hold none\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBatchCLI(t, "", tc.args...)
			want := result{code: exitError, stderr: tc.stderr}
			if diff := cmp.Diff(want, r, cmp.AllowUnexported(result{})); diff != "" {
				t.Errorf("toolscore %v (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}
