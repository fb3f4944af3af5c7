package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/engine/format"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestMain lets a test run the real main (with os.Exit) in a child
// process: the child is this test binary with TOOLSCORE_TEST_MAIN=1.
func TestMain(m *testing.M) {
	if os.Getenv("TOOLSCORE_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// result is what one in-process run of the CLI produced.
type result struct {
	code           int
	stdout, stderr string
}

// runCLI runs toolscore with args in-process, stdin reading stdin.
func runCLI(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(t.Context(), args, stdio{in: strings.NewReader(stdin), out: &out, err: &errb})
	return result{code, out.String(), errb.String()}
}

// example is the path of a file of examples/contracts.
func example(name string) string { return filepath.Join("..", "..", "examples", "contracts", name) }

// writeFile writes content to name in a fresh temporary directory and
// returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// compareGolden compares got with testdata/name.golden, rewriting the file
// under -update.
func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/toolscore -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("output differs from %s (-want +got; -update rewrites it):\n%s", path, diff)
	}
}

// TestGolden runs every command on examples/contracts and compares stdout
// with testdata/*.golden.
func TestGolden(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		stdinFile string // read as standard input when set
		color     bool
		code      int
	}{
		{name: "eval_contract", args: []string{"eval", example("contract.json"), example("trace.json")}, code: exitOK},
		{name: "eval_contract_color", args: []string{"eval", example("contract.json"), example("trace.json")}, color: true, code: exitOK},
		{name: "eval_gold", args: []string{"eval", example("gold.json"), example("trace.json")}, code: exitFail},
		{name: "eval_contract_json", args: []string{"eval", "--json", example("contract.json"), example("trace.json")}, code: exitOK},
		{name: "eval_gold_json", args: []string{"eval", "--json", example("gold.json"), example("trace.json")}, code: exitFail},
		{name: "eval_forbidden", args: []string{"eval", "--forbidden", "get_weather=weather is not needed", example("contract.json"), example("trace.json")}, code: exitFail},
		{name: "eval_no_safety_gate", args: []string{"eval", "--no-safety-gate", "--forbidden", "get_weather", example("contract.json"), example("trace.json")}, code: exitOK},
		{name: "eval_unsafe", args: []string{"eval", "--min-score", "0.5", "--final-answer", "Booked FL-204, confirmation ZX-9911.", example("contract.json"), filepath.Join("testdata", "unsafe-trace.json")}, code: exitFail},
		{name: "eval_unsafe_color", args: []string{"eval", "--min-score", "0.5", example("contract.json"), filepath.Join("testdata", "unsafe-trace.json")}, color: true, code: exitFail},
		{name: "eval_gold_stdin", args: []string{"eval", example("gold.json"), "-"}, stdinFile: example("trace.json"), code: exitFail},
		{name: "doctor_contract", args: []string{"doctor", "--contract", example("contract.json")}, code: exitOK},
		{name: "doctor_gold", args: []string{"doctor", "--contract", example("gold.json")}, code: exitOK},
		{name: "inspect_trace", args: []string{"inspect", example("trace.json")}, code: exitOK},
		{name: "inspect_trace_json", args: []string{"inspect", "--json", example("trace.json")}, code: exitOK},
		{name: "inspect_openai_bad_args", args: []string{"inspect", filepath.Join("testdata", "openai-bad-args.json")}, code: exitOK},
		{name: "inspect_openai_bad_args_json", args: []string{"inspect", "--json", filepath.Join("testdata", "openai-bad-args.json")}, code: exitOK},
		{name: "inspect_anthropic_error", args: []string{"inspect", filepath.Join("testdata", "anthropic-error.json")}, code: exitOK},
		{name: "inspect_anthropic_error_json", args: []string{"inspect", "--format", "anthropic", "--json", filepath.Join("testdata", "anthropic-error.json")}, code: exitOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdin []byte
			if tc.stdinFile != "" {
				var err error
				if stdin, err = os.ReadFile(tc.stdinFile); err != nil {
					t.Fatal(err)
				}
			}
			var out, errb bytes.Buffer
			code := run(t.Context(), tc.args, stdio{in: bytes.NewReader(stdin), out: &out, err: &errb, color: tc.color})
			if code != tc.code || errb.Len() > 0 {
				t.Errorf("toolscore %s: exit %d, stderr %q; want exit %d, no stderr", strings.Join(tc.args, " "), code, errb.String(), tc.code)
			}
			if got := strings.Contains(out.String(), "\x1b["); got != tc.color {
				t.Errorf("toolscore %s: ANSI colours = %v, want %v", strings.Join(tc.args, " "), got, tc.color)
			}
			compareGolden(t, tc.name, out.String())
		})
	}
}

