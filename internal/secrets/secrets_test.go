package secrets

import (
	"context"
	"math/rand/v2"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"

	"github.com/toolscore/toolscore/internal/engine/secretscan"
	"github.com/toolscore/toolscore/internal/secrets/internal/secretrules"
)

// Sample secrets, built at run time so the source holds no literal secret
// (and secret scanners of this repository stay quiet).
var (
	sampleGitHubPAT = "ghp_" + "R2d9xK7mQ4vL8pN3sT6wY1zB5cF0hJ" + "aE4uIo"
	sampleAWSKey    = "AKIA" + "Z7VRSQ5TJN4QPL2K"
	sampleSlackBot  = "xoxb-" + "123456789012-1234567890123-" + "abcdefghijABCDEFGHIJklmn"
	sampleStripe    = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
)

var _ secretscan.Scanner = (*Scanner)(nil)

// shared is the Scanner most tests share, as a process does.
var shared = New()

// secretHit is one secret found in one text: its rule and text.
type secretHit struct {
	rule   string
	secret string
}

// oneText scans texts one at a time with s.
type oneText struct {
	tb testing.TB
	s  *Scanner
}

// testScanner returns the shared Scanner, scanning one text at a time.
func testScanner(tb testing.TB) oneText { return oneText{tb, shared} }

// scan returns what ScanSecrets finds in text alone, sorted by rule and
// secret; nil when nothing. Every finding must be in text 0 and carry the
// prefix its rule gives.
func (o oneText) scan(text string) []secretHit {
	o.tb.Helper()
	found, err := o.s.ScanSecrets(context.Background(), []string{text})
	if err != nil {
		o.tb.Fatalf("ScanSecrets(%q): %v", text, err)
	}
	var out []secretHit
	for _, f := range found {
		if f.Text != 0 || f.Prefix != o.s.prefix(f.Rule, f.Secret) {
			o.tb.Fatalf("ScanSecrets(%q): finding %+v", text, f)
		}
		out = append(out, secretHit{f.Rule, f.Secret})
	}
	return out
}

// sortHits orders hits by rule, then secret.
func sortHits(hits []secretHit) {
	slices.SortFunc(hits, func(a, b secretHit) int {
		if c := strings.Compare(a.rule, b.rule); c != 0 {
			return c
		}
		return strings.Compare(a.secret, b.secret)
	})
}

func TestScanFindsSecrets(t *testing.T) {
	sc := testScanner(t)
	tests := []struct {
		text string
		want []secretHit
	}{
		{sampleGitHubPAT, []secretHit{{"github-pat", sampleGitHubPAT}}},
		{"token: " + sampleGitHubPAT, []secretHit{{"github-pat", sampleGitHubPAT}}},
		{sampleAWSKey, []secretHit{{"aws-access-token", sampleAWSKey}}},
		{sampleSlackBot, []secretHit{{"slack-bot-token", sampleSlackBot}}},
		{sampleStripe, []secretHit{{"stripe-access-token", sampleStripe}}},
		{"password=hunter2xyzA9", []secretHit{{"generic-api-key", "hunter2xyzA9"}}},
		// Not secrets.
		{"", nil},
		{"LIS", nil},
		{"2026-12-18", nil},
		{"FL-204", nil},
		{"trip 3 to Lisbon", nil},
		{"The api key and token are in the vault; they asked for access.", nil},
		{"ghp_" + strings.Repeat("x", 36), nil}, // gitleaks' own false positive example
		{"AKIAIOSFODNN7EXAMPLE", nil},           // AWS's documented example key
		{"\x00\xff\xfe binary \x01\x02", nil},
	}
	for _, tc := range tests {
		got := slices.Clone(sc.scan(tc.text))
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(secretHit{})); diff != "" {
			t.Errorf("scan(%q) mismatch (-want +got):\n%s", tc.text, diff)
		}
	}
}

// TestScanMatchesGitleaks checks that splitting the rule set into one
// Detector per rule, with the keyword and length prefilters, finds exactly
// what gitleaks' own Detector finds with the whole default config, on
// samples generated from every rule's regular expression.
func TestScanMatchesGitleaks(t *testing.T) {
	sc := testScanner(t)
	sr := sc.s
	full := detect.NewDetector(fullConfig(t))
	rng := rand.New(rand.NewPCG(1, 2))
	detected := map[string]bool{}
	n := 0
	for i := range sr.rules {
		r := &sr.rules[i]
		re, err := syntax.Parse(r.spec.Regex, syntax.Perl)
		if err != nil {
			t.Fatalf("rule %s: %v", r.id, err)
		}
		sample := sampleRegex(re, rng)
		for _, text := range []string{sample, "value: " + sample + " end", strings.ToUpper(sample), sample[:len(sample)/2]} {
			n++
			var want []secretHit
			for _, f := range full.DetectString(text) {
				if f.Secret != "" {
					want = append(want, secretHit{f.RuleID, f.Secret})
				}
			}
			slices.SortFunc(want, func(a, b secretHit) int {
				return strings.Compare(a.rule+"\x00"+a.secret, b.rule+"\x00"+b.secret)
			})
			want = slices.Compact(want)
			// The uri-credentials rule is toolscore's own, beside
			// gitleaks' rules: leave it out of the comparison.
			got := slices.DeleteFunc(slices.Clone(sc.scan(text)), func(h secretHit) bool { return h.rule == RuleURICredentials })
			if len(got) == 0 {
				got = nil
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(secretHit{})); diff != "" {
				t.Errorf("rule %s, text %q: scan differs from gitleaks (-gitleaks +scan):\n%s", r.id, text, diff)
			}
			for _, h := range got {
				detected[h.rule] = true
			}
		}
	}
	// The samples must exercise most rules, or the comparison proves little.
	if len(detected) < len(sr.rules)*2/3 {
		t.Errorf("samples triggered %d of %d rules; want at least two thirds", len(detected), len(sr.rules))
	}
	t.Logf("%d texts, %d of %d rules fired", n, len(detected), len(sr.rules))
}

