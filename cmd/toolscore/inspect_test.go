package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestInspectSecrets checks that inspect redacts the secrets eval's
// credentials check finds, unless --keep-secrets, and that --json gives
// args_raw and args_error for unreadable arguments (QA findings 3 and 7).
func TestInspectSecrets(t *testing.T) {
	unsafe := filepath.Join("testdata", "unsafe-trace.json")
	const secret = "correct-horse-battery"
	tests := []struct {
		name string
		args []string
		// kept reports whether the output must hold the secret.
		kept bool
	}{
		{"inspect_unsafe", []string{"inspect", unsafe}, false},
		{"inspect_unsafe_json", []string{"inspect", "--json", unsafe}, false},
		{"inspect_unsafe_keep_secrets", []string{"inspect", "--keep-secrets", unsafe}, true},
		{"inspect_unsafe_keep_secrets_json", []string{"inspect", "--json", "--keep-secrets", unsafe}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(t.Context(), tc.args, stdio{in: strings.NewReader(""), out: &out, err: &errb})
			if code != exitOK || errb.Len() > 0 {
				t.Fatalf("toolscore %s: exit %d, stderr %q; want exit 0, no stderr", strings.Join(tc.args, " "), code, errb.String())
			}
			if got := strings.Contains(out.String(), secret); got != tc.kept {
				t.Errorf("output holds the secret: %v, want %v:\n%s", got, tc.kept, out.String())
			}
			compareGolden(t, tc.name, out.String())
		})
	}
}

// TestNoCallsWarning: a trace read with 0 calls from a document holding
// tool results (here OpenAI tool messages whose calls were cut off) is
// flagged by inspect (reason, --json warning) and eval (a Warning line;
// with --json, on standard error).
func TestNoCallsWarning(t *testing.T) {
	const warning = "the trace has no calls, though 1 value in it looks like tool calls or results that the openai format does not read: tool_call_id at /1/tool_call_id"
	trace := writeFile(t, "cut.json", `[{"role":"user","content":"book it"},{"role":"tool","tool_call_id":"c1","content":"booked"},{"role":"assistant","content":"Booked."}]`)
	gold := writeFile(t, "gold.json", `[{"tool":"book","args":{}}]`)
	r := runCLI(t, "", "inspect", trace)
	if r.code != exitOK || !strings.Contains(r.stdout, "Reason        a list of 3 OpenAI chat messages (role/content); "+warning+"\n") {
		t.Errorf("inspect: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "", "inspect", "--json", trace)
	var out struct{ Reason, Warning string }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Warning != warning || !strings.HasSuffix(out.Reason, "; "+warning) {
		t.Errorf("inspect --json: %v %+v\n%s", err, out, r.stdout)
	}
	r = runCLI(t, "", "eval", gold, trace)
	if r.code != exitFail || !strings.Contains(r.stdout, "\nWarning      "+warning+"\n") {
		t.Errorf("eval: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "", "eval", "--json", gold, trace)
	if r.code != exitFail || r.stderr != "toolscore: "+trace+": warning: "+warning+"\n" {
		t.Errorf("eval --json: exit %d, stderr %q", r.code, r.stderr)
	}
	// A trace with calls has no warning line.
	r = runCLI(t, "", "eval", example("gold.json"), example("trace.json"))
	if strings.Contains(r.stdout, "Warning") || r.stderr != "" {
		t.Errorf("eval of the example: %s%s", r.stdout, r.stderr)
	}
}
