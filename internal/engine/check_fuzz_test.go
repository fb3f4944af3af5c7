package engine

import (
	"context"
	"github.com/toolscore/toolscore/internal/jsondoc"
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
		// Repeated past 16 KiB, the scanner's fragment size, the text is
		// scanned in fragments.
		texts := []string{s}
		if len(s) > 0 && len(s) <= 1024 {
			texts = append(texts, strings.Repeat(s, (16<<10)/len(s)+2))
		}
		found, err := testSecrets.ScanSecrets(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range found {
			if err := validFinding(h, texts); err != nil {
				t.Errorf("ScanSecrets(%q): %v", s, err)
			}
		}
		// The whole evaluation, with the text as a password and as the
		// final answer (redaction, the grounding check's hiding rule).
		tr := Trace{Calls: []ToolCall{{Tool: "login", Args: jsondoc.MustFromAny(map[string]any{"password": s, "note": s}), Result: jsondoc.MustFromAny(s)}}, FinalAnswer: &s}
		if _, err := Evaluate(context.Background(), fuzzContract, tr, Options{SecretScanner: testSecrets}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := RedactTrace(context.Background(), tr, testSecrets); err != nil {
			t.Fatal(err)
		}
	})
}
