// Package secretrules holds gitleaks' default rule set as static Go data
// (rules.go, generated from the pinned gitleaks version's
// config.DefaultConfig by `go generate`), so the default secret scanner
// (package secrets) can prefilter texts by the rules' keywords and lengths
// without loading the TOML config, and build the gitleaks rules a text
// actually needs, one at a time.
//
// Each Rule is the plain-data form of one config.Rule as gitleaks'
// config.ViperConfig.Translate builds it (patterns as strings), plus what
// the scanner derives from it: its minimum match length and the literal
// prefixes of its secrets. NewRule and NewAllowlist turn the data back into
// what Translate builds; the package's tests check both directions against
// the real loaded config, so a gitleaks upgrade that changes the rules
// fails the tests until rules.go is generated again.
package secretrules

//go:generate go run ./gen -o rules.go

import (
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	glregexp "github.com/zricethezav/gitleaks/v8/regexp"
)

// Rule is one gitleaks rule: the fields of config.Rule as Translate fills
// them, with regular expressions as their source text, and the scanner's
// derived data.
type Rule struct {
	// ID is config.Rule.RuleID.
	ID string
	// Description is config.Rule.Description.
	Description string
	// Regex is the source of config.Rule.Regex ("" when nil: a path-only
	// rule).
	Regex string
	// Path is the source of config.Rule.Path ("" when nil).
	Path string
	// SecretGroup is config.Rule.SecretGroup.
	SecretGroup int
	// Entropy is config.Rule.Entropy (bits per character; 0: no check).
	Entropy float64
	// Keywords are config.Rule.Keywords, lower-cased as Translate leaves
	// them, in the config's order; empty for a rule run on every text.
	Keywords []string
	// Tags are config.Rule.Tags.
	Tags []string
	// Allowlists are config.Rule.Allowlists, in order (the rule's own, then
	// the global allowlists that target it).
	Allowlists []Allowlist
	// Required are config.Rule.RequiredRules, in order.
	Required []Required
	// SkipReport is config.Rule.SkipReport.
	SkipReport bool

	// MinLen is a lower bound on the number of bytes of any match of
	// Regex (RegexMinLen): shorter texts cannot match.
	MinLen int
	// Always reports that the rule has no keywords, so gitleaks runs it on
	// every text.
	Always bool
	// Prefixes are the literal texts the rule's secrets may start with
	// (SecretPrefixes of Regex and SecretGroup).
	Prefixes []LiteralPrefix
}

// Allowlist is one config.Allowlist as Translate builds it, with regular
// expressions as their source text.
type Allowlist struct {
	// Description is config.Allowlist.Description.
	Description string
	// MatchCondition is config.Allowlist.MatchCondition.
	MatchCondition config.AllowlistMatchCondition
	// Commits are config.Allowlist.Commits (sorted: Validate keeps them
	// as a set).
	Commits []string
	// Paths are the sources of config.Allowlist.Paths, in order.
	Paths []string
	// RegexTarget is config.Allowlist.RegexTarget ("", "match" or "line").
	RegexTarget string
	// Regexes are the sources of config.Allowlist.Regexes, in order.
	Regexes []string
	// StopWords are config.Allowlist.StopWords, lower-cased and sorted
	// (Validate keeps them as a set).
	StopWords []string
}

// Required is one config.Required: a rule that must also match near a
// composite rule's match.
type Required struct {
	// RuleID is config.Required.RuleID.
	RuleID string
	// WithinLines is config.Required.WithinLines (nil: no limit).
	WithinLines *int
	// WithinColumns is config.Required.WithinColumns (nil: no limit).
	WithinColumns *int
}

// LiteralPrefix is a literal text that a rule's secrets may start with;
// Fold says it is matched case-insensitively.
type LiteralPrefix struct {
	Text string
	Fold bool
}