// fullConfig loads the whole default config as gitleaks does (from its
// TOML, not from the generated table the scanner uses).
func fullConfig(tb testing.TB) config.Config {
	tb.Helper()
	cfg, err := secretrules.LoadDefaultConfig()
	if err != nil {
		tb.Fatal(err)
	}
	return cfg
}

// mustDetector returns rule r's Detector in s, building it if need be.
func mustDetector(tb testing.TB, s *Scanner, r *rule) *detect.Detector {
	tb.Helper()
	d, err := r.detector(s)
	if err != nil {
		tb.Fatalf("rule %s: %v", r.id, err)
	}
	return d
}

// sampleRegex generates a string matching re (empty-width assertions
// aside), with random characters from each class, so entropy checks can
// pass.
func sampleRegex(re *syntax.Regexp, rng *rand.Rand) string {
	var b strings.Builder
	var gen func(re *syntax.Regexp)
	repeat := func(sub *syntax.Regexp, lo, hi int) {
		if hi < 0 || hi > lo+24 {
			hi = lo + 24
		}
		n := lo + rng.IntN(hi-lo+1)
		for range n {
			gen(sub)
		}
	}
	gen = func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpLiteral:
			b.WriteString(string(re.Rune))
		case syntax.OpCharClass:
			// Pick a random rune of the class, preferring ASCII.
			var ascii []rune
			for i := 0; i+1 < len(re.Rune); i += 2 {
				for r := re.Rune[i]; r <= re.Rune[i+1] && r < 0x7f; r++ {
					if unicode.IsPrint(r) {
						ascii = append(ascii, r)
					}
				}
			}
			if len(ascii) > 0 {
				b.WriteRune(ascii[rng.IntN(len(ascii))])
			} else if len(re.Rune) > 0 {
				b.WriteRune(re.Rune[0])
			}
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			b.WriteByte("abcdefghijklmnopqrstuvwxyz0123456789"[rng.IntN(36)])
		case syntax.OpCapture:
			gen(re.Sub[0])
		case syntax.OpStar:
			repeat(re.Sub[0], 0, 3)
		case syntax.OpPlus:
			repeat(re.Sub[0], 1, 4)
		case syntax.OpQuest:
			repeat(re.Sub[0], 0, 1)
		case syntax.OpRepeat:
			repeat(re.Sub[0], re.Min, re.Max)
		case syntax.OpConcat:
			for _, s := range re.Sub {
				gen(s)
			}
		case syntax.OpAlternate:
			gen(re.Sub[rng.IntN(len(re.Sub))])
		}
	}
	gen(re)
	return b.String()
}

// TestRulePrefilters checks every prefilter is in use (its rule's pattern
// is the one it was derived from) and agrees with the rule on texts built
// around the rule's operators.
func TestRulePrefilters(t *testing.T) {
	sr := New()
	for id := range rulePrefilters {
		i := slices.Index(sr.ids, id)
		if i < 0 || sr.rules[i].mayMatch == nil {
			t.Errorf("prefilter of %s is not in use: the rule changed; derive it again", id)
		}
	}
	r := &sr.rules[slices.Index(sr.ids, "generic-api-key")]
	det := mustDetector(t, sr, r)
	const sec = "Zq8vR2kL9xT4wQ"
	texts := []string{
		"password=" + sec, "api_key: '" + sec + "'", "token =>  \"" + sec + "\"",
		"secret,\t" + sec[:6] + "+/" + sec[6:], "key |= " + sec, "access: short", "auth: " + sec[:9] + "!",
		"the key and token, they asked for access.", "key:\n\n\n\n\n\n" + sec, "key:     =" + sec,
		"key: `\"' =" + sec, "key: \u212a" + sec, "creds ||" + sec + ".x", "AUTH_TOKEN=" + sec + ";",
	}
	matched := 0
	for _, text := range texts {
		found := len(det.DetectString(text)) > 0
		if found {
			matched++
		}
		if found && !r.mayMatch(text) {
			t.Errorf("generic-api-key prefilter rejects %q, which the rule matches", text)
		}
	}
	if matched < 6 {
		t.Errorf("the rule matched %d of the texts; the test needs at least 6 to mean something", matched)
	}
	if genericAPIKeyMayMatch("The api key and token are in the vault; they asked for access.") {
		t.Errorf("the prefilter lets plain prose through")
	}
}
