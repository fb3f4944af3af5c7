package secretrules

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// matchAll returns the rules ka marks on text, sorted, without repeats.
func matchAll(ka *KeywordAutomaton, text string) []int {
	var got []int
	ka.Match([]byte(text), func(r int) { got = append(got, r) })
	slices.Sort(got)
	return slices.Compact(got)
}

func TestKeywordAutomaton(t *testing.T) {
	// The textbook example, rule i carrying keyword i; rule 5 carries two
	// keywords, one of them also rule 0's.
	rules := []Rule{
		{Keywords: []string{"he"}}, {Keywords: []string{"she"}}, {Keywords: []string{"his"}},
		{Keywords: []string{"hers"}}, {Keywords: []string{"s"}}, {Keywords: []string{"xy", "he"}},
		{Keywords: []string{}},
	}
	ka, err := NewKeywordAutomaton(rules)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text string
		want []int
	}{
		{"ushers", []int{0, 1, 3, 4, 5}},
		{"his", []int{2, 4}},
		{"hhhe", []int{0, 5}},
		{"axyz", []int{5}},
		{"zzz", nil},
		{"", nil},
		{"h\xffe", nil},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, matchAll(ka, tc.text)); diff != "" {
			t.Errorf("Match(%q) mismatch (-want +got):\n%s", tc.text, diff)
		}
	}
	var n int
	ka.Match([]byte("shehe"), func(int) { n++ })
	if n != 6 { // one mark per rule per occurrence: s; she, he (rules 0, 5); he (0, 5)
		t.Errorf("shehe: %d marks, want 6", n)
	}
	if _, err := NewKeywordAutomaton([]Rule{{Keywords: []string{""}}}); err == nil {
		t.Errorf("an empty keyword was accepted")
	}
}

// TestKeywordsMatchRules checks that the generated automaton is the one
// NewKeywordAutomaton builds for Rules.
func TestKeywordsMatchRules(t *testing.T) {
	ka, err := NewKeywordAutomaton(Rules)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ka, &Keywords); diff != "" {
		t.Errorf("Keywords differs from NewKeywordAutomaton(Rules) (-built +generated); run go generate ./internal/engine/internal/secretrules:\n%s", diff)
	}
}
