package api

import (
	"testing"
)

// TestMethodNotAllowed checks that a 405 carries the Allow header (RFC
// 9110 section 15.5.6) listing the routed methods, and that HEAD works on
// the health routes.
func TestMethodNotAllowed(t *testing.T) {
	b := setup(t, nil)
	tests := []struct{ method, target, allow string }{
		{"POST", "/healthz", "GET, HEAD"},
		{"DELETE", "/readyz", "GET, HEAD"},
		{"PUT", "/v1/evaluations", "GET, POST"},
		{"GET", "/v1/validate", "POST"},
		{"POST", "/v1/regrades/0193c6a0-5b1e-7c3a-9d2f-3e1f2a4b5c6d", "GET, DELETE"},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			rec := b.do(t, tc.method, tc.target, "")
			p := problemOf(t, rec, 405, "method-not-allowed")
			if got := rec.Header().Get("Allow"); got != tc.allow {
				t.Errorf("Allow = %q, want %q", got, tc.allow)
			}
			if want := tc.method + " is not allowed on " + tc.target + "; allowed: " + tc.allow; p.Detail != want {
				t.Errorf("detail = %q, want %q", p.Detail, want)
			}
		})
	}
	for _, target := range []string{"/healthz", "/readyz"} {
		if rec := b.do(t, "HEAD", target, ""); rec.Code != 200 {
			t.Errorf("HEAD %s = %d %s", target, rec.Code, rec.Body)
		}
	}
}