// LoadDefaultConfig loads gitleaks' default config (config.DefaultConfig)
// the way gitleaks does (viper, then Translate), in a private viper
// instance. It costs tens of milliseconds; the tests and the generator use
// it, the scanner uses Rules instead. The error is non-nil only when the
// pinned config does not load.
func LoadDefaultConfig() (config.Config, error) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return config.Config{}, fmt.Errorf("read gitleaks default config: %w", err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return config.Config{}, fmt.Errorf("decode gitleaks default config: %w", err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		return config.Config{}, fmt.Errorf("translate gitleaks default config: %w", err)
	}
	return cfg, nil
}

// FromConfig returns the static form of cfg: its content rules (those with
// a regular expression and without SkipReport, which are the only ones
// that can report a finding in a text) sorted by id, the other rules that
// content rules require (sorted by id; aux), and the global allowlists.
func FromConfig(cfg config.Config) (rules, aux []Rule, global []Allowlist) {
	required := map[string]bool{}
	for _, r := range cfg.Rules {
		if r.Regex == nil || r.SkipReport {
			continue
		}
		rules = append(rules, fromRule(r))
		for _, req := range r.RequiredRules {
			required[req.RuleID] = true
		}
	}
	for id := range required {
		if r, ok := cfg.Rules[id]; ok && (r.Regex == nil || r.SkipReport) {
			aux = append(aux, fromRule(r))
		}
	}
	byID := func(a, b Rule) int { return strings.Compare(a.ID, b.ID) }
	slices.SortFunc(rules, byID)
	slices.SortFunc(aux, byID)
	for _, a := range cfg.Allowlists {
		global = append(global, fromAllowlist(a))
	}
	return rules, aux, global
}

// fromRule is the static form of r.
func fromRule(r config.Rule) Rule {
	out := Rule{
		ID:          r.RuleID,
		Description: r.Description,
		SecretGroup: r.SecretGroup,
		Entropy:     r.Entropy,
		Keywords:    r.Keywords,
		Tags:        r.Tags,
		SkipReport:  r.SkipReport,
		Always:      len(r.Keywords) == 0,
	}
	if r.Regex != nil {
		out.Regex = r.Regex.String()
		out.MinLen = RegexMinLen(out.Regex)
		out.Prefixes = SecretPrefixes(out.Regex, r.SecretGroup)
	}
	if r.Path != nil {
		out.Path = r.Path.String()
	}
	for _, a := range r.Allowlists {
		out.Allowlists = append(out.Allowlists, fromAllowlist(a))
	}
	for _, req := range r.RequiredRules {
		out.Required = append(out.Required, Required{RuleID: req.RuleID, WithinLines: req.WithinLines, WithinColumns: req.WithinColumns})
	}
	return out
}

// fromAllowlist is the static form of a.
func fromAllowlist(a *config.Allowlist) Allowlist {
	out := Allowlist{
		Description:    a.Description,
		MatchCondition: a.MatchCondition,
		Commits:        slices.Sorted(slices.Values(a.Commits)),
		RegexTarget:    a.RegexTarget,
		StopWords:      slices.Sorted(slices.Values(a.StopWords)),
	}
	for _, p := range a.Paths {
		out.Paths = append(out.Paths, p.String())
	}
	for _, re := range a.Regexes {
		out.Regexes = append(out.Regexes, re.String())
	}
	return out
}

// StopWordMatch says how a built allowlist finds its stop words in a
// secret.
type StopWordMatch int

const (
	// StopWordTrie builds gitleaks' Aho-Corasick trie over the stop words,
	// as Translate does: milliseconds for a long list (generic-api-key has
	// about 1,500 words), then well under a microsecond per check.
	StopWordTrie StopWordMatch = iota
	// StopWordScan builds no trie: gitleaks then looks for each stop word
	// in the lower-cased secret in turn (Allowlist.ContainsStopWord's
	// other branch), which gives the same answers, costs nothing to build
	// and tens of microseconds per check for a long list.
	StopWordScan
)

