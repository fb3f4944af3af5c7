package secrets

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zricethezav/gitleaks/v8/detect"

	"github.com/toolscore/toolscore/internal/engine/secretscan"
)

// builtRules returns the ids of the rules of sr built so far.
func builtRules(sr *Scanner) []string {
	var ids []string
	for i := range sr.rules {
		if sr.rules[i].built.det.Load() != nil {
			ids = append(ids, sr.rules[i].id)
		}
	}
	return ids
}

// TestRulesBuiltLazily checks that a scan builds only the rules that the
// text's keywords and length schedule (and that pass their prefilter).
func TestRulesBuiltLazily(t *testing.T) {
	sr := New()
	sc := oneText{t, sr}
	steps := []struct {
		text  string
		built []string // all the rules built after scanning text
	}{
		{"Your seat 12A on flight FL-204 to Lisbon is reserved.", nil},
		// Keywords (api, key), but too short for most of their rules, and
		// no assignment for generic-api-key's prefilter.
		{"${FLIGHTS_API_KEY}", nil},
		{"see " + sampleGitHubPAT, []string{"github-pat"}},
		// "password" is a keyword of hashicorp-tf-password too (a rule
		// for .tf files, which never fires on a text without a path).
		{"password=hunter2xyzA9", []string{"generic-api-key", "github-pat", "hashicorp-tf-password"}},
	}
	for _, st := range steps {
		sc.scan(st.text)
		if diff := cmp.Diff(st.built, builtRules(sr)); diff != "" {
			t.Errorf("after scanning %q, built rules (-want +got):\n%s", st.text, diff)
		}
	}
}

// stopWordTrie reports whether the long stop word list of rule id in d
// is matched with gitleaks' trie (a rule has it when its allowlists were
// built with secretrules.StopWordTrie).
func stopWordTrie(tb testing.TB, d *detect.Detector, id string) bool {
	tb.Helper()
	for _, a := range d.Config.Rules[id].Allowlists {
		if len(a.StopWords) > 100 {
			return !reflect.ValueOf(a).Elem().FieldByName("stopwordTrie").IsNil()
		}
	}
	tb.Fatalf("rule %s has no long stop word list", id)
	return false
}

// TestStopWordScanMatchesGitleaks checks generic-api-key, whose allowlist
// has about 1,500 stop words, against gitleaks' own Detector on secrets
// holding stop words and not: first while the rule scans for its stop
// words, then after trieAfter bytes with gitleaks' trie.
func TestStopWordScanMatchesGitleaks(t *testing.T) {
	sr := New()
	r := &sr.rules[slices.Index(sr.ids, "generic-api-key")]
	full := detect.NewDetector(fullConfig(t))
	sc := oneText{t, sr}
	words := r.spec.Allowlists[1].StopWords
	if len(words) < 1000 {
		t.Fatalf("generic-api-key has %d stop words in its second allowlist, want its long list", len(words))
	}
	var scanned, withTrie, kept, dropped int
	for j := 0; j < len(words); j += 7 {
		w := words[j]
		for _, text := range []string{
			"api_key = Zq8vR2" + w + "kL9xT4",
			"token: '" + strings.ToUpper(w) + "x9Qm2Rv7Lk'",
			"secret=Zq8vR2kL9xT4wQ8p",
		} {
			var want []secretHit
			for _, f := range full.DetectString(text) {
				want = append(want, secretHit{f.RuleID, f.Secret})
			}
			sortHits(want)
			got := slices.Clone(sc.scan(text))
			if len(got) == 0 {
				got = nil
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(secretHit{})); diff != "" {
				t.Errorf("text %q: scan differs from gitleaks (-gitleaks +scan):\n%s", text, diff)
			}
			if stopWordTrie(t, mustDetector(t, sr, r), r.id) {
				withTrie++
			} else {
				scanned++
			}
			if len(want) > 0 {
				kept++
			} else {
				dropped++
			}
		}
	}
	// Both ways were compared, on secrets kept and dropped.
	if scanned < 10 || withTrie < 10 || kept < 10 || dropped < 10 {
		t.Errorf("texts scanned without the trie %d, with it %d; secrets kept %d, dropped %d: want at least 10 each",
			scanned, withTrie, kept, dropped)
	}
}

// TestWarmUpBuildsEverything checks that WarmUp builds every rule, with
// gitleaks' trie over long stop word lists.
func TestWarmUpBuildsEverything(t *testing.T) {
	sr := New()
	if err := sr.WarmUp(); err != nil {
		t.Fatal(err)
	}
	if n := len(builtRules(sr)); n != len(sr.rules) {
		t.Errorf("WarmUp built %d of %d rules", n, len(sr.rules))
	}
	i := slices.Index(sr.ids, "generic-api-key")
	if !stopWordTrie(t, mustDetector(t, sr, &sr.rules[i]), "generic-api-key") {
		t.Errorf("after WarmUp, generic-api-key scans for its stop words")
	}
}

// TestRuleBuildConcurrent scans in parallel on a fresh rule set (go test
// -race): goroutines build generic-api-key and replace its Detector by
// the one with the trie while others scan with it.
func TestRuleBuildConcurrent(t *testing.T) {
	sr := New()
	const text = "api_key = Zq8vR2kL9xT4wQ8p"
	want := []secretscan.Finding{{Text: 0, Rule: "generic-api-key", Secret: "Zq8vR2kL9xT4wQ8p"}}
	errs := make(chan string, 4)
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 2 * trieAfter / len(text) {
				got, err := sr.ScanSecrets(context.Background(), []string{text})
				if err != nil || !slices.Equal(got, want) {
					errs <- fmt.Sprintf("error %v; (-want +got):\n%s", err, cmp.Diff(want, got))
					return
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Errorf("scan (-want +got):\n%s", e)
	}
	i := slices.Index(sr.ids, "generic-api-key")
	if !stopWordTrie(t, mustDetector(t, sr, &sr.rules[i]), "generic-api-key") {
		t.Errorf("generic-api-key still scans for its stop words after %d bytes", 8*trieAfter)
	}
}
