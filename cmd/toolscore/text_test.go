package main

import (
	"strings"
	"testing"
)

// TestTextOutputControlCharacters runs the human outputs on a trace whose
// tool name, arguments and result hold line breaks, a carriage return
// and terminal escape sequences: every line of the output is one the
// command wrote (none starts with the trace's "::", which a CI log reads
// as a workflow command), and no control character but the line feed
// gets through, escaped as in Go (\x1b, \a, \r).
func TestTextOutputControlCharacters(t *testing.T) {
	// (Many traces: the summary names no tool but its top issue.)
	trace := writeFile(t, "hostile.json", `[{"tool": "a\n::warning::w\r\u001b]0;title\u0007\u001b[2J", "args": {"q": "x\n::error::e\u001b[8m"}, "result": "r\n::notice::n"}]`)
	for _, args := range [][]string{
		{"eval", example("contract.json"), trace},
		{"eval", example("contract.json"), trace, trace},
		{"inspect", trace},
	} {
		r := runCLI(t, "", args...)
		if r.stdout == "" {
			t.Fatalf("%v: no output; stderr %q", args, r.stderr)
		}
		for _, l := range strings.Split(r.stdout, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "::") {
				t.Errorf("%v: a line from the trace: %q", args, l)
			}
		}
		if i := strings.IndexFunc(r.stdout, func(c rune) bool { return c < 0x20 && c != '\n' || c == 0x7f }); i >= 0 {
			t.Errorf("%v: control character %q in the output:\n%s", args, r.stdout[i], r.stdout)
		}
		if len(args) == 3 && !strings.Contains(r.stdout, `a⏎::warning::w⏎\x1b]0;title\a\x1b[2J`) {
			t.Errorf("%v: the tool name is not shown escaped:\n%s", args, r.stdout)
		}
	}
}

// TestTextWriterColor checks that on a terminal the colours toolscore
// writes stay, and every other escape sequence is shown escaped.
func TestTextWriterColor(t *testing.T) {
	var b strings.Builder
	w := textWriter{w: &b, color: true}
	if _, err := w.Write([]byte("\x1b[1;31mFAIL\x1b[0m \x1b]0;t\x07 \x1b[2J \x1b[8m\n")); err != nil {
		t.Fatal(err)
	}
	if want := "\x1b[1;31mFAIL\x1b[0m \\x1b]0;t\\a \\x1b[2J \\x1b[8m\n"; b.String() != want {
		t.Errorf("%q, want %q", b.String(), want)
	}
}

// TestFmtDelta: a change of score carries its sign, and one that rounds
// to none is "+0.000", never "-0.000".
func TestFmtDelta(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0.5, "+0.500"}, {-0.125, "-0.125"}, {0, "+0.000"}, {-1.1102230246251565e-16, "+0.000"}, {-0.0004, "+0.000"}, {-0.0006, "-0.001"},
	} {
		if got := fmtDelta(tc.v); got != tc.want {
			t.Errorf("fmtDelta(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