// HasStopWords reports whether one of r's allowlists has stop words.
func (r *Rule) HasStopWords() bool {
	for _, a := range r.Allowlists {
		if len(a.StopWords) > 0 {
			return true
		}
	}
	return false
}

// NewRule builds the config.Rule that Translate builds for r: its regular
// expressions compiled, its allowlists built (see NewAllowlist; sw says
// how they match stop words) and validated, the rule validated. Keywords
// and Tags are copies, so the Rule's data is never shared with gitleaks.
// The error is non-nil when a pattern does not compile or the rule or an
// allowlist is invalid (Translate panics or fails on those).
func NewRule(r Rule, sw StopWordMatch) (config.Rule, error) {
	out := config.Rule{
		RuleID:      r.ID,
		Description: r.Description,
		SecretGroup: r.SecretGroup,
		Entropy:     r.Entropy,
		Keywords:    append([]string{}, r.Keywords...),
		Tags:        append([]string{}, r.Tags...),
		SkipReport:  r.SkipReport,
	}
	var err error
	if r.Regex != "" {
		if out.Regex, err = compile(r.Regex); err != nil {
			return config.Rule{}, fmt.Errorf("%s: %w", r.ID, err)
		}
	}
	if r.Path != "" {
		if out.Path, err = compile(r.Path); err != nil {
			return config.Rule{}, fmt.Errorf("%s: %w", r.ID, err)
		}
	}
	for _, a := range r.Allowlists {
		al, err := NewAllowlist(a, sw)
		if err != nil {
			return config.Rule{}, fmt.Errorf("%s: %w", r.ID, err)
		}
		out.Allowlists = append(out.Allowlists, al)
	}
	for _, req := range r.Required {
		out.RequiredRules = append(out.RequiredRules, &config.Required{RuleID: req.RuleID, WithinLines: req.WithinLines, WithinColumns: req.WithinColumns})
	}
	// Translate validates a copy of each rule (its rules keep
	// validated == false); do the same.
	check := out
	if err := check.Validate(); err != nil {
		return config.Rule{}, err
	}
	return out, nil
}

// NewAllowlist builds and validates the config.Allowlist that Translate
// builds for a. With StopWordScan, the stop words of an allowlist that
// also has commits, paths or regexes are set after validation, so no trie
// is built over them; every exported field is the same either way. The
// error is non-nil when a pattern does not compile or the allowlist is
// empty.
func NewAllowlist(a Allowlist, sw StopWordMatch) (*config.Allowlist, error) {
	out := &config.Allowlist{
		Description:    a.Description,
		MatchCondition: a.MatchCondition,
		Commits:        append([]string(nil), a.Commits...),
		RegexTarget:    a.RegexTarget,
		StopWords:      append([]string(nil), a.StopWords...),
	}
	// With StopWordScan, validate without the stop words (the table's are
	// already what Validate makes of them: lower-cased, each once) and set
	// them afterwards. An allowlist of stop words alone would not
	// validate without them: it gets its trie.
	scan := sw == StopWordScan && len(a.StopWords) > 0 &&
		(len(a.Commits) > 0 || len(a.Paths) > 0 || len(a.Regexes) > 0)
	if scan {
		out.StopWords = nil
	}
	for _, p := range a.Paths {
		re, err := compile(p)
		if err != nil {
			return nil, err
		}
		out.Paths = append(out.Paths, re)
	}
	for _, p := range a.Regexes {
		re, err := compile(p)
		if err != nil {
			return nil, err
		}
		out.Regexes = append(out.Regexes, re)
	}
	if err := out.Validate(); err != nil {
		return nil, err
	}
	if scan {
		out.StopWords = append([]string(nil), a.StopWords...)
	}
	return out, nil
}

