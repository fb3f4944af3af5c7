package secrets

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"

	"github.com/toolscore/toolscore/internal/secrets/internal/secretrules"
)

// rule is one gitleaks content rule of a Scanner, with its Detector built
// on first use.
type rule struct {
	id string
	// minLen is the least number of bytes the rule's regex can match.
	minLen int
	// mayMatch, when set, is an exact prefilter (see rulePrefilters).
	mayMatch func(string) bool
	// spec is the rule's static definition.
	spec *secretrules.Rule
	// built is the rule's Detector, once built (see detector).
	built builtRule
}

// builtRule is a rule's Detector, built on first use.
type builtRule struct {
	once sync.Once
	det  atomic.Pointer[detect.Detector]
	err  error
	// scanning reports that det's allowlists find their stop words by
	// scanning for each in turn (secretrules.StopWordScan) rather than
	// with gitleaks' trie; ran counts the bytes of text the rule has run
	// on, and past trieAfter bytes, trie replaces det by the Detector
	// with the trie.
	scanning bool
	ran      atomic.Int64
	trie     sync.Once
}

// trieAfter is how many bytes of text a rule whose allowlists scan for
// their stop words runs on before it gets gitleaks' trie over them. Of
// the default rules only generic-api-key has a long list (about 1,500
// words): its Detector takes about 8 ms more to build with the trie,
// which then saves about 0.1 ms per check, and the rule makes at most one
// check per 14 bytes of text (its shortest match). So the scans cost at
// most about what the trie would have before it is built, and a process
// that scans little text (a CLI evaluation) never builds it.
const trieAfter = 1 << 10

// detector returns the Detector holding rule r of s alone (with the rules
// it requires and the global allowlists), building it on the first call,
// with allowlists that scan for their stop words (see builtRule); later
// calls return the same Detector, or the one that replaced it. Both find
// exactly what gitleaks' own Detector finds. The error is non-nil only
// when the rule does not build (a bug in the generated table, which the
// secretrules tests would catch). It is safe for concurrent use.
func (r *rule) detector(s *Scanner) (*detect.Detector, error) {
	r.build(s, secretrules.StopWordScan)
	return r.built.det.Load(), r.built.err
}

// build builds the rule's Detector unless it is built; sw says how its
// allowlists match their stop words (a rule without stop words gets
// StopWordTrie, which then costs nothing).
func (r *rule) build(s *Scanner, sw secretrules.StopWordMatch) {
	b := &r.built
	b.once.Do(func() {
		if !r.spec.HasStopWords() {
			sw = secretrules.StopWordTrie
		}
		d, err := s.newDetector(r.spec, sw)
		if err != nil {
			b.err = err
			return
		}
		b.scanning = sw == secretrules.StopWordScan
		b.det.Store(d)
	})
}

// ran records that the rule (built) ran on n bytes of text; past
// trieAfter bytes, a rule whose allowlists scan for their stop words gets
// gitleaks' trie.
func (r *rule) ran(s *Scanner, n int) {
	if b := &r.built; b.scanning && b.ran.Add(int64(n)) >= trieAfter {
		r.useTrie(s)
	}
}

// useTrie replaces the Detector of a rule (built, with allowlists that
// scan for their stop words) by the one gitleaks' Translate would build,
// with the trie; the scanning one stays if that fails (it cannot: the
// same patterns built).
func (r *rule) useTrie(s *Scanner) {
	b := &r.built
	b.trie.Do(func() {
		if d, err := s.newDetector(r.spec, secretrules.StopWordTrie); err == nil {
			b.det.Store(d)
		}
	})
}

// newGlobalAllowlists builds gitleaks' global allowlists
// (secretrules.GlobalAllowlists), which every rule's Detector shares.
func newGlobalAllowlists() ([]*config.Allowlist, error) {
	out := make([]*config.Allowlist, 0, len(secretrules.GlobalAllowlists))
	for _, a := range secretrules.GlobalAllowlists {
		al, err := secretrules.NewAllowlist(a, secretrules.StopWordTrie)
		if err != nil {
			return nil, fmt.Errorf("gitleaks global allowlist: %w", err)
		}
		out = append(out, al)
	}
	return out, nil
}