// TestEvalSeedExample checks the figures SPEC section 4 gives for the seed
// example, independently of the golden files.
func TestEvalSeedExample(t *testing.T) {
	// Contract weights {"required_call_recall": 0.3} merged over the
	// defaults sum to 1.3. reserve_seat: selection 1, argument F1 6/7
	// (precision 3/4: the extra seat argument), sequence 1, no redundancy,
	// recall 1. book_flight: selection 1/2, F1 0.8, sequence 1/2,
	// redundant rate 1/2, recall 1/2.
	reserve := (0.4 + 0.3*6.0/7 + 0.2 + 0.1 + 0.3) / 1.3
	book := (0.4*0.5 + 0.3*0.8 + 0.2*0.5 + 0.1*0.5 + 0.3*0.5) / 1.3
	// Gold: selection 1/3, F1 1/2 (date unexpected, book_flight missing),
	// sequence 1/3, redundant rate 2/3.
	gold := 0.4/3 + 0.3*0.5 + 0.2/3 + 0.1/3

	type combo struct {
		Options []int   `json:"options"`
		Score   float64 `json:"score"`
	}
	type out struct {
		Score   float64 `json:"score"`
		Grade   string  `json:"grade"`
		Passed  bool    `json:"passed"`
		Metrics struct {
			Contract *struct {
				Alternatives struct {
					Chosen []struct {
						Group  any `json:"group"`
						Option int `json:"option"`
					} `json:"chosen"`
					Combinations []combo `json:"combinations"`
				} `json:"alternatives"`
				OptionalMatched []int `json:"optional_matched"`
			} `json:"contract_metrics"`
		} `json:"metrics"`
		Issues []struct {
			Tool    string `json:"tool"`
			Problem string `json:"problem"`
		} `json:"issues"`
		Checks struct {
			Pass, Fail, Unknown int
		} `json:"checks"`
	}
	decode := func(t *testing.T, r result) out {
		t.Helper()
		var o out
		if err := json.Unmarshal([]byte(r.stdout), &o); err != nil {
			t.Fatalf("stdout is not one JSON document: %v\n%s", err, r.stdout)
		}
		return o
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

	t.Run("contract", func(t *testing.T) {
		r := runCLI(t, "", "eval", "--json", example("contract.json"), example("trace.json"))
		if r.code != exitOK || r.stderr != "" {
			t.Fatalf("exit %d, stderr %q; want 0 and none", r.code, r.stderr)
		}
		o := decode(t, r)
		if !near(o.Score, reserve) || o.Grade != "A" || !o.Passed {
			t.Errorf("score, grade, passed = %v, %s, %v; want %v, A, true", o.Score, o.Grade, o.Passed, reserve)
		}
		cm := o.Metrics.Contract
		if cm == nil {
			t.Fatal("no contract_metrics")
		}
		if got := cm.Alternatives.Combinations; len(got) != 2 || !near(got[0].Score, book) || !near(got[1].Score, reserve) {
			t.Errorf("combinations = %+v; want [0] %v, [1] %v", got, book, reserve)
		}
		if ch := cm.Alternatives.Chosen; len(ch) != 1 || ch[0].Group != "book" || ch[0].Option != 1 {
			t.Errorf("chosen = %+v; want group book, option 1 (reserve_seat)", ch)
		}
		if diff := cmp.Diff([]int{1}, cm.OptionalMatched); diff != "" {
			t.Errorf("optional_matched (-want +got):\n%s", diff)
		}
		if len(o.Issues) == 0 || o.Issues[0].Tool != "reserve_seat" || !strings.Contains(o.Issues[0].Problem, "seat") {
			t.Errorf("first issue = %+v; want reserve_seat's unexpected seat argument", o.Issues)
		}
		if o.Checks.Fail != 0 {
			t.Errorf("checks = %+v; want no failure", o.Checks)
		}
	})
	t.Run("contract default weights", func(t *testing.T) {
		// SPEC section 4: 0.957 and 0.590 with the default weights; giving
		// required_call_recall=0 restores them.
		r := runCLI(t, "", "eval", "--json", "--weights", "required_call_recall=0", example("contract.json"), example("trace.json"))
		o := decode(t, r)
		if r.code != exitOK || !near(o.Score, 0.4+0.3*6.0/7+0.2+0.1) {
			t.Errorf("exit %d, score %v; want 0, %v", r.code, o.Score, 0.4+0.3*6.0/7+0.2+0.1)
		}
		if got := o.Metrics.Contract.Alternatives.Combinations; len(got) != 2 || !near(got[0].Score, 0.59) {
			t.Errorf("combinations = %+v; want book_flight 0.59", got)
		}
	})
	t.Run("gold", func(t *testing.T) {
		r := runCLI(t, "", "eval", "--json", example("gold.json"), example("trace.json"))
		if r.code != exitFail || r.stderr != "" {
			t.Fatalf("exit %d, stderr %q; want 1 and none", r.code, r.stderr)
		}
		o := decode(t, r)
		if !near(o.Score, gold) || o.Grade != "F" || o.Passed {
			t.Errorf("score, grade, passed = %v, %s, %v; want %v, F, false", o.Score, o.Grade, o.Passed, gold)
		}
		if o.Metrics.Contract != nil {
			t.Error("a gold file has contract_metrics")
		}
	})
	t.Run("human", func(t *testing.T) {
		for _, tc := range []struct {
			exp, box string
			code     int
		}{
			{"contract.json", "│ Grade A   PASS (96.7%) │\n", exitOK},
			{"gold.json", "│ Grade F   FAIL (38.3%) │\n", exitFail},
		} {
			r := runCLI(t, "", "eval", example(tc.exp), example("trace.json"))
			if r.code != tc.code || !strings.Contains(r.stdout, tc.box) {
				t.Errorf("eval %s: exit %d, stdout:\n%s\nwant exit %d and %q", tc.exp, r.code, r.stdout, tc.code, tc.box)
			}
		}
	})
}

// TestEvalFlags checks that each flag reaches the evaluation.
func TestEvalFlags(t *testing.T) {
	trace := example("trace.json")
	contract := example("contract.json")
	stdinTrace := `[{"tool": "search_flights", "args": {"destination": "LIS", "date": "2026-12-18"}},
		{"tool": "reserve_seat", "args": {"flight_id": "FL-204"}}]`
	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
		// check inspects the decoded --json result.
		check func(t *testing.T, m map[string]any)
	}{
		{
			name: "min score above the score fails",
			args: []string{"--min-score", "0.99", contract, trace},
			code: exitFail,
			check: func(t *testing.T, m map[string]any) {
				if m["min_score"] != 0.99 || m["passed"] != false {
					t.Errorf("min_score, passed = %v, %v; want 0.99, false", m["min_score"], m["passed"])
				}
			},
		},
		{
			name: "min score 0 passes the gold file",
			args: []string{"--min-score", "0", example("gold.json"), trace},
			code: exitOK,
		},
		{
			name: "final answer overrides the trace's",
			args: []string{"--final-answer", "Booked FL-999.", contract, trace},
			code: exitOK,
			check: func(t *testing.T, m map[string]any) {
				if m["final_answer"] != "Booked FL-999." {
					t.Errorf("final_answer = %v; want Booked FL-999.", m["final_answer"])
				}
			},
		},
		{
			name: "forbidden rule fails through the safety gate",
			args: []string{"--forbidden", "get_weather=no small talk", contract, trace},
			code: exitFail,
			check: func(t *testing.T, m map[string]any) {
				if m["grade"] != "A" || m["passed"] != false || m["safety_gate"] != true {
					t.Errorf("grade, passed, safety_gate = %v, %v, %v; want A, false, true", m["grade"], m["passed"], m["safety_gate"])
				}
			},
		},
		{
			name: "no safety gate",
			args: []string{"--no-safety-gate", "--forbidden", "get_weather", contract, trace},
			code: exitOK,
			check: func(t *testing.T, m map[string]any) {
				if m["safety_gate"] != false {
					t.Errorf("safety_gate = %v; want false", m["safety_gate"])
				}
			},
		},
		{
			name:  "trace on stdin with a forced format",
			stdin: stdinTrace,
			args:  []string{"--format", "plain", contract, "-"},
			code:  exitOK,
			check: func(t *testing.T, m map[string]any) {
				if got := len(m["trace_calls"].([]any)); got != 2 {
					t.Errorf("trace_calls has %d calls; want 2", got)
				}
			},
		},
		{
			name: "strict",
			stdin: `[{"tool": "search_flights", "args": {"destination": " LIS", "date": "2026-12-18"}},
				{"tool": "book_flight", "args": {"flight_id": "FL-204"}}]`,
			args: []string{"--strict", contract, "-"},
			code: exitFail,
			check: func(t *testing.T, m map[string]any) {
				// " LIS" equals "LIS" only when trimmed (lenient).
				f1 := m["metrics"].(map[string]any)["argument_metrics"].(map[string]any)["f1"].(float64)
				if math.Abs(f1-2.0/3) > 1e-9 {
					t.Errorf("argument f1 = %v; want 2/3 (destination differs strictly)", f1)
				}
			},
		},
		{
			name: "weights",
			args: []string{"--weights", "selection_accuracy=1,argument_f1=0", "--weights", "sequence_accuracy=0,redundant_rate=0,required_call_recall=0", contract, trace},
			code: exitOK,
			check: func(t *testing.T, m map[string]any) {
				if m["score"] != 1.0 {
					t.Errorf("score = %v; want 1 (selection accuracy alone)", m["score"])
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"eval", "--json"}, tc.args...)
			r := runCLI(t, tc.stdin, args...)
			if r.code != tc.code || r.stderr != "" {
				t.Fatalf("toolscore %s: exit %d, stderr %q; want exit %d, no stderr", strings.Join(args, " "), r.code, r.stderr, tc.code)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
				t.Fatalf("stdout is not one JSON document: %v", err)
			}
			if tc.check != nil {
				tc.check(t, m)
			}
		})
	}
}

