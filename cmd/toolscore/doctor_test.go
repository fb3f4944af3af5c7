package main

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDoctorWarnings: what a valid contract or gold file holds that can
// never do what its author meant is a warning on stderr, one per line
// with its JSON pointer and line:column; the file is still valid (exit
// status 0, the description on stdout).
func TestDoctorWarnings(t *testing.T) {
	const goldStdout = `<stdin>: valid gold file
Required      0
Optional      0
Forbidden     0
Combinations  1
Min score     0.9 (default)
`
	contract := `{
  "contract_version": 2,
  "required": [
    {"tool": "search", "args": {"q": {"$one_of": []}, "r": [{"$contains": {"$one_of": []}}], "s": {"$one_of": [{"$one_of": []}, 1]}, "t": {"$one_of": [1]}}},
    {"id": "book", "alternatives": [[{"tool": "book", "args": {"x": {"$one_of": []}}}]]},
    {"id": "pick", "alternatives": [{"tool": "a"}, {"tool": "b"}]}
  ],
  "alternatives": [{"alternatives": [{"tool": "pay"}]}, {"id": 3, "alternatives": [{"tool": "c"}]}],
  "optional": [{"tool": "w", "args": {"c": {"$one_of": []}}}],
  "forbidden": [{"tool": "rm\ud83d\ude00", "args": {"c": {"$one_of": []}}}]
}`
	for _, tc := range []struct {
		name, stdin    string
		stdout, stderr string
	}{
		// An empty gold file grades every trace: one without calls at
		// 100%, any other at 0% (TestDoctorEmptyGoldScores).
		{"empty gold list", " []\n", goldStdout,
			"toolscore: <stdin>: warning: /: gold file with no expected calls at line 1:2: it expects nothing, so a trace without calls scores 100% and any call makes it 0% with the default weights (every call is extra)\n"},
		{"empty gold calls", "{\n  \"calls\": []\n}\n", goldStdout,
			"toolscore: <stdin>: warning: /calls: gold file with no expected calls at line 2:12: it expects nothing, so a trace without calls scores 100% and any call makes it 0% with the default weights (every call is extra)\n"},
		// The place of an invalid byte or a lone surrogate is its own,
		// inside the name; a surrogate pair (the forbidden rule's 😀
		// above) is fine.
		{"gold tool names and $one_of", "[\n {\"tool\": \"a\xffb\", \"args\": {\"q\": {\"$one_of\": []}}},\n {\"tool\": \"xy\\ud800\\u0041\"},\n {\"tool\": \"\\udc00\"}\n]\n",
			"<stdin>: valid gold file\nRequired      3\nOptional      0\nForbidden     0\nCombinations  1\nMin score     0.9 (default)\n",
			"toolscore: <stdin>: warning: /0/tool: tool name with invalid UTF-8 (byte 0xff) at line 2:13: it reads as U+FFFD (as encoding/json reads it), so it matches a trace's tool name with U+FFFD or any invalid UTF-8 there\n" +
				"toolscore: <stdin>: warning: /0/args/q/$one_of: $one_of with no candidates at line 2:44: it matches no value, so the expected call's arguments never match\n" +
				`toolscore: <stdin>: warning: /1/tool: tool name with a lone surrogate (\ud800) at line 3:14: it reads as U+FFFD (as encoding/json reads it), so it matches a trace's tool name with U+FFFD or any invalid UTF-8 there` + "\n" +
				`toolscore: <stdin>: warning: /2/tool: tool name with a lone surrogate (\udc00) at line 4:12: it reads as U+FFFD (as encoding/json reads it), so it matches a trace's tool name with U+FFFD or any invalid UTF-8 there` + "\n"},
		{"contract", contract, `<stdin>: valid contract v2
Required      3 (4 alternatives groups)
Optional      1
Forbidden     1
Combinations  2
Min score     0.9 (default)

Alternatives book (group 0): 1 option
  [0] book

Alternatives pick (group 1): 2 options
  [0] a
  [1] b

Alternatives group 2: 1 option
  [0] pay

Alternatives 3 (group 3): 1 option
  [0] c

Forbidden
  rm😀
`, "" +
			"toolscore: <stdin>: warning: /required/0/args/q/$one_of: $one_of with no candidates at line 4:50: it matches no value, so the expected call's arguments never match\n" +
			"toolscore: <stdin>: warning: /required/0/args/r/0/$contains/$one_of: $one_of with no candidates at line 4:87: it matches no value, so the expected call's arguments never match\n" +
			"toolscore: <stdin>: warning: /required/0/args/s/$one_of/0/$one_of: $one_of with no candidates at line 4:124: it matches no value, a candidate that never counts\n" +
			"toolscore: <stdin>: warning: /required/1/alternatives: alternatives group \"book\" with one option at line 5:36: it is no choice, its calls are simply required steps\n" +
			"toolscore: <stdin>: warning: /required/1/alternatives/0/0/args/x/$one_of: $one_of with no candidates at line 5:81: it matches no value, so the expected call's arguments never match\n" +
			"toolscore: <stdin>: warning: /alternatives/0/alternatives: alternatives group with one option at line 8:37: it is no choice, its calls are simply required steps\n" +
			"toolscore: <stdin>: warning: /alternatives/1/alternatives: alternatives group 3 with one option at line 8:83: it is no choice, its calls are simply required steps\n" +
			"toolscore: <stdin>: warning: /optional/0/args/c/$one_of: $one_of with no candidates at line 9:56: it matches no value, so the optional entry never matches: a call of it is never left out of the score\n" +
			"toolscore: <stdin>: warning: /forbidden/0/args/c/$one_of: $one_of with no candidates at line 10:70: it matches no value, so the rule never applies\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, tc.stdin, "doctor", "--contract", "-")
			want := result{code: exitOK, stdout: tc.stdout, stderr: tc.stderr}
			if diff := cmp.Diff(want, r, cmp.AllowUnexported(result{})); diff != "" {
				t.Errorf("doctor --contract - (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDoctorEmptyGoldScores pins what the empty gold file's warning
// says: a trace without calls scores 100% (within rounding), one with
// calls 0%.
func TestDoctorEmptyGoldScores(t *testing.T) {
	gold := writeFile(t, "gold.json", "[]")
	for _, tc := range []struct {
		trace string
		score float64
	}{
		{"[]", 1},
		{`[{"tool": "a", "args": {"x": 1}}]`, 0},
		{`[{"tool": "a"}, {"tool": "b"}, {"tool": "a"}]`, 0},
	} {
		r := runCLI(t, tc.trace, "eval", "--json", gold, "-")
		var got struct{ Score float64 }
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("eval %s: %v\n%s", tc.trace, err, r.stderr)
		}
		if math.Abs(got.Score-tc.score) > 1e-9 {
			t.Errorf("eval [] %s: score %v, want %v", tc.trace, got.Score, tc.score)
		}
	}
}