// newDetector builds the Detector of one content rule: a config holding
// the rule, the rules it requires, its keywords (lower-cased, as gitleaks
// matches them) and the global allowlists, as gitleaks' Translate would
// have built them (sw says how the rules' allowlists match their stop
// words).
func (s *Scanner) newDetector(spec *secretrules.Rule, sw secretrules.StopWordMatch) (*detect.Detector, error) {
	global, err := s.global()
	if err != nil {
		return nil, err
	}
	r, err := secretrules.NewRule(*spec, sw)
	if err != nil {
		return nil, fmt.Errorf("gitleaks rule %w", err)
	}
	sub := config.Config{
		Rules:      map[string]config.Rule{spec.ID: r},
		Keywords:   map[string]struct{}{},
		Allowlists: global,
	}
	for _, req := range spec.Required {
		rs := s.spec(req.RuleID)
		if rs == nil {
			rs = s.aux[req.RuleID]
		}
		rr, err := secretrules.NewRule(*rs, sw)
		if err != nil {
			return nil, fmt.Errorf("gitleaks rule %w", err)
		}
		sub.Rules[req.RuleID] = rr
	}
	for _, k := range spec.Keywords {
		sub.Keywords[strings.ToLower(k)] = struct{}{}
	}
	return detect.NewDetector(sub), nil
}

// rulePrefilter is an exact, cheap necessary condition for one rule: a
// text for which mayMatch reports false cannot match the rule's regular
// expression, so the rule is not run on it. It applies only while the
// rule's pattern is exactly regex: a gitleaks upgrade that changes the rule
// turns it off rather than making it wrong.
type rulePrefilter struct {
	regex    string
	mayMatch func(string) bool
}

// rulePrefilters are the prefilters by rule id. generic-api-key has one
// because its keywords (key, token, access, auth, ...) are common words and
// its pattern is the slowest of the set for Go's regexp (about 0.4 µs per
// byte of text, 100 times the others).
var rulePrefilters = map[string]rulePrefilter{
	"generic-api-key": {genericAPIKeyRegex, genericAPIKeyMayMatch},
}

// genericAPIKeyRegex is gitleaks v8.30.1's generic-api-key pattern.
const genericAPIKeyRegex = `(?i)[\w.-]{0,50}?(?:access|auth|(?-i:[Aa]pi|API)|credential|creds|key|passw(?:or)?d|secret|token)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3})(?:[\x60'"\s;]|\\[nr]|$)`

// genericAPIKeyMayMatch is the necessary condition of genericAPIKeyRegex
// on ASCII text: every operator alternative ends with one of = > : | , and
// is followed by at most 5 of [`'"\s=] and then either 10 of [\w.=-] or
// one of [a-z0-9] and 11 of [a-z0-9+/] (case-insensitively). Text with
// non-ASCII bytes always may match: under (?i) the classes also hold the
// Kelvin sign and the long s.
func genericAPIKeyMayMatch(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return true
		}
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '=', '>', ':', '|', ',':
		default:
			continue
		}
		for p := i + 1; p <= i+6 && p <= len(s); p++ {
			if p > i+1 && !isGenericFiller(s[p-1]) {
				break
			}
			if runOf(s[p:], isGenericSecretByte) >= 10 ||
				p < len(s) && isASCIIAlnum(s[p]) && runOf(s[p+1:], isBase64Byte) >= 11 {
				return true
			}
		}
	}
	return false
}

// isGenericFiller reports whether c is in [\x60'"\s=] (RE2's \s is
// [\t\n\f\r ]).
func isGenericFiller(c byte) bool {
	switch c {
	case '`', '\'', '"', '\t', '\n', '\f', '\r', ' ', '=':
		return true
	}
	return false
}

// isGenericSecretByte reports whether c is in [\w.=-].
func isGenericSecretByte(c byte) bool {
	return isASCIIAlnum(c) || c == '_' || c == '.' || c == '=' || c == '-'
}

// isBase64Byte reports whether c is in [a-z0-9+/] case-insensitively.
func isBase64Byte(c byte) bool { return isASCIIAlnum(c) || c == '+' || c == '/' }

func isASCIIAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// runOf returns how many leading bytes of s satisfy ok, counting up to 12.
func runOf(s string, ok func(byte) bool) int {
	n := 0
	for n < len(s) && n < 12 && ok(s[n]) {
		n++
	}
	return n
}