// TestBadInput checks every kind of bad input of issue 2: exit status 2,
// nothing on stdout, and one exact line on stderr naming the place.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	path := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	contract := example("contract.json")
	trace := example("trace.json")
	missing := filepath.Join(dir, "missing.json")
	empty := path("empty.json", " \n\t\n")
	badJSON := path("bad.json", "{\n  \"contract_version\": 2,\n  \"required\": [,]\n}\n")
	emptyGroup := path("empty-group.json", `{"contract_version": 2, "required": [{"tool": "a"}, {"alternatives": []}]}`)
	badRegex := path("bad-regex.json", `{"contract_version": 2, "required": [{"tool": "a", "args": {"q": {"$regex": "("}}}]}`)
	wrongShape := path("wrong-shape.json", `"just a string"`)
	unknownFormat := path("unknown.json", `{"hello": "world"}`)
	wrongName := path("wrong-name.json", `[{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":5,"arguments":"{}"}}]}]`)
	badTrace := path("bad-trace.json", "[{\"tool\": \"a\"}\n")
	negativeContract := path("negative.json", `{"contract_version": 2, "required": [{"tool": "a"}], "weights": {"argument_f1": -1}}`)
	// Control characters from a trace stay on the error's one line: a
	// CI log would read a line starting with :: as a workflow command.
	// A second "forbidden" used to replace the first (QA turned a FAIL
	// into a PASS so); a gold call's second "args" would too.
	repeatedForbidden := path("repeated-forbidden.json", "{\n  \"contract_version\": 2,\n  \"required\": [{\"tool\": \"a\"}],\n  \"forbidden\": [{\"tool\": \"rm\"}],\n  \"forbidden\": []\n}\n")
	hostileKeys := path("hostile-keys.json", `{"x\n::error title=t::injected\r\n\u001b]0;title\u0007": 1}`)

	tests := []struct {
		name   string
		stdin  string
		args   []string
		stderr string
	}{
		{"missing expectation", "", []string{"eval", missing, trace},
			missing + ": no such file or directory\n"},
		{"missing trace", "", []string{"eval", contract, missing},
			missing + ": no such file or directory\n"},
		{"directory", "", []string{"eval", dir, trace},
			dir + ": is a directory\n"},
		{"empty expectation", "", []string{"eval", empty, trace},
			empty + ": file is empty\n"},
		{"empty trace", "", []string{"eval", contract, empty},
			empty + ": file is empty\n"},
		{"empty stdin", "  \n", []string{"eval", contract, "-"},
			"<stdin>: file is empty\n"},
		{"invalid JSON contract", "", []string{"eval", badJSON, trace},
			badJSON + ": line 3:16: invalid character ',' looking for beginning of value (at /required/0)\n"},
		{"invalid JSON trace", "", []string{"eval", contract, badTrace},
			badTrace + ": line 2:1: unexpected end of JSON input\n"},
		{"empty alternatives group", "", []string{"eval", emptyGroup, trace},
			emptyGroup + ": /required/1/alternatives: an alternatives group needs at least one option\n"},
		{"regex that does not compile", "", []string{"eval", badRegex, trace},
			badRegex + ": /required/0/args/q/$regex: regex does not compile: error parsing regexp: missing closing ): `(`\n"},
		{"wrong shape", "", []string{"eval", wrongShape, trace},
			wrongShape + ": /: expected a JSON array (gold file) or object (contract), got a string\n"},
		{"negative weight in the contract", "", []string{"eval", negativeContract, trace},
			negativeContract + ": /weights/argument_f1: must be >= 0 but found -1\n"},
		{"repeated key in a contract", "", []string{"eval", repeatedForbidden, trace},
			repeatedForbidden + `: /forbidden: repeated key "forbidden" at line 5:3 (first at line 4:3): a contract must not repeat a key` + "\n"},
		{"doctor repeated key", "", []string{"doctor", "--contract", repeatedForbidden},
			repeatedForbidden + `: /forbidden: repeated key "forbidden" at line 5:3 (first at line 4:3): a contract must not repeat a key` + "\n"},
		{"unknown format", "", []string{"eval", contract, unknownFormat},
			unknownFormat + ": invalid trace: no known format fits the document (a JSON object with keys hello) (tried " + strings.Join(format.Names(), ", ") + ")\n"},
		{"control characters in the trace", "", []string{"eval", contract, hostileKeys},
			hostileKeys + `: invalid trace: no known format fits the document (a JSON object with keys x\n::error title=t::injected\r\n\x1b]0;title\a) (tried ` + strings.Join(format.Names(), ", ") + ")\n"},
		{"unknown --format", "", []string{"eval", "--format", "xml", contract, trace},
			"--format: unknown format \"xml\" (valid: " + formatList() + ")\n"},
		{"forced format that does not fit", "", []string{"eval", "--format", "plain", contract, trace},
			trace + ": invalid trace: plain: /0: the call has no \"tool\"\n"},
		{"unknown weight", "", []string{"eval", "--weights", "speed=1", contract, trace},
			"--weights: unknown weight \"speed\" (valid: selection_accuracy, argument_f1, sequence_accuracy, redundant_rate, required_call_recall)\n"},
		{"negative weight", "", []string{"eval", "--weights", "argument_f1=-0.5", contract, trace},
			"--weights: argument_f1: weight must not be negative, got -0.5\n"},
		{"non-finite weight", "", []string{"eval", "--weights", "argument_f1=NaN", contract, trace},
			"--weights: argument_f1: \"NaN\" is not a decimal number\n"},
		{"weight not a number", "", []string{"eval", "--weights", "argument_f1=high", contract, trace},
			"--weights: argument_f1: \"high\" is not a decimal number\n"},
		{"weight out of range", "", []string{"eval", "--weights", "argument_f1=1e400", contract, trace},
			"--weights: argument_f1: \"1e400\" is out of range\n"},
		{"hex float min score", "", []string{"eval", "--min-score", "0x1p-1", contract, trace},
			"--min-score: must be a number in [0,1], got \"0x1p-1\"\n"},
		{"weight not name=value", "", []string{"eval", "--weights", "argument_f1", contract, trace},
			"--weights: \"argument_f1\" is not name=value\n"},
		{"weight given twice", "", []string{"eval", "--weights", "argument_f1=1,argument_f1=2", contract, trace},
			"--weights: argument_f1 given twice\n"},
		{"all weights zero", "", []string{"eval", "--weights", "selection_accuracy=0,argument_f1=0,sequence_accuracy=0,redundant_rate=0,required_call_recall=0", contract, trace},
			"--weights: weights must not all be zero\n"},
		{"min score above 1", "", []string{"eval", "--min-score", "1.5", contract, trace},
			"--min-score: must be a number in [0,1], got \"1.5\"\n"},
		{"min score below 0", "", []string{"eval", "--min-score", "-0.1", contract, trace},
			"--min-score: must be a number in [0,1], got \"-0.1\"\n"},
		{"min score not a number", "", []string{"eval", "--min-score", "NaN", contract, trace},
			"--min-score: must be a number in [0,1], got \"NaN\"\n"},
		{"forbidden without a tool", "", []string{"eval", "--forbidden", "=why", contract, trace},
			"--forbidden: no tool name in \"=why\" (want TOOL or TOOL=reason)\n"},
		{"both on stdin", "[]", []string{"eval", "-", "-"},
			"only one of EXPECTATION and TRACE can be - (standard input)\n"},
		{"doctor missing file", "", []string{"doctor", "--contract", missing},
			missing + ": no such file or directory\n"},
		{"doctor without --contract", "", []string{"doctor"},
			"doctor needs --contract FILE or --suite FILE\n"},
		{"wrong-typed tool name", "", []string{"eval", contract, wrongName},
			wrongName + ": invalid trace: openai: /0/tool_calls/0/function/name: name must be a string, not a number\n"},
		{"inspect wrong-typed tool name", "", []string{"inspect", wrongName},
			wrongName + ": invalid trace: openai: /0/tool_calls/0/function/name: name must be a string, not a number\n"},
		{"inspect unknown format", "", []string{"inspect", unknownFormat},
			unknownFormat + ": invalid trace: no known format fits the document (a JSON object with keys hello) (tried " + strings.Join(format.Names(), ", ") + ")\n"},
		{"inspect unknown --format", "", []string{"inspect", "--format", "xml", trace},
			"--format: unknown format \"xml\" (valid: " + formatList() + ")\n"},
		{"inspect empty stdin", "", []string{"inspect", "-"},
			"<stdin>: file is empty\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, tc.stdin, tc.args...)
			want := result{code: exitError, stderr: "toolscore: " + tc.stderr}
			if diff := cmp.Diff(want, r, cmp.AllowUnexported(result{})); diff != "" {
				t.Errorf("toolscore %s (-want +got):\n%s", strings.Join(tc.args, " "), diff)
			}
		})
	}
}

