package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestContractInit pins the contracts seeded from traces, checks that
// doctor accepts each and that the trace it came from passes it with full
// marks.
func TestContractInit(t *testing.T) {
	seed := batchFile("seed-trace.json")
	tests := []struct {
		name  string
		args  []string
		trace string
		notes string
		code  int // of eval, the trace against its contract
	}{
		{"contract_init", []string{"--optional", "get_weather"}, example("trace.json"), "", exitOK},
		{"contract_init_seed", nil, seed, "toolscore: note: call #3 book_flight /payment/token: a secret, written as {\"$type\": \"string\"}\n", exitFail},
		{"contract_init_seed_loose", []string{"--loose", "--optional", "get_weather", "--optional", "cancel_booking"}, seed,
			"toolscore: note: call #3 book_flight /payment/token: a secret, written as {\"$type\": \"string\"}\ntoolscore: note: --optional cancel_booking: the trace does not call it; it is optional all the same\n", exitFail},
		{"contract_init_unsafe_loose", []string{"--loose"}, batchFile("unsafe-trace.json"),
			"toolscore: note: call #2 reserve_seat /account/password: a secret, written as {\"$type\": \"string\"}\n", exitFail},
		// A fractional id, a number beyond float64, arguments with a
		// matcher-like key, calls without arguments.
		{"contract_init_odd_loose", []string{"--loose"}, batchFile("odd-trace.json"),
			"toolscore: note: call #2 query: its arguments have a key starting with $ ($where), which a contract would read as a matcher: required without arguments\n", exitOK},
		{"contract_init_odd", nil, batchFile("odd-trace.json"),
			"toolscore: note: call #2 query: its arguments have a key starting with $ ($where), which a contract would read as a matcher: required without arguments\n", exitOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, "", append(append([]string{"contract", "init"}, tc.args...), tc.trace)...)
			if r.code != exitOK || r.stderr != tc.notes {
				t.Fatalf("exit %d, stderr %q; want 0 and %q", r.code, r.stderr, tc.notes)
			}
			compareGolden(t, tc.name, r.stdout)
			path := writeFile(t, "contract.json", r.stdout)
			if d := runCLI(t, "", "doctor", "--contract", path); d.code != exitOK {
				t.Errorf("doctor: exit %d, stderr %q", d.code, d.stderr)
			}
			e := runCLI(t, "", "eval", path, tc.trace)
			// The unsafe trace fails its credentials check whatever the score.
			if e.code != tc.code || !strings.Contains(e.stdout, "(100.0%)") {
				t.Errorf("the recorded trace against its contract: exit %d\n%s", e.code, e.stdout)
			}
		})
	}
	if strings.Contains(string(mustRead(t, filepath.Join("testdata", "contract_init_unsafe_loose.golden"))), "hunter") {
		t.Error("the secret was written into the contract")
	}
}

// TestContractInitErrors checks the traces and flags that cannot seed a
// contract: exit 2 and a message naming the file and why.
func TestContractInitErrors(t *testing.T) {
	empty := writeFile(t, "empty.json", `[]`)
	answer := writeFile(t, "answer.json", `[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]`)
	out := filepath.Join(t.TempDir(), "no", "c.json")
	nameless := writeFile(t, "nameless.json", `[{"tool": "a"}, {"tool": "", "args": {}}]`)
	tests := []struct {
		name   string
		stdin  string
		args   []string
		stderr string
	}{
		{"no calls", "", []string{empty}, "toolscore: " + empty + ": the trace has no tool calls (plain): there is nothing to seed a contract with\n"},
		{"answer only", "", []string{answer}, "toolscore: " + answer + ": the trace has no tool calls (openai): there is nothing to seed a contract with\n"},
		{"stdin without calls", `{"calls": []}`, []string{"-"}, "toolscore: <stdin>: the trace has no tool calls (plain): there is nothing to seed a contract with\n"},
		{"all optional", "", []string{"--optional", "get_weather", "--optional", "search_flights", "--optional", "reserve_seat", example("trace.json")},
			"toolscore: " + example("trace.json") + ": every call is --optional: a contract needs a required call to grade a run against\n"},
		{"broken", "", []string{writeFile(t, "b.json", `[{"tool":`)}, ""},
		{"nameless call", "", []string{nameless}, "toolscore: " + nameless + ": call #1 has no tool name: a contract cannot require it\n"},
		{"unwritable output", "", []string{"-o", out, example("trace.json")}, "toolscore: --output: open " + out + ": no such file or directory\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, tc.stdin, append([]string{"contract", "init"}, tc.args...)...)
			if r.code != exitError || r.stdout != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing", r.code, r.stdout)
			}
			if tc.stderr != "" && r.stderr != tc.stderr {
				t.Errorf("stderr %q\nwant %q", r.stderr, tc.stderr)
			}
			if tc.stderr == "" && !strings.Contains(r.stderr, "b.json: line 1:") {
				t.Errorf("stderr %q does not locate the syntax error", r.stderr)
			}
		})
	}
}
