package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/zricethezav/gitleaks/v8/config"

	"github.com/toolscore/toolscore/internal/secrets/internal/secretrules"
)

// TestRulesFileUpToDate regenerates rules.go from the pinned gitleaks
// default config and compares it byte for byte with the committed file.
func TestRulesFileUpToDate(t *testing.T) {
	cfg, err := secretrules.LoadDefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	got, err := generate(cfg, config.DefaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../rules.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("rules.go is stale (run go generate ./internal/secrets/internal/secretrules); line %d:\ncommitted: %s\ngenerated: %s", i+1, wl[i], gl[i])
			}
		}
		t.Fatalf("rules.go is stale (run go generate ./internal/secrets/internal/secretrules): %d lines committed, %d generated", len(wl), len(gl))
	}
}

// TestGenerateRequired checks the parts of the output the default config
// does not exercise: composite rules, AND allowlists, commits.
func TestGenerateRequired(t *testing.T) {
	three := 3
	raw := "x"
	cfg := config.Config{Rules: map[string]config.Rule{}}
	for _, r := range []secretrules.Rule{
		{ID: "main-rule", Regex: `k(\d+)`, Keywords: []string{"k"}, Tags: []string{}, Required: []secretrules.Required{{RuleID: "aux-rule", WithinLines: &three}},
			Allowlists: []secretrules.Allowlist{{MatchCondition: config.AllowlistMatchAnd, Commits: []string{"abc"}, Regexes: []string{"x"}}}},
		{ID: "aux-rule", Regex: `a`, Keywords: []string{}, Tags: []string{}, SkipReport: true},
	} {
		cr, err := secretrules.NewRule(r, secretrules.StopWordTrie)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Rules[r.ID] = cr
	}
	src, err := generate(cfg, raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`Required: []Required{
			{RuleID: "aux-rule", WithinLines: new(int(3)), WithinColumns: nil},
		},`,
		"MatchCondition: config.AllowlistMatchAnd,",
		`Commits:        []string{"abc"},`,
		"var AuxRules = []Rule{\n\t{\n\t\tID:         \"aux-rule\",",
		"SkipReport: true,",
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("generated source lacks %q:\n%s", want, src)
		}
	}
}