// TestDoctorInvalid checks that doctor lists every problem, one per line
// with its JSON pointer.
func TestDoctorInvalid(t *testing.T) {
	p := writeFile(t, "contract.json", `{
  "contract_version": 3,
  "required": [{"tool": "a", "args": {"q": {"$regex": "("}}}, {"alternatives": []}],
  "weights": {"argument_f1": -1}
}`)
	r := runCLI(t, "", "doctor", "--contract", p)
	want := result{code: exitError, stderr: "" +
		"toolscore: " + p + ": /contract_version: contract_version must be 2\n" +
		"toolscore: " + p + ": /required/0/args/q/$regex: regex does not compile: error parsing regexp: missing closing ): `(`\n" +
		"toolscore: " + p + ": /required/1/alternatives: an alternatives group needs at least one option\n" +
		"toolscore: " + p + ": /weights/argument_f1: must be >= 0 but found -1\n"}
	if diff := cmp.Diff(want, r, cmp.AllowUnexported(result{})); diff != "" {
		t.Errorf("doctor (-want +got):\n%s", diff)
	}
}

// TestDoctorGoldRepeatedKeys: a gold file that repeats a key (in args,
// an ignored key, a call's own args) is valid, read with the last one counting as Python
// Toolscore reads it; doctor warns of each repeat.
func TestDoctorGoldRepeatedKeys(t *testing.T) {
	r := runCLI(t, "[\n {\"tool\": \"a\", \"args\": {\"q\": 1, \"q\": 2}, \"note\": 1, \"note\": 2},\n {\"tool\": \"b\", \"args\": {\"q\": 1}, \"args\": null}\n]", "doctor", "--contract", "-")
	want := result{code: exitOK, stdout: `<stdin>: valid gold file
Ignored       1 key of the calls toolscore does not read (note; Python Toolscore's extras)
  /0/note
Required      2
Optional      0
Forbidden     0
Combinations  1
Min score     0.9 (default)
`, stderr: `toolscore: <stdin>: warning: /0/args/q: repeated key "q" at line 2:33 (first at line 2:25): the last one counts, as in Python Toolscore
toolscore: <stdin>: warning: /0/note: repeated key "note" at line 2:53 (first at line 2:42): the last one counts, as in Python Toolscore
toolscore: <stdin>: warning: /1/args: repeated key "args" at line 3:34 (first at line 3:16): the last one counts, as in Python Toolscore
`}
	if diff := cmp.Diff(want, r, cmp.AllowUnexported(result{})); diff != "" {
		t.Errorf("doctor --contract - (-want +got):\n%s", diff)
	}
}

