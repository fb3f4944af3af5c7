package main

import (
	"bytes"
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
