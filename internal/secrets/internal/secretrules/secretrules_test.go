package secretrules

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/zricethezav/gitleaks/v8/config"
	glregexp "github.com/zricethezav/gitleaks/v8/regexp"
)

func mustDefaultConfig(tb testing.TB) config.Config {
	tb.Helper()
	cfg, err := LoadDefaultConfig()
	if err != nil {
		tb.Fatal(err)
	}
	return cfg
}

// TestTableMatchesConfig rebuilds the static table from gitleaks' default
// config, loaded as gitleaks loads it, and compares it with the generated
// one: after a gitleaks upgrade that changes the rules it fails until
// `go generate ./internal/secrets/internal/secretrules` is run.
func TestTableMatchesConfig(t *testing.T) {
	const regen = "; run go generate ./internal/secrets/internal/secretrules"
	sum := sha256.Sum256([]byte(config.DefaultConfig))
	if got := hex.EncodeToString(sum[:]); got != DefaultConfigSHA256 {
		t.Errorf("gitleaks' DefaultConfig has SHA-256 %s, the table was generated from %s%s", got, DefaultConfigSHA256, regen)
	}
	rules, aux, global := FromConfig(mustDefaultConfig(t))
	if diff := cmp.Diff(rules, Rules); diff != "" {
		t.Errorf("Rules differ from the default config (-config +table)%s:\n%s", regen, diff)
	}
	if diff := cmp.Diff(aux, AuxRules, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("AuxRules differ from the default config (-config +table)%s:\n%s", regen, diff)
	}
	if diff := cmp.Diff(global, GlobalAllowlists); diff != "" {
		t.Errorf("GlobalAllowlists differ from the default config (-config +table)%s:\n%s", regen, diff)
	}
	// The first stage of the scanner needs these; make sure the table is
	// not vacuous.
	if len(Rules) < 200 {
		t.Errorf("%d content rules, want the ~220 of gitleaks v8", len(Rules))
	}
	for _, r := range Rules {
		if r.Always != (len(r.Keywords) == 0) {
			t.Errorf("rule %s: Always = %v with keywords %q", r.ID, r.Always, r.Keywords)
		}
		for _, k := range r.Keywords {
			if k != strings.ToLower(k) {
				t.Errorf("rule %s: keyword %q is not lower-case", r.ID, k)
			}
		}
		// NewAllowlist(StopWordScan) relies on this.
		for _, a := range r.Allowlists {
			for i, w := range a.StopWords {
				if w != strings.ToLower(w) || i > 0 && w <= a.StopWords[i-1] {
					t.Errorf("rule %s: stop words not lower-case, sorted and unique at %q", r.ID, w)
				}
			}
		}
	}
}

// regexpOpts compares gitleaks configs: regular expressions by their
// source, stop words and commits as sets (Validate keeps them in map
// order), unexported fields ignored (Validate derives them from the
// exported ones).
var regexpOpts = cmp.Options{
	cmp.Comparer(func(a, b *glregexp.Regexp) bool {
		if a == nil || b == nil {
			return a == b
		}
		return a.String() == b.String()
	}),
	cmpopts.IgnoreUnexported(config.Rule{}, config.Allowlist{}),
	cmp.FilterPath(func(p cmp.Path) bool {
		if sf, ok := p.Last().(cmp.StructField); ok {
			return sf.Name() == "StopWords" || sf.Name() == "Commits"
		}
		return false
	}, cmpopts.SortSlices(func(a, b string) bool { return a < b })),
}

// TestNewRuleMatchesTranslate checks that NewRule and NewAllowlist build,
// from the table, exactly what gitleaks' Translate builds from the TOML
// (every exported field, with the same regular expressions).
func TestNewRuleMatchesTranslate(t *testing.T) {
	cfg := mustDefaultConfig(t)
	n := 0
	for _, spec := range append(append([]Rule(nil), Rules...), AuxRules...) {
		got, err := NewRule(spec, StopWordTrie)
		if err != nil {
			t.Errorf("NewRule(%s): %v", spec.ID, err)
			continue
		}
		want, ok := cfg.Rules[spec.ID]
		if !ok {
			t.Errorf("rule %s is not in the default config", spec.ID)
			continue
		}
		if diff := cmp.Diff(want, got, regexpOpts); diff != "" {
			t.Errorf("NewRule(%s) differs from Translate (-translate +new):\n%s", spec.ID, diff)
		}
		n += len(got.Allowlists)
	}
	if n == 0 {
		t.Errorf("no rule allowlist compared")
	}
	var global []*config.Allowlist
	for _, a := range GlobalAllowlists {
		al, err := NewAllowlist(a, StopWordTrie)
		if err != nil {
			t.Fatalf("NewAllowlist: %v", err)
		}
		global = append(global, al)
	}
	if diff := cmp.Diff(cfg.Allowlists, global, regexpOpts); diff != "" {
		t.Errorf("global allowlists differ from Translate (-translate +new):\n%s", diff)
	}
	// Validate ran: the stop words are matched (they live in an
	// unexported trie).
	for _, a := range global {
		for _, w := range a.StopWords {
			if ok, _ := a.ContainsStopWord("x" + strings.ToUpper(w) + "x"); !ok {
				t.Errorf("global allowlist does not match its stop word %q", w)
			}
		}
	}
}