// TestDoctorStdin reads the contract from standard input.
func TestDoctorStdin(t *testing.T) {
	r := runCLI(t, `{"contract_version": 2, "required": [{"alternatives": [{"tool": "a"}, [{"tool": "b"}, {"tool": "c"}]]}, {"alternatives": [{"tool": "d"}, {"tool": "e"}, {"tool": "f"}]}]}`,
		"doctor", "--contract", "-")
	want := result{code: exitOK, stdout: `<stdin>: valid contract v2
Required      2 (2 alternatives groups)
Optional      0
Forbidden     0
Combinations  6
Min score     0.9 (default)

Alternatives group 0: 2 options
  [0] a
  [1] b → c

Alternatives group 1: 3 options
  [0] d
  [1] e
  [2] f
`}
	if diff := cmp.Diff(want, r, cmp.AllowUnexported(result{})); diff != "" {
		t.Errorf("doctor --contract - (-want +got):\n%s", diff)
	}
}

// TestUsageErrors checks that a usage error other than a flag error
// (TestFlagErrors) prints the error, then the
// command's usage, on stderr, with exit status 2.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		firstLine string
		usage     string
	}{
		{"eval with one argument", []string{"eval", "x.json"},
			"eval takes EXPECTATION and at least one TRACE, got 1 argument", "Usage:\n  toolscore eval EXPECTATION TRACE... [flags]\n"},
		{"eval without arguments", []string{"eval"},
			"eval takes EXPECTATION and at least one TRACE, got 0 arguments", "Usage:\n  toolscore eval EXPECTATION TRACE... [flags]\n"},
		{"inspect without a trace", []string{"inspect"},
			"inspect takes 1 argument (TRACE), got 0", "Usage:\n  toolscore inspect TRACE [flags]\n"},
		{"doctor with an argument", []string{"doctor", "c.json"},
			"doctor takes no arguments, got 1 (c.json)", "Usage:\n  toolscore doctor "},
		{"version with an argument", []string{"version", "x"},
			"version takes no arguments, got 1 (x)", "Usage:\n  toolscore version [flags]\n"},
		{"unknown command", []string{"frobnicate"},
			"unknown command \"frobnicate\" for \"toolscore\"", "Usage:\n  toolscore [command]\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, "", tc.args...)
			if r.code != exitError || r.stdout != "" {
				t.Errorf("toolscore %s: exit %d, stdout %q; want exit 2, no stdout", strings.Join(tc.args, " "), r.code, r.stdout)
			}
			first, rest, _ := strings.Cut(r.stderr, "\n")
			if first != "toolscore: "+tc.firstLine {
				t.Errorf("toolscore %s: first stderr line %q, want %q", strings.Join(tc.args, " "), first, "toolscore: "+tc.firstLine)
			}
			if !strings.HasPrefix(rest, "\n"+tc.usage) {
				t.Errorf("toolscore %s: stderr after the error = %q, want the usage %q", strings.Join(tc.args, " "), rest, tc.usage)
			}
		})
	}
}

