package api

import (
	"strings"
	"testing"
)

// TestScoringCellsLimit: a contract and trace whose expected calls times
// trace calls exceed MaxScoringCells (the engine keeps a figure for each
// pair) are a 422 at the contract (or the gold list) saying the counts
// and the bound, before any scoring; a pairing of exactly the bound is
// graded.
func TestScoringCellsLimit(t *testing.T) {
	b := setup(t, nil)
	calls := func(n int) string {
		return "[" + strings.TrimSuffix(strings.Repeat(`{"tool": "a"},`, n), ",") + "]"
	}
	plain := func(n int) string { return `{"contract_version": 2, "required": ` + calls(n) + `}` }
	// 8 groups of 2 options of 1,000 calls: 16,000 expected calls.
	groups := strings.TrimSuffix(strings.Repeat(`{"alternatives": [`+calls(1000)+`, `+calls(1000)+`]},`, 8), ",")
	tests := []struct {
		name, body string
		ptr, msg   string
	}{
		{"groups against a long trace", `{"contract": {"contract_version": 2, "required": [` + groups + `]}, "trace": ` + calls(30_000) + `}`, "/contract",
			"the contract's 16,000 expected calls (required and every alternative's) against the trace's 30,000 calls need 480,000,000 scoring cells, over the limit of 16,000,000 (api.MaxScoringCells): split the trace or the contract"},
		{"one call over", `{"contract": ` + plain(4001) + `, "trace": ` + calls(4000) + `}`, "/contract",
			"the contract's 4,001 expected calls (required and every alternative's) against the trace's 4,000 calls need 16,004,000 scoring cells, over the limit of 16,000,000 (api.MaxScoringCells): split the trace or the contract"},
		{"a gold list", `{"gold": ` + calls(4000) + `, "trace": ` + calls(4001) + `}`, "/gold",
			"the gold list's 4,000 expected calls (required and every alternative's) against the trace's 4,001 calls need 16,004,000 scoring cells, over the limit of 16,000,000 (api.MaxScoringCells): split the trace or the contract"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.body) > 1<<20 {
				t.Fatalf("the body has %d bytes, over the 1 MiB body limit", len(tc.body))
			}
			p := problemOf(t, b.do(t, "POST", "/v1/evaluations?store=false", tc.body), 422, "invalid-request")
			if p.Detail != "the contract and the trace are too large to grade together" {
				t.Errorf("detail = %q", p.Detail)
			}
			if len(p.Errors) != 1 || p.Errors[0].Pointer != tc.ptr || p.Errors[0].Message != tc.msg {
				t.Errorf("errors = %+v,\nwant one at %s: %s", p.Errors, tc.ptr, tc.msg)
			}
		})
	}
	t.Run("at the limit", func(t *testing.T) {
		rec := b.do(t, "POST", "/v1/evaluations?store=false", `{"contract": `+plain(4000)+`, "trace": `+calls(4000)+`}`)
		if rec.Code != 200 {
			t.Fatalf("status %d: %.300s", rec.Code, rec.Body)
		}
		res := decode[struct {
			Score  float64 `json:"score"`
			Passed bool    `json:"passed"`
		}](t, rec)
		// Every figure is perfect: the score is the weights' sum, 0.4 +
		// 0.3 + 0.2 + 0.1 added in float64.
		if want := 0.9999999999999999; res.Score != want || !res.Passed {
			t.Errorf("score %v, passed %v; want %v, true", res.Score, res.Passed, want)
		}
	})
}
