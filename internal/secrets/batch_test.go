package secrets

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/logging"

	"github.com/toolscore/toolscore/internal/engine/secretscan"
)

// TestScanSecretsBatch checks that texts scanned together give what each
// gives alone, with its index: short, empty and long texts, repeated
// texts, and enough of them to fill several prefilter windows.
func TestScanSecretsBatch(t *testing.T) {
	sc := testScanner(t)
	long := strings.Repeat("lorem ipsum dolor ", 2000) + "token: " + sampleGitHubPAT + strings.Repeat(" amet", 3000)
	base := []string{
		"", "LIS", sampleAWSKey, "trip 3 to Lisbon", "password=hunter2xyzA9",
		"postgres://admin:Pa55w0rdXyZq@db.internal:5432/prod", sampleGitHubPAT + strings.Repeat(".", 2000),
		"The api key and token are in the vault.", sampleSlackBot + " and " + sampleStripe, sampleAWSKey,
	}
	texts := []string{long}
	for len(texts) < 400 {
		texts = append(texts, base...)
	}
	texts = append(texts, long)
	got, err := shared.ScanSecrets(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var want []secretscan.Finding
	for i, text := range texts {
		for _, h := range sc.scan(text) {
			want = append(want, secretscan.Finding{Text: i, Rule: h.rule, Secret: h.secret, Prefix: shared.prefix(h.rule, h.secret)})
		}
	}
	if len(want) < len(texts)/2 {
		t.Fatalf("only %d findings expected; the texts hold too few secrets", len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("batch differs from one text at a time (-alone +batch):\n%s", diff)
	}
	if got, err := shared.ScanSecrets(context.Background(), nil); got != nil || err != nil {
		t.Errorf("ScanSecrets(nil) = %v, %v; want nil, nil", got, err)
	}
}

// TestSecretPrefix pins the prefixes the credentials check may show: the
// longest literal its rule fixes at the start of the secret.
func TestSecretPrefix(t *testing.T) {
	tests := []struct {
		secret, rule string
		want         int
	}{
		{sampleGitHubPAT, "github-pat", 4},
		{sampleAWSKey, "aws-access-token", 4},
		{sampleStripe, "stripe-access-token", 8},
		{sampleSlackBot, "slack-bot-token", 5},
		{"0123456789abcdef0123456789abcdef", "facebook-secret", 0},
		{"ghp" + sampleGitHubPAT[4:] + "x", "github-pat", 0},
		{"correcthorsebatterystaple", "generic-api-key", 0},
		{"Pa55w0rdXyZq", RuleURICredentials, 0},
		{sampleGitHubPAT, "no-such-rule", 0},
		{"AKIA" + "z7vrsq5tjn4qpl2k", "aws-access-token", 4},
	}
	for _, tc := range tests {
		if got := shared.prefix(tc.rule, tc.secret); got != tc.want {
			t.Errorf("prefix(%q, %q) = %d, want %d", tc.rule, tc.secret, got, tc.want)
		}
	}
	// What ScanSecrets reports.
	found, err := shared.ScanSecrets(context.Background(), []string{"token " + sampleGitHubPAT, sampleStripe})
	if err != nil {
		t.Fatal(err)
	}
	want := []secretscan.Finding{
		{Text: 0, Rule: "github-pat", Secret: sampleGitHubPAT, Prefix: 4},
		{Text: 1, Rule: "stripe-access-token", Secret: sampleStripe, Prefix: 8},
	}
	if diff := cmp.Diff(want, found); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

// TestScanSecretsCancelled checks that a scan stops when ctx ends: with
// ctx.Err(), and the findings of what it scanned before.
func TestScanSecretsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	texts := []string{sampleGitHubPAT, "password=hunter2xyzA9"}
	found, err := shared.ScanSecrets(ctx, texts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("ScanSecrets(cancelled) error = %v, want context.Canceled", err)
	}
	for _, f := range found {
		if f.Text < 0 || f.Text >= len(texts) || !strings.Contains(texts[f.Text], f.Secret) {
			t.Errorf("finding %+v is not in the texts", f)
		}
	}
}

// TestPrefilterMatchesSubstrings checks the rules the prefilter schedules
// (one Aho-Corasick walk over all texts) against plain substring search
// of each rule's keywords in each lower-cased text, on random texts dense
// with keyword fragments, several per scan; and the texts it marks for
// uri-credentials against strings.Contains(text, "://").
func TestPrefilterMatchesSubstrings(t *testing.T) {
	s := New()
	var kws []string
	for i := range s.rules {
		kws = append(kws, s.rules[i].spec.Keywords...)
	}
	kws = append(kws, uriKeyword)
	rng := rand.New(rand.NewPCG(5, 6))
	const noise = "abcxyz_-.:/= \n\x00\xc3\xa9\xe2\x84\xaaAPIKEY"
	text := func() string {
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
		if rng.IntN(4) == 0 {
			return strings.ToUpper(b.String())
		}
		return b.String()
	}
	fired := map[int]bool{}
	var short, long int // (text, rule) pairs with a keyword: too short for the rule, and not
	st := &scanState{s: s, seen: make([]uint64, (len(s.rules)+63)/64)}
	for range 300 {
		texts := make([]string, 1+rng.IntN(20))
		for i := range texts {
			texts[i] = text()
		}
		st.texts, st.uri, st.lower, st.pieces = texts, st.uri[:0], st.lower[:0], st.pieces[:0]
		for i := range texts {
			st.add(i, 0, len(texts[i]))
		}
		st.schedule()
		var got, want [][2]int
		for _, c := range st.cands {
			got = append(got, [2]int{st.pieces[c.piece].text, c.rule})
		}
		var wantURI []int
		for i, text := range texts {
			lower := strings.ToLower(text)
			for r := range s.rules {
				if !slices.ContainsFunc(s.rules[r].spec.Keywords, func(k string) bool { return strings.Contains(lower, k) }) {
					continue
				}
				fired[r] = true
				if s.rules[r].minLen > len(text) {
					short++
					continue
				}
				long++
				want = append(want, [2]int{i, r})
			}
			if strings.Contains(text, uriKeyword) && len(text) >= s.uriMinLen {
				wantURI = append(wantURI, i)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("texts %q: scheduled rules differ from substring search (-contains +prefilter):\n%s", texts, diff)
		}
		if diff := cmp.Diff(wantURI, st.uri, cmpEmpty); diff != "" {
			t.Fatalf("texts %q: uri texts differ (-contains +prefilter):\n%s", texts, diff)
		}
	}
	if len(fired) < len(s.rules)*9/10 || short < 100 || long < 100 {
		t.Errorf("the texts held keywords of %d of %d rules (want 90%%), %d times in a text too short for the rule and %d not (want 100 each)",
			len(fired), len(s.rules), short, long)
	}
}

// cmpEmpty makes nil and empty slices equal.
var cmpEmpty = cmp.Comparer(func(a, b []int) bool { return slices.Equal(a, b) })

// TestGitleaksLogsNothing backs the package documentation's claim: on
// the paths the Scanner uses, gitleaks logs nothing at its logger's
// default level (Info), so the Scanner need not touch that logger. The
// test swaps gitleaks' logger for one writing to a buffer at Info level
// (and restores it), then scans texts that exercise findings, allowlists
// (stop words, global and rule regexes), a generic rule yielding to a
// specific one, and the rules built both ways.
func TestGitleaksLogsNothing(t *testing.T) {
	var buf bytes.Buffer
	saved := logging.Logger
	logging.Logger = zerolog.New(&buf).Level(zerolog.InfoLevel)
	defer func() { logging.Logger = saved }()
	s := New()
	texts := []string{
		sampleGitHubPAT, "token: " + sampleGitHubPAT, "api_key = Zq8vR2kL9xT4wQ8p", "password=hunter2xyzA9",
		"ghp_" + strings.Repeat("x", 36), "AKIAIOSFODNN7EXAMPLE", "api_key = example-value-here",
		"secret=Zq8vR2" + "password" + "kL9xT4", sampleSlackBot, sampleStripe,
		"postgres://admin:Pa55w0rdXyZq@db.internal:5432/prod",
	}
	found, err := s.ScanSecrets(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) < 5 {
		t.Fatalf("%d findings; the texts must hold secrets for the test to mean something", len(found))
	}
	if err := s.WarmUp(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ScanSecrets(context.Background(), texts); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 0 {
		t.Errorf("gitleaks logged at Info level or above:\n%s", buf.String())
	}
	// The same logger at Trace level does log on this path (it quotes
	// skipped secrets), so the buffer above was listening.
	logging.Logger = zerolog.New(&buf).Level(zerolog.TraceLevel)
	if _, err := s.ScanSecrets(context.Background(), texts); err != nil {
		t.Fatal(err)
	}
	if buf.Len() == 0 {
		t.Errorf("gitleaks logged nothing at Trace level either: the test no longer observes its logger")
	}
}