// TestFlagErrors checks that a flag cobra cannot parse, on any command,
// is one line naming the flag and a one-line hint on stderr, exit status
// 2, without the usage.
func TestFlagErrors(t *testing.T) {
	tests := []struct {
		args   []string
		stderr string
	}{
		{[]string{"eval", "--timeout", "abc", "a.json", "b.json"},
			"toolscore: invalid argument \"abc\" for \"--timeout\" flag: time: invalid duration \"abc\"\ntoolscore: see toolscore eval --help\n"},
		{[]string{"eval", "--jobs", "abc", "a.json", "b.json"},
			"toolscore: invalid argument \"abc\" for \"--jobs\" flag: strconv.ParseInt: parsing \"abc\": invalid syntax\ntoolscore: see toolscore eval --help\n"},
		{[]string{"eval", "--bogus", "a", "b"},
			"toolscore: unknown flag: --bogus\ntoolscore: see toolscore eval --help\n"},
		{[]string{"eval", "a", "b", "--min-score"},
			"toolscore: flag needs an argument: --min-score\ntoolscore: see toolscore eval --help\n"},
		{[]string{"harness", "--concurrency", "x", "s.yaml"},
			"toolscore: invalid argument \"x\" for \"--concurrency\" flag: strconv.ParseInt: parsing \"x\": invalid syntax\ntoolscore: see toolscore harness --help\n"},
		{[]string{"doctor", "--bogus"},
			"toolscore: unknown flag: --bogus\ntoolscore: see toolscore doctor --help\n"},
		{[]string{"--bogus"},
			"toolscore: unknown flag: --bogus\ntoolscore: see toolscore --help\n"},
	}
	for _, tc := range tests {
		r := runCLI(t, "", tc.args...)
		want := result{code: exitError, stderr: tc.stderr}
		if diff := cmp.Diff(want, r, cmp.AllowUnexported(result{})); diff != "" {
			t.Errorf("toolscore %s (-want +got):\n%s", strings.Join(tc.args, " "), diff)
		}
	}
}