// TestStopWordScan checks that allowlists built with StopWordScan have no
// trie, the same exported fields, and find the same stop words as those
// built with gitleaks' trie.
func TestStopWordScan(t *testing.T) {
	var lists []Allowlist
	for _, r := range Rules {
		lists = append(lists, r.Allowlists...)
	}
	lists = append(lists, GlobalAllowlists...)
	rng := rand.New(rand.NewPCG(7, 8))
	checked := 0
	for _, a := range lists {
		if len(a.StopWords) == 0 {
			continue
		}
		withTrie, err := NewAllowlist(a, StopWordTrie)
		if err != nil {
			t.Fatal(err)
		}
		scanning, err := NewAllowlist(a, StopWordScan)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(withTrie, scanning, regexpOpts); diff != "" {
			t.Errorf("allowlist %q: StopWordScan changes it (-trie +scan):\n%s", a.Description, diff)
		}
		if trie := reflect.ValueOf(scanning).Elem().FieldByName("stopwordTrie"); !trie.IsNil() {
			t.Errorf("allowlist %q: StopWordScan built a trie", a.Description)
		}
		if trie := reflect.ValueOf(withTrie).Elem().FieldByName("stopwordTrie"); trie.IsNil() {
			t.Errorf("allowlist %q: StopWordTrie built no trie", a.Description)
		}
		const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."
		random := func(n int) string {
			b := make([]byte, n)
			for i := range b {
				b[i] = chars[rng.IntN(len(chars))]
			}
			return string(b)
		}
		found := 0
		for i, w := range a.StopWords {
			for _, s := range []string{
				random(rng.IntN(8)) + strings.ToUpper(w) + random(rng.IntN(8)),
				random(4) + w[:len(w)-1] + random(4), // a prefix may hold another word
				random(10 + rng.IntN(30)),
				a.StopWords[(i+1)%len(a.StopWords)] + w,
			} {
				got, _ := scanning.ContainsStopWord(s)
				want, _ := withTrie.ContainsStopWord(s)
				if got != want {
					t.Errorf("allowlist %q: ContainsStopWord(%q) = %v scanning, %v with the trie", a.Description, s, got, want)
				}
				if want {
					found++
				}
				checked++
			}
		}
		if found < len(a.StopWords) {
			t.Errorf("allowlist %q: only %d texts held a stop word", a.Description, found)
		}
	}
	if checked < 1000 {
		t.Errorf("%d texts checked; the long stop word list of generic-api-key is gone?", checked)
	}
}

func TestNewRuleErrors(t *testing.T) {
	tests := []struct {
		rule Rule
		want string
	}{
		{Rule{ID: "bad-regex", Regex: `(`, Keywords: []string{}}, "bad-regex: compile"},
		{Rule{ID: "bad-path", Regex: `x`, Path: `[`, Keywords: []string{}}, "bad-path: compile"},
		{Rule{ID: "bad-group", Regex: `(x)`, SecretGroup: 2, Keywords: []string{}}, "invalid regex secret group 2"},
		{Rule{ID: "empty-allowlist", Regex: `x`, Allowlists: []Allowlist{{Description: "nothing"}}}, "must contain at least one check"},
		{Rule{ID: "bad-allowlist", Regex: `x`, Allowlists: []Allowlist{{Regexes: []string{`)`}}}}, "bad-allowlist: compile"},
	}
	for _, tc := range tests {
		_, err := NewRule(tc.rule, StopWordTrie)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewRule(%s) error = %v, want one containing %q", tc.rule.ID, err, tc.want)
		}
	}
}

func TestRegexMinLen(t *testing.T) {
	tests := []struct {
		pattern string
		want    int
	}{
		{`ghp_[0-9a-zA-Z]{36}`, 40},
		{`(?i)(?:ab|c)d*e+`, 2},
		{`x?`, 0},
		{`^\bfoo$`, 3},
		{`[a-z]{2,5}(?:ab){3}`, 8},
		{`(`, 0}, // does not parse
	}
	for _, tc := range tests {
		if got := RegexMinLen(tc.pattern); got != tc.want {
			t.Errorf("RegexMinLen(%q) = %d, want %d", tc.pattern, got, tc.want)
		}
	}
}

// TestSecretPrefixes pins the literal prefixes the credentials check may
// show (Go keeps case-folded literals in upper case; they compare
// case-insensitively).
func TestSecretPrefixes(t *testing.T) {
	tests := []struct {
		pattern string
		group   int
		want    []LiteralPrefix
	}{
		{`ghp_[0-9a-zA-Z]{36}`, 0, []LiteralPrefix{{"ghp_", false}}},
		{`\b((?:A3T[A-Z0-9]|AKIA|ASIA)[A-Z2-7]{16})\b`, 0, []LiteralPrefix{{"A3T", false}, {"AKIA", false}, {"ASIA", false}}},
		{`(?i)\b(sk_live_[a-z0-9]{24})`, 1, []LiteralPrefix{{"SK_LIVE_", true}}},
		{`(?i)key\s*=\s*([a-f0-9]{32})`, 1, nil},
		{`(?i)(?:key)(?:=)(x[0-9]{8})(?:;)`, 0, []LiteralPrefix{{"X", true}}},
		{`(token)=(abc[0-9]+)`, 2, []LiteralPrefix{{"abc", false}}},
		{`[a-z]+`, 0, nil},
		{`(`, 0, nil},
	}
	for _, tc := range tests {
		got := SecretPrefixes(tc.pattern, tc.group)
		if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("SecretPrefixes(%q, %d) mismatch (-want +got):\n%s", tc.pattern, tc.group, diff)
		}
	}
}