// compile compiles pattern with gitleaks' regexp package (the standard
// library's, or RE2 under gitleaks' gore2regex build tag), returning its
// panic as an error.
func compile(pattern string) (re *glregexp.Regexp, err error) {
	defer func() {
		if p := recover(); p != nil {
			re, err = nil, fmt.Errorf("compile %q: %v", pattern, p)
		}
	}()
	return glregexp.MustCompile(pattern), nil
}

// RegexMinLen returns a lower bound on the number of bytes any match of
// the RE2 pattern has (0 when it cannot tell).
func RegexMinLen(pattern string) int {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 0
	}
	return syntaxMinLen(re.Simplify())
}

// syntaxMinLen is RegexMinLen on a parsed expression. Every rune is at
// least one byte, so counting runes gives a byte lower bound.
func syntaxMinLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return syntaxMinLen(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min * syntaxMinLen(re.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, s := range re.Sub {
			n += syntaxMinLen(s)
		}
		return n
	case syntax.OpAlternate:
		n := -1
		for _, s := range re.Sub {
			if m := syntaxMinLen(s); n < 0 || m < n {
				n = m
			}
		}
		return max(n, 0)
	}
	// Star, Quest, empty-width assertions, empty match, no match.
	return 0
}

// maxPrefixes bounds the literal prefixes kept per rule.
const maxPrefixes = 64

// SecretPrefixes returns the literal prefixes of the secrets of a gitleaks
// rule: those of its capture group secretGroup (the first group when 0,
// gitleaks taking the first non-empty one; the whole pattern when it has
// no group), as literalPrefixes computes them, without empty ones; nil
// when the pattern does not parse or no secret starts with a literal.
func SecretPrefixes(pattern string, secretGroup int) []LiteralPrefix {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	want := max(secretGroup, 1)
	var find func(*syntax.Regexp) *syntax.Regexp
	find = func(r *syntax.Regexp) *syntax.Regexp {
		if r.Op == syntax.OpCapture && r.Cap == want {
			return r
		}
		for _, sub := range r.Sub {
			if f := find(sub); f != nil {
				return f
			}
		}
		return nil
	}
	node := find(re)
	if node == nil {
		node = re
	}
	lits, _ := literalPrefixes(node)
	var out []LiteralPrefix
	for _, l := range lits {
		if l.Text != "" {
			out = append(out, l)
		}
	}
	return out
}

// literalPrefixes returns the literal texts that every match of re starts
// with, one per way it can start ("" when a way starts with no literal),
// and whether each text is the whole match (so a concatenation may extend
// it). It stops extending at 8 bytes or maxPrefixes texts.
func literalPrefixes(re *syntax.Regexp) ([]LiteralPrefix, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return []LiteralPrefix{{string(re.Rune), re.Flags&syntax.FoldCase != 0}}, true
	case syntax.OpCapture:
		return literalPrefixes(re.Sub[0])
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []LiteralPrefix{{}}, true
	case syntax.OpConcat:
		acc := []LiteralPrefix{{}}
		for _, sub := range re.Sub {
			lits, whole := literalPrefixes(sub)
			if len(acc)*len(lits) > maxPrefixes {
				return acc, false
			}
			next := make([]LiteralPrefix, 0, len(acc)*len(lits))
			long := true
			for _, a := range acc {
				for _, l := range lits {
					t := LiteralPrefix{a.Text + l.Text, a.Fold || l.Fold}
					next = append(next, t)
					long = long && len(t.Text) >= 8
				}
			}
			acc = next
			if !whole || long {
				return acc, false
			}
		}
		return acc, true
	case syntax.OpAlternate:
		var out []LiteralPrefix
		whole := true
		for _, sub := range re.Sub {
			lits, w := literalPrefixes(sub)
			out = append(out, lits...)
			whole = whole && w
			if len(out) > maxPrefixes {
				return []LiteralPrefix{{}}, false
			}
		}
		return out, whole
	}
	// Classes, repetitions, any character: no literal.
	return []LiteralPrefix{{}}, false
}