// TestHelp checks that help goes to stdout with exit status 0.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{nil, {"help"}, {"--help"}, {"eval", "--help"}} {
		r := runCLI(t, "", args...)
		if r.code != exitOK || r.stderr != "" || !strings.Contains(r.stdout, "Usage:\n  toolscore") {
			t.Errorf("toolscore %s: exit %d, stderr %q, stdout %q; want exit 0 and usage on stdout", strings.Join(args, " "), r.code, r.stderr, r.stdout)
		}
	}
}

func TestVersion(t *testing.T) {
	r := runCLI(t, "", "version")
	// Test binaries carry no VCS stamp, so no commit is shown.
	want := result{code: exitOK, stdout: "toolscore dev " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"}
	if diff := cmp.Diff(want, r, cmp.AllowUnexported(result{})); diff != "" {
		t.Errorf("version (-want +got):\n%s", diff)
	}
}

func TestColorEnabled(t *testing.T) {
	tests := []struct {
		terminal bool
		noColor  string
		want     bool
	}{
		{true, "", true},
		{true, "1", false},
		{false, "", false},
		{false, "1", false},
	}
	for _, tc := range tests {
		if got := colorEnabled(tc.terminal, tc.noColor); got != tc.want {
			t.Errorf("colorEnabled(%v, %q) = %v, want %v", tc.terminal, tc.noColor, got, tc.want)
		}
	}
	// A file that is not a terminal never gets colours.
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if s := newStdio(os.Stdin, f, f, ""); s.color {
		t.Error("newStdio on a regular file enabled colours")
	}
}

// TestMainExitStatus runs the real main in a child process and checks the
// exit statuses 0, 1 and 2 end to end.
func TestMainExitStatus(t *testing.T) {
	tests := []struct {
		args []string
		code int
	}{
		// Only one child grades (the engine's first evaluation loads the
		// secret-detection rules, which is slow under -race); the in-process
		// tests cover the rest.
		{[]string{"version"}, exitOK},
		{[]string{"eval", example("gold.json"), example("trace.json")}, exitFail},
		{[]string{"eval", "--min-score", "7", example("gold.json"), example("trace.json")}, exitError},
		{[]string{"eval", "only-one"}, exitError},
	}
	for _, tc := range tests {
		cmd := exec.Command(os.Args[0], tc.args...)
		cmd.Env = append(os.Environ(), "TOOLSCORE_TEST_MAIN=1")
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code {
			t.Errorf("toolscore %s: exit %d, want %d", strings.Join(tc.args, " "), code, tc.code)
		}
	}
}

// TestExamplesREADME checks that every "$ toolscore ..." block of
// examples/contracts/README.md shows the output and exit status the CLI
// really gives, so the README cannot drift from the code.
func TestExamplesREADME(t *testing.T) {
	readme, err := os.ReadFile(example("README.md"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join("..", "..", "examples", "contracts"))
	blocks := 0
	for _, block := range strings.Split(string(readme), "```\n") {
		cmdLine, rest, ok := strings.Cut(block, "\n")
		if !strings.HasPrefix(cmdLine, "$ toolscore ") || strings.Contains(cmdLine, "|") || !ok {
			continue
		}
		output, status, ok := strings.Cut(rest, "$ echo $?\n")
		if !ok {
			continue
		}
		blocks++
		args := strings.Fields(strings.TrimPrefix(cmdLine, "$ toolscore "))
		r := runCLI(t, "", args...)
		want := result{stdout: output}
		if _, err := fmt.Sscanf(status, "%d", &want.code); err != nil {
			t.Fatalf("%s: bad exit status line %q", cmdLine, status)
		}
		if diff := cmp.Diff(want, r, cmp.AllowUnexported(result{})); diff != "" {
			t.Errorf("examples/contracts/README.md is out of date for %q (-README +real output):\n%s", cmdLine, diff)
		}
	}
	if blocks < 4 {
		t.Errorf("found %d command blocks in examples/contracts/README.md, want at least 4", blocks)
	}
}

func TestClip(t *testing.T) {
	long := strings.Repeat("é", maxValueRunes+25)
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{"a\nb\r\nc", "a⏎b⏎c"},
		// Cutting fewer characters than the note takes is not worth it.
		{strings.Repeat("x", maxValueRunes+24), strings.Repeat("x", maxValueRunes+24)},
		{long, strings.Repeat("é", maxValueRunes) + "… (25 more characters)"},
	}
	for _, tc := range tests {
		if got := clip(tc.in); got != tc.want {
			t.Errorf("clip(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestFormatCustomAlias: --format custom, Python Toolscore's name for its
// plain shapes, is accepted by eval and inspect and reads as plain.
func TestFormatCustomAlias(t *testing.T) {
	gold := writeFile(t, "gold.json", `[{"tool": "search", "args": {"q": "x"}, "description": "Python Toolscore's key"}]`)
	trace := writeFile(t, "trace.json", `[{"name": "search", "arguments": "{\"q\": \"x\"}"}]`)
	r := runCLI(t, "", "eval", "--format", "custom", gold, trace)
	if r.code != exitOK || !strings.Contains(r.stdout, "Trace        "+trace+" (plain, 1 call, no final answer)") {
		t.Errorf("eval --format custom: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "", "inspect", "--format", "custom", trace)
	if r.code != exitOK || !strings.Contains(r.stdout, "plain") {
		t.Errorf("inspect --format custom: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestByteOrderMark: a contract, gold file or suite may start with a
// UTF-8 byte order mark, skipped as in traces and request bodies; the
// result is the one of the file without it (its expectation_sha256
// too).
func TestByteOrderMark(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	read := func(name string) string {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	contract, gold, trace := example("contract.json"), example("gold.json"), example("trace.json")
	for _, exp := range []string{contract, gold} {
		marked := writeFile(t, "bom-"+filepath.Base(exp), bom+read(exp))
		for _, args := range [][]string{{"eval", "--json"}, {"eval", "--json", "--each-line"}} {
			tr := trace
			if args[len(args)-1] == "--each-line" {
				tr = writeFile(t, "trace.jsonl", strings.Join(strings.Fields(read(trace)), " ")+"\n")
			}
			plain := runCLI(t, "", append(args, exp, tr)...)
			got := runCLI(t, "", append(args, marked, tr)...)
			if got.stderr != plain.stderr || got.code != plain.code || strings.ReplaceAll(got.stdout, marked, exp) != plain.stdout || got.stdout == "" {
				t.Errorf("toolscore %s with a BOM in %s = %d %q %q, without %d %q", strings.Join(args, " "), exp, got.code, got.stderr, got.stdout, plain.code, plain.stderr)
			}
		}
		got := runCLI(t, "", "doctor", "--contract", marked)
		plain := runCLI(t, "", "doctor", "--contract", exp)
		if got.code != exitOK || strings.ReplaceAll(got.stdout, marked, exp) != plain.stdout {
			t.Errorf("doctor with a BOM = %d %q %q, without %q", got.code, got.stderr, got.stdout, plain.stdout)
		}
		if got := runCLI(t, bom+read(exp), "doctor", "--contract", "-"); got.code != exitOK {
			t.Errorf("doctor of standard input with a BOM = %d %q", got.code, got.stderr)
		}
	}
	suite := filepath.Join("..", "..", "examples", "harness", "suite.json")
	if got := runCLI(t, "", "doctor", "--suite", writeFile(t, "suite.json", bom+read(suite))); got.code != exitOK {
		t.Errorf("doctor --suite with a BOM = %d %q", got.code, got.stderr)
	}
	only := writeFile(t, "bom.json", bom+"\n")
	if got, want := runCLI(t, "", "eval", only, trace), (result{code: exitError, stderr: "toolscore: " + only + ": file is empty\n"}); got != want {
		t.Errorf("a file of a BOM alone = %+v, want %+v", got, want)
	}
}
