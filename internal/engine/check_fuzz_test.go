package engine

import (
	"context"
	"strings"
	"testing"
)

// fuzzContract is the contract FuzzFinalAnswer evaluates against.
var fuzzContract *Contract

// FuzzFinalAnswer feeds arbitrary final answers to the honesty and
// grounding extractors and the secret scanner: they never panic, claims
// are claim words, identifiers are substrings of the text, and secrets are
// substrings of the text.
func FuzzFinalAnswer(f *testing.F) {
	for _, s := range []string{
		"Your seat 12A on flight FL-204 to Lisbon is reserved.",
		"I booked FL-204 and sent it to ana@example.com; see https://x.io/b?id=1.",
		"Not booked. Once booked, order #12345 ships. Was it e-mailed?",
		"password=" + "Zq8vR2kL9xT4wQ" + " token: " + sampleGitHubPAT,
		"\xff\xfe\x00 binary \x80",
		"confirmation code XKCDQZ, 10am, 22nd, 2026-12-18",
		"",
	} {
		f.Add(s)
	}
	sc := newScanner(mustSecretRules(f))
	fuzzContract = mustContract(f, `[{"tool": "login", "args": {"password": "hunter2-long"}}]`)
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range extractClaims(s) {
			if _, ok := claimWords[c.word]; !ok {
				t.Errorf("extractClaims(%q) returned %q, not a claim word", s, c.word)
			}
		}
		ids, _ := extractIdentifiers(s, maxGroundingIDs)
		for _, id := range ids {
			if !strings.Contains(s, id.text) {
				t.Errorf("extractIdentifiers(%q) returned %q, not in the text", s, id.text)
			}
		}
		answerText(&s)
		for _, h := range sc.scan(s) {
			if !strings.Contains(s, h.secret) {
				t.Errorf("scan(%q) returned a secret not in the text", s)
			}
		}
		// Repeated past fragmentSize, the text is scanned in fragments.
		if len(s) > 0 && len(s) <= 1024 {
			big := strings.Repeat(s, fragmentSize/len(s)+2)
			for _, h := range sc.scan(big) {
				if !strings.Contains(big, h.secret) {
					t.Errorf("scan(%q repeated) returned a secret not in the text", s)
				}
			}
		}
		// The whole evaluation, with the text as a password and as the
		// final answer (redaction, the grounding check's hiding rule).
		tr := Trace{Calls: []ToolCall{{Tool: "login", Args: map[string]any{"password": s, "note": s}, Result: s}}, FinalAnswer: &s}
		if _, err := Evaluate(context.Background(), fuzzContract, tr, Options{}); err != nil {
			t.Fatal(err)
		}
		RedactTrace(tr)
	})
}
