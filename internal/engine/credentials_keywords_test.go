package engine

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/engine/internal/secretrules"
)

// matchAll returns the rules ka marks on text, sorted, without repeats.
func matchAll(ka *secretrules.KeywordAutomaton, text string) []int {
	var got []int
	ka.Match([]byte(text), func(r int) { got = append(got, r) })
	slices.Sort(got)
	return slices.Compact(got)
}

// TestKeywordAutomatonMatchesGitleaks checks the scanner's keyword
// automaton (the generated secretrules.Keywords) against gitleaks' own
// prefilter (the Aho-Corasick trie it builds over the same keywords) and
// against plain substring search, on random texts dense with keyword
// fragments.
func TestKeywordAutomatonMatchesGitleaks(t *testing.T) {
	sr := mustSecretRules(t)
	var kws []string
	rulesOf := map[string][]int{}
	for i, r := range secretrules.Rules {
		for _, k := range r.Keywords {
			if rulesOf[k] == nil {
				kws = append(kws, k)
			}
			rulesOf[k] = append(rulesOf[k], i)
		}
	}
	trie := ahocorasick.NewTrieBuilder().AddStrings(kws).Build()
	rng := rand.New(rand.NewPCG(5, 6))
	const noise = "abcxyz_-.:= \n\x00\xc3\xa9\xe2\x84\xaaAPIKEY"
	fired := map[int]bool{}
	for n := range 3000 {
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			if rng.IntN(3) == 0 {
				b.WriteByte(noise[rng.IntN(len(noise))])
				continue
			}
			k := kws[rng.IntN(len(kws))]
			i, j := rng.IntN(len(k)), rng.IntN(len(k)+1)
			if rng.IntN(2) == 0 {
				i = 0 // whole keywords or their prefixes, half the time
			}
			if i < j {
				b.WriteString(k[i:j])
			}
		}
		lower := string(appendLower(nil, b.String()))
		var viaTrie, viaContains []int
		for _, m := range trie.MatchString(lower) {
			viaTrie = append(viaTrie, rulesOf[m.MatchString()]...)
		}
		for _, k := range kws {
			if strings.Contains(lower, k) {
				viaContains = append(viaContains, rulesOf[k]...)
			}
		}
		for _, l := range []*[]int{&viaTrie, &viaContains} {
			slices.Sort(*l)
			*l = slices.Compact(*l)
		}
		got := matchAll(sr.keywords, lower)
		if diff := cmp.Diff(viaTrie, got); diff != "" {
			t.Fatalf("text %d %q: automaton differs from gitleaks' trie (-trie +automaton):\n%s", n, lower, diff)
		}
		if diff := cmp.Diff(viaContains, got); diff != "" {
			t.Fatalf("text %d %q: automaton differs from substring search (-contains +automaton):\n%s", n, lower, diff)
		}
		for _, r := range got {
			fired[r] = true
		}
	}
	if len(fired) < len(secretrules.Rules)*9/10 {
		t.Errorf("the texts held keywords of %d of %d rules; want at least 90%%", len(fired), len(secretrules.Rules))
	}
}
