package secrets

import (
	"context"
	"math/rand/v2"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/toolscore/toolscore/internal/engine/secretscan"
	"github.com/toolscore/toolscore/internal/secrets/internal/secretrules"
)

// plainScan is ScanSecrets without any prefilter: every rule's Detector
// run on every fragment of every text, whatever its keywords and length,
// then gitleaks' cross-rule filter per fragment, and the uri-credentials
// expression run on every text. It is what the prefilters (the keyword
// automaton, the rules' minimum lengths, generic-api-key's mayMatch and
// the "://" test) must not change.
func plainScan(tb testing.TB, s *Scanner, texts []string) []secretscan.Finding {
	tb.Helper()
	var hits []hit
	for i, text := range texts {
		for start, end := range fragments(text) {
			piece := text[start:end]
			var found []report.Finding
			for r := range s.rules {
				found = append(found, mustDetector(tb, s, &s.rules[r]).DetectString(piece)...)
			}
			for k, f := range found {
				if f.Secret != "" && !shadowedGeneric(f, found, k) {
					hits = append(hits, hit{text: i, rule: f.RuleID, secret: f.Secret})
				}
			}
		}
		for _, m := range s.uri().FindAllStringSubmatch(text, -1) {
			hits = append(hits, hit{text: i, rule: RuleURICredentials, secret: m[1]})
		}
	}
	st := &scanState{s: s, hits: hits}
	return st.findings()
}

// gitleaksScan is what gitleaks' own Detector, with the whole default
// config loaded from its TOML, finds in the fragments of texts (and
// uri-credentials, which is not gitleaks').
func gitleaksScan(full *detect.Detector, s *Scanner, texts []string) []secretscan.Finding {
	var hits []hit
	for i, text := range texts {
		for start, end := range fragments(text) {
			for _, f := range full.DetectString(text[start:end]) {
				if f.Secret != "" {
					hits = append(hits, hit{text: i, rule: f.RuleID, secret: f.Secret})
				}
			}
		}
		for _, m := range s.uri().FindAllStringSubmatch(text, -1) {
			hits = append(hits, hit{text: i, rule: RuleURICredentials, secret: m[1]})
		}
	}
	st := &scanState{s: s, hits: hits}
	return st.findings()
}

// fuzzTexts splits a fuzz input into the texts of one scan: at each
// "\x1e". An input starting with "\x1f" also gets one long text made of
// its rest three times, among dots: at the start, across the first
// fragment boundary (dots hold no white space, so the cut is at
// fragmentSize exactly) and inside the overlap, so that fragments are
// exercised while the text holds no more secrets than the input.
func fuzzTexts(in string) []string {
	long := strings.HasPrefix(in, "\x1f")
	in = strings.TrimPrefix(in, "\x1f")
	texts := strings.Split(in, "\x1e")
	if long && len(in) > 0 && len(in) <= 512 {
		dots := func(n int) string { return strings.Repeat(".", max(n, 0)) }
		texts = append(texts, in+dots(fragmentSize-len(in)/2-len(in))+in+dots(fragmentOverlap/2)+in+dots(fragmentOverlap))
	}
	return texts
}

// fullDetector is gitleaks' Detector over the whole default config, made
// once for the fuzz targets.
var fullDetector = sync.OnceValue(func() *detect.Detector {
	cfg, err := secretrules.LoadDefaultConfig()
	if err != nil {
		panic(err)
	}
	return detect.NewDetector(cfg)
})

// FuzzScanSecrets compares ScanSecrets (one prefilter walk over all the
// texts, then only the rules it schedules) with plainScan (every rule on
// every text) and with gitleaks' own Detector, on texts seeded with
// real-looking secrets: a sample of every rule's pattern, alone and in
// assignments and prose, several texts per scan.
func FuzzScanSecrets(f *testing.F) {
	rng := rand.New(rand.NewPCG(21, 22))
	for i := range shared.rules {
		re, err := syntax.Parse(shared.rules[i].spec.Regex, syntax.Perl)
		if err != nil {
			f.Fatal(err)
		}
		sample := sampleRegex(re, rng)
		// One text per seed mostly: the plain path costs every rule per
		// text. A few seeds have several texts, and a few a long one
		// (fragments), which costs most.
		switch {
		case i%40 == 3:
			f.Add("\x1fnote " + sample + " ")
		case i%10 == 1:
			f.Add("token: " + sample + "\x1ethe api key is in the vault\x1e\x1e" + strings.ToUpper(sample))
		case i%3 == 0:
			f.Add(sample)
		case i%3 == 1:
			f.Add("token: " + sample)
		default:
			f.Add("Your key " + sample + " was rotated; see https://x.io/a:b@c.")
		}
	}
	for _, s := range []string{
		"", "\x1e\x1e", "password=hunter2xyzA9", "postgres://admin:Pa55w0rdXyZq@db.internal:5432/prod",
		"api_key = Zq8vR2kL9xT4wQ8p\x1e" + sampleGitHubPAT + "\x1e" + sampleSlackBot, "\x00\xff\xfe binary \x80 KEY=\u212aZq8vR2kL9xT4",
		"\x1fapi_key = Zq8vR2kL9xT4wQ8p; ", "\x1fthe api key is in the vault; token: " + sampleGitHubPAT,
		"İstanbul token: ghp_" + strings.Repeat("x", 36),
	} {
		f.Add(s)
	}
	full := fullDetector()
	f.Fuzz(func(t *testing.T, in string) {
		texts := fuzzTexts(in)
		got, err := shared.ScanSecrets(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(plainScan(t, shared, texts), got); diff != "" {
			t.Errorf("texts %q: ScanSecrets differs from every rule on every text (-plain +scan):\n%s", texts, diff)
		}
		if diff := cmp.Diff(gitleaksScan(full, shared, texts), got); diff != "" {
			t.Errorf("texts %q: ScanSecrets differs from gitleaks' Detector (-gitleaks +scan):\n%s", texts, diff)
		}
		for _, f := range got {
			if f.Text < 0 || f.Text >= len(texts) || f.Secret == "" || !strings.Contains(texts[f.Text], f.Secret) ||
				f.Prefix < 0 || f.Prefix > len(f.Secret) {
				t.Errorf("texts %q: invalid finding %+v", texts, f)
			}
		}
		if !slices.IsSortedFunc(got, func(a, b secretscan.Finding) int { return a.Text - b.Text }) {
			t.Errorf("texts %q: findings not in text order", texts)
		}
	})
}
