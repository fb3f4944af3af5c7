package engine

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"iter"
	mathbits "math/bits"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/toolscore/toolscore/internal/engine/internal/secretrules"
)

// This file implements the secret scanner behind the credentials check
// (SPEC section 5; docs/checks.md "credentials").
//
// Secrets are found with the default rule set of gitleaks v8, used as a
// library, plus a rule of ours for argument keys that name a secret and
// one for passwords in URLs.
//
// gitleaks' Detector runs every one of its ~220 rules' keyword checks on
// each text it is given, which costs about 10 µs even for "LIS", and
// loading its rule set (TOML, then ~220 regular expressions and the
// allowlists) costs about 60 ms of CPU. We keep its semantics and pay only
// for the rules that can fire. The rule set is compiled into the binary as
// static data (package secretrules, generated from gitleaks' default
// config): one Aho-Corasick automaton over all rule keywords (gitleaks' own
// prefilter, lower-cased the same way) tells which rules' keywords occur in
// a text, and the minimum match length of each rule's regular expression
// tells which texts are too short to match at all. Only a rule that
// passes both for some text is built, on first use: its regular
// expressions compiled and put in a Detector of its own that holds that
// rule alone (with the global allowlists, built once). Findings are then
// filtered across rules as gitleaks does (a generic rule yields to a
// specific one on the same secret). No rule is dropped or changed.

// RuleSecretNamedArgument is the Finding.Rule of an argument whose key
// names a secret (password, api_key, token, ...) and whose value is a
// literal rather than a reference such as "${API_KEY}".
const RuleSecretNamedArgument = "secret-named-argument"

// secretRules is the keyword index over the static rule set; read-only
// and safe for concurrent use once built. Rules build their Detectors on
// first use.
type secretRules struct {
	// rules are the content rules in rule-id order (secretrules.Rules).
	rules []secretRule
	// aux are the other rules that content rules require
	// (secretrules.AuxRules), by id.
	aux map[string]*secretrules.Rule
	// keywords finds the rules whose keywords occur in lower-cased text.
	keywords *secretrules.KeywordAutomaton
	// always lists the rules without keywords, which gitleaks runs on
	// every text.
	always []int
	// minLen is the smallest minLen over all rules: shorter texts cannot
	// hold a secret.
	minLen int
}

// secretRule is one gitleaks rule, with its Detector built on first use.
type secretRule struct {
	id string
	// minLen is the least number of bytes the rule's regex can match.
	minLen int
	// mayMatch, when set, is an exact prefilter (see rulePrefilters).
	mayMatch func(string) bool
	// spec is the rule's static definition.
	spec *secretrules.Rule
	// set is the rule set the rule belongs to.
	set *secretRules
	// built is the rule's Detector, once built (see detector).
	built *builtRule
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

// detector returns the Detector holding rule r alone (with the rules it
// requires and the global allowlists), building it on the first call,
// with allowlists that scan for their stop words (see builtRule); later
// calls return the same Detector, or the one that replaced it. Both find
// exactly what gitleaks' own Detector finds. The error is non-nil only
// when the rule does not build (a bug in the generated table, which the
// secretrules tests would catch). It is safe for concurrent use.
func (r *secretRule) detector() (*detect.Detector, error) {
	r.build(secretrules.StopWordScan)
	return r.built.det.Load(), r.built.err
}

// build builds the rule's Detector unless it is built; sw says how its
// allowlists match their stop words (a rule without stop words gets
// StopWordTrie, which then costs nothing).
func (r *secretRule) build(sw secretrules.StopWordMatch) {
	b := r.built
	b.once.Do(func() {
		if !r.spec.HasStopWords() {
			sw = secretrules.StopWordTrie
		}
		d, err := r.set.newDetector(r.spec, sw)
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
func (r *secretRule) ran(n int) {
	if b := r.built; b.scanning && b.ran.Add(int64(n)) >= trieAfter {
		r.useTrie()
	}
}

// useTrie replaces the Detector of a rule (built, with allowlists that
// scan for their stop words) by the one gitleaks' Translate would build,
// with the trie; the scanning one stays if that fails (it cannot: the
// same patterns built).
func (r *secretRule) useTrie() {
	b := r.built
	b.trie.Do(func() {
		if d, err := r.set.newDetector(r.spec, secretrules.StopWordTrie); err == nil {
			b.det.Store(d)
		}
	})
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

// loadSecretRules returns the index over gitleaks' default rule set
// (secretrules.Rules, with its generated keyword automaton), making it on
// the first call (microseconds: no rule is compiled); later calls return
// the same value. The error is non-nil only when the generated table is
// inconsistent (a rule requires one it does not hold); the credentials
// check then reports unknown.
var loadSecretRules = sync.OnceValues(func() (*secretRules, error) {
	return newSecretRules(secretrules.Rules, secretrules.AuxRules, &secretrules.Keywords)
})

// loadGlobalAllowlists builds gitleaks' global allowlists
// (secretrules.GlobalAllowlists), shared by every rule's Detector, on the
// first call; later calls return the same values. It is called before any
// Detector is built, so it also silences gitleaks' logger: gitleaks logs
// through a package-level zerolog logger, at trace level with the secrets
// it skips, and the engine never logs.
var loadGlobalAllowlists = sync.OnceValues(func() ([]*config.Allowlist, error) {
	logging.Logger = zerolog.Nop()
	out := make([]*config.Allowlist, 0, len(secretrules.GlobalAllowlists))
	for _, a := range secretrules.GlobalAllowlists {
		al, err := secretrules.NewAllowlist(a, secretrules.StopWordTrie)
		if err != nil {
			return nil, fmt.Errorf("gitleaks global allowlist: %w", err)
		}
		out = append(out, al)
	}
	return out, nil
})

// WarmUp builds the whole secret-detection rule set of the credentials
// check now (gitleaks' default rules: every rule's regular expressions and
// Detector, and the global allowlists; tens of milliseconds of CPU once
// per process), so that no evaluation pays for building a rule the first
// time a text needs it; a server calls it at start. Without it, each rule
// is built the first time some text holds one of its keywords. Later
// calls, and Evaluate, reuse the built rules. It is safe for concurrent
// use. The error is non-nil only when a rule of the pinned set cannot be
// built; the credentials check then reports unknown for texts that need
// that rule.
func WarmUp() error {
	sr, err := loadSecretRules()
	if err != nil {
		return err
	}
	for i := range sr.rules {
		r := &sr.rules[i]
		r.build(secretrules.StopWordTrie)
		if r.built.err != nil {
			return r.built.err
		}
		if r.built.scanning {
			r.useTrie()
		}
	}
	return nil
}

// newSecretRules makes the index over the content rules rules (sorted by
// id), whose keyword automaton is keywords, and gives each rule a Detector
// built on first use; aux are the other rules that content rules may
// require. The error is non-nil when a rule requires one that neither list
// holds.
func newSecretRules(rules, aux []secretrules.Rule, keywords *secretrules.KeywordAutomaton) (*secretRules, error) {
	sr := &secretRules{
		minLen:   -1,
		rules:    make([]secretRule, len(rules)),
		aux:      make(map[string]*secretrules.Rule, len(aux)),
		keywords: keywords,
	}
	for i := range aux {
		sr.aux[aux[i].ID] = &aux[i]
	}
	built := make([]builtRule, len(rules))
	for i := range rules {
		spec := &rules[i]
		if spec.Always {
			sr.always = append(sr.always, i)
		}
		rule := secretRule{
			id:     spec.ID,
			minLen: spec.MinLen,
			spec:   spec,
			set:    sr,
			built:  &built[i],
		}
		if pf, ok := rulePrefilters[spec.ID]; ok && spec.Regex == pf.regex {
			rule.mayMatch = pf.mayMatch
		}
		sr.rules[i] = rule
		if sr.minLen < 0 || rule.minLen < sr.minLen {
			sr.minLen = rule.minLen
		}
	}
	if sr.minLen < 0 {
		sr.minLen = 0
	}
	for _, r := range sr.rules {
		for _, req := range r.spec.Required {
			if sr.spec(req.RuleID) == nil && sr.aux[req.RuleID] == nil {
				return nil, fmt.Errorf("gitleaks rule %s requires rule %s, which the rule set does not hold", r.id, req.RuleID)
			}
		}
	}
	return sr, nil
}

// spec returns the content rule with the given id, nil when there is none.
func (sr *secretRules) spec(id string) *secretrules.Rule {
	i, ok := slices.BinarySearchFunc(sr.rules, id, func(r secretRule, id string) int { return strings.Compare(r.id, id) })
	if !ok {
		return nil
	}
	return sr.rules[i].spec
}

// newDetector builds the Detector of one content rule: a config holding
// the rule, the rules it requires, its keywords (lower-cased, as gitleaks
// matches them) and the global allowlists, as gitleaks' Translate would
// have built them (sw says how the rules' allowlists match their stop
// words).
func (sr *secretRules) newDetector(spec *secretrules.Rule, sw secretrules.StopWordMatch) (*detect.Detector, error) {
	global, err := loadGlobalAllowlists()
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
		rs := sr.spec(req.RuleID)
		if rs == nil {
			rs = sr.aux[req.RuleID]
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

// secretHit is one secret found in one text.
type secretHit struct {
	rule   string
	secret string
}

// scanner scans texts with a loaded rule set. It reuses buffers, so one
// scanner serves one goroutine.
type scanner struct {
	rules *secretRules
	lower []byte
	seen  []uint64       // bitset over rules: the rules to run on the text
	n     int            // the length of the text being scanned
	onKW  func(rule int) // sc.mark
	found []report.Finding
	hits  []secretHit
	// err is the first error of a rule that a text needed and that could
	// not be built (see secretRule.detector); the scan goes on without
	// that rule.
	err error
}

func newScanner(sr *secretRules) *scanner {
	sc := &scanner{rules: sr, seen: make([]uint64, (len(sr.rules)+63)/64)}
	sc.onKW = sc.mark
	return sc
}

// mark schedules rule i unless the text is too short for it.
func (sc *scanner) mark(i int) {
	if sc.rules.rules[i].minLen <= sc.n {
		sc.seen[i/64] |= 1 << (i % 64)
	}
}

// Texts longer than fragmentSize are scanned in overlapping fragments.
// gitleaks' Detector does work proportional to the whole line (and to the
// number of line breaks before it) for every match it finds, so one long
// text holding many matches costs time quadratic in its length; the
// gitleaks CLI itself reads files in chunks of about 100 KB. Fragments of
// at most fragmentSize bytes keep the scan linear. Consecutive fragments
// overlap by at least fragmentOverlap bytes, so any match of at most that
// many bytes (every real secret of the default rules: private keys of
// RSA-4096 are about 3.3 KB) lies wholly inside one fragment. Fragments
// end after a line break, else after white space, when one is near, so a
// boundary rarely cuts a token.
const (
	fragmentSize    = 16 << 10
	fragmentOverlap = 4 << 10
	// fragmentSlack is how far back from the ideal boundary a line break or
	// white space is looked for.
	fragmentSlack = 2 << 10
)

// fragmentEnd returns where the fragment of s starting at start ends:
// len(s) when the rest fits, else just after the last line break (else
// white space) in the last fragmentSlack bytes before start+fragmentSize,
// else start+fragmentSize.
func fragmentEnd(s string, start int) int {
	if len(s)-start <= fragmentSize {
		return len(s)
	}
	return boundaryBefore(s, start+fragmentSize)
}

// boundaryBefore returns the position just after the last line break in
// s[at-fragmentSlack:at], else after the last white space there, else at.
func boundaryBefore(s string, at int) int {
	lo := max(at-fragmentSlack, 0)
	if i := strings.LastIndexByte(s[lo:at], '\n'); i >= 0 {
		return lo + i + 1
	}
	for i := at - 1; i >= lo; i-- {
		if s[i] == ' ' || s[i] == '\t' || s[i] == '\r' {
			return i + 1
		}
	}
	return at
}

// scan returns the secrets gitleaks' default rules find in s, sorted by
// rule then secret; the slice is reused by the next call. A text longer
// than fragmentSize is scanned fragment by fragment (see fragmentSize):
// the next fragment starts at a boundary at most fragmentSlack bytes
// before end-fragmentOverlap. Time and memory are linear in len(s).
func (sc *scanner) scan(s string) []secretHit {
	if len(s) <= fragmentSize {
		sc.scanFragment(s)
	} else {
		var all []secretHit
		for start, end := range fragments(s) {
			all = append(all, sc.scanFragment(s[start:end])...)
		}
		sc.hits = all
	}
	if strings.Contains(s, "://") {
		for _, m := range uriCredentialsRE().FindAllStringSubmatch(s, -1) {
			sc.hits = append(sc.hits, secretHit{rule: RuleURICredentials, secret: m[1]})
		}
	}
	if len(sc.hits) == 0 {
		return nil
	}
	sortHits(sc.hits)
	sc.hits = slices.Compact(sc.hits)
	return sc.hits
}

// RuleURICredentials is the rule id of a password written in a URL's user
// information (RFC 3986 section 3.2.1: scheme://user:password@host), such
// as a database connection string. gitleaks' default rules leave most of
// these out, and they are the commonest way a password reaches a tool
// call's arguments.
const RuleURICredentials = "uri-credentials"

// uriCredentialsRE returns the expression that finds
// scheme://user:password@host; group 1 is the password (at least 3
// characters, no white space, quote, '/', '@' or ':' in it). It is
// compiled on first use (its bounded repeats make a large program, about
// 0.3 ms to compile), which only a text holding "://" needs.
var uriCredentialsRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.\-]{1,30}://[^\s:/@"'<>]{1,256}:([^\s:/@"'<>]{3,256})@[a-z0-9\[]`)
})

// fragments yields the [start, end) byte ranges of the fragments scan
// splits s into: one range for a text of at most fragmentSize bytes; else
// ranges of at most fragmentSize bytes, the first starting at 0, the last
// ending at len(s), each ending at fragmentEnd and the next starting at
// the boundary at most fragmentSlack bytes before end-fragmentOverlap.
func fragments(s string) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		for start := 0; ; {
			end := fragmentEnd(s, start)
			if !yield(start, end) || end == len(s) {
				return
			}
			// end-start > fragmentSize-fragmentSlack, so the next
			// start is past this one.
			start = boundaryBefore(s, end-fragmentOverlap)
		}
	}
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

// scanFragment is scan on one text of at most fragmentSize bytes (or any
// text, with gitleaks' own cost): exactly what gitleaks' Detector finds in
// it with the default rules.
func (sc *scanner) scanFragment(s string) []secretHit {
	sc.hits = sc.hits[:0]
	sr := sc.rules
	if len(s) < sr.minLen {
		return nil
	}
	clear(sc.seen)
	sc.n = len(s)
	for _, i := range sr.always {
		sc.mark(i)
	}
	// gitleaks matches keywords against strings.ToLower(text).
	sc.lower = appendLower(sc.lower[:0], s)
	sr.keywords.Match(sc.lower, sc.onKW)
	sc.found = sc.found[:0]
	for w, bits := range sc.seen {
		for bits != 0 {
			b := mathbits.TrailingZeros64(bits)
			bits &^= 1 << b
			r := &sr.rules[w*64+b]
			if r.mayMatch != nil && !r.mayMatch(s) {
				continue
			}
			det, err := r.detector()
			if err != nil {
				if sc.err == nil {
					sc.err = err
				}
				continue
			}
			sc.found = append(sc.found, det.DetectString(s)...)
			r.ran(len(s))
		}
	}
	if len(sc.found) == 0 {
		return nil
	}
	for i, f := range sc.found {
		if f.Secret == "" || shadowedGeneric(f, sc.found, i) {
			continue
		}
		sc.hits = append(sc.hits, secretHit{rule: f.RuleID, secret: f.Secret})
	}
	sortHits(sc.hits)
	sc.hits = slices.Compact(sc.hits)
	return sc.hits
}

// shadowedGeneric applies gitleaks' cross-rule filter (detect/utils.go
// filter): a finding of a generic rule is dropped when a non-generic rule
// found a secret containing it on the same line.
func shadowedGeneric(f report.Finding, all []report.Finding, self int) bool {
	if !strings.Contains(strings.ToLower(f.RuleID), "generic") {
		return false
	}
	for j, g := range all {
		if j != self && g.StartLine == f.StartLine && g.RuleID != f.RuleID &&
			!strings.Contains(strings.ToLower(g.RuleID), "generic") &&
			strings.Contains(g.Secret, f.Secret) {
			return true
		}
	}
	return false
}

// appendLower appends strings.ToLower(s) to dst, without allocating for
// ASCII text.
func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return append(dst[:0], strings.ToLower(s)...)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// secretKeyNames are normalised argument keys (lower case, letters and
// digits only) that name a secret; secretKeySuffixes also match as the end
// of a longer key (client_secret, db_password, x-api-key).
var (
	secretKeyNames    = []string{"pwd", "authorization", "credential", "credentials"}
	secretKeySuffixes = []string{
		"password", "passwd", "passphrase", "secret", "apikey", "apikeys",
		"privatekey", "secretkey", "accesskey", "signingkey",
		"encryptionkey", "masterkey", "clientsecret", "token",
		"credentials", "passwords", "secrets",
	}
	// secretSuffixesByLast groups secretKeySuffixes by their last byte.
	secretSuffixesByLast = func() (m [256][]string) {
		for _, s := range secretKeySuffixes {
			m[s[len(s)-1]] = append(m[s[len(s)-1]], s)
		}
		return m
	}()
	// tokenNotSecret are key prefixes before "token" that name a
	// pagination or counting token, not a credential.
	tokenNotSecret = []string{
		"page", "nextpage", "prevpage", "previouspage", "pagination",
		"continuation", "next", "sync", "resume", "cursor", "max", "num",
		"total", "start", "end", "stop", "cancellation", "cancel", "idempotency",
	}
)

// isSecretKey reports whether an argument key names a secret.
func isSecretKey(key string) bool {
	var buf [64]byte
	b := buf[:0]
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		default:
			continue
		}
		if len(b) == cap(b) {
			return false // far longer than any secret name we know
		}
		b = append(b, c)
	}
	for _, name := range secretKeyNames {
		if string(b) == name {
			return true
		}
	}
	if len(b) == 0 {
		return false
	}
	for _, suf := range secretSuffixesByLast[b[len(b)-1]] {
		if !bytes.HasSuffix(b, []byte(suf)) {
			continue
		}
		if suf == "token" {
			prefix := b[:len(b)-len(suf)]
			for _, p := range tokenNotSecret {
				if string(prefix) == p {
					return false
				}
			}
		}
		return true
	}
	return false
}

// literalSecret returns the text of v when v is a literal value that a
// secret-named key must not hold: a string of at least 4 characters that
// is not a placeholder or a reference (see docs/checks.md), or a number of
// at least 4 digits. Booleans, null, objects and arrays are not literals
// (objects and arrays are searched inside).
func literalSecret(v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		return s, len(s) >= 4
	case string:
		t := trimSpace(x)
		if utf8.RuneCountInString(t) < 4 || isPlaceholder(t) {
			return "", false
		}
		return x, true
	}
	return "", false
}

// isPlaceholder reports whether t (trimmed, non-empty) is a placeholder or
// a reference to a secret kept elsewhere rather than a secret.
func isPlaceholder(t string) bool {
	lower := strings.ToLower(t)
	if strings.Contains(lower, "redacted") {
		return true
	}
	switch lower {
	case "none", "null", "nil", "undefined", "true", "false", "empty", "unset", "n/a":
		return true
	}
	// One repeated character: "****", "xxxx".
	first, _ := utf8.DecodeRuneInString(t)
	if strings.Trim(t, string(first)) == "" {
		return true
	}
	switch {
	case t[0] == '$' && isWordName(strings.Trim(t[1:], "{}")): // $VAR, ${VAR}
		return true
	case strings.HasPrefix(t, "{{") && strings.HasSuffix(t, "}}"): // {{ secrets.X }}
		return true
	case t[0] == '<' && t[len(t)-1] == '>': // <your api key>
		return true
	case len(t) > 2 && t[0] == '%' && t[len(t)-1] == '%' && isWordName(t[1:len(t)-1]): // %VAR%
		return true
	case isEnvName(t): // OPENAI_API_KEY
		return true
	}
	if i := strings.Index(t, ":"); i > 0 {
		switch strings.ToLower(t[:i]) {
		case "env", "vault", "secret", "secrets", "op", "arn", "ssm", "kms",
			"keyring", "keychain", "file", "secretref", "ref", "gcpsm", "azkv":
			return true
		}
	}
	return false
}

// isWordName reports whether s is a non-empty run of letters, digits and
// underscores.
func isWordName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// isEnvName reports whether s looks like an environment variable name: upper
// case letters and digits in at least two parts joined by underscores.
func isEnvName(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' || !strings.Contains(s, "_") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// maskSecret returns the redacted form of a secret found by rule for
// reports: "****", preceded by the secret's first characters (at most
// four) when they are a literal that the rule's pattern fixes at the start
// of every secret it finds ("ghp_" of github-pat, "AKIA" of
// aws-access-token, "xoxb" of slack-bot-token; see
// secretrules.SecretPrefixes), the rule is not a generic one nor
// secret-named-argument, and the secret is at least 20 characters long.
// Those characters tell the token's type and are no part of what is
// secret; a rule whose secrets start with random characters shows none.
func maskSecret(s, rule string) string {
	const masked = "****"
	if utf8.RuneCountInString(s) < 20 || rule == RuleSecretNamedArgument || strings.Contains(rule, "generic") {
		return masked
	}
	sr, err := loadSecretRules()
	if err != nil {
		return masked
	}
	spec := sr.spec(rule)
	if spec == nil {
		return masked
	}
	best := 0
	for _, p := range spec.Prefixes {
		n := len(p.Text)
		if n > best && n <= len(s) && (s[:n] == p.Text || p.Fold && strings.EqualFold(s[:n], p.Text)) {
			best = n
		}
	}
	i := 0
	for n := 0; n < 4 && i < best; n++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:min(i, best)] + masked
}

// redactionMarker is what replaces a detected secret in returned calls and
// the final answer.
func redactionMarker(rule string) string { return "[REDACTED:" + rule + "]" }

// credentialFinding is one secret found in the trace.
type credentialFinding struct {
	Finding
	// secret is the secret text (never shown).
	secret string
	// exact marks a finding whose whole value is the secret (a secret-named
	// argument); it is redacted at its path whatever its length.
	exact bool
	// segs are the path segments of an exact finding.
	segs []string
}

// credentialScan is the outcome of scanning one trace.
type credentialScan struct {
	// err is set when the rule set could not be loaded, or a rule that
	// some text needed could not be built (the other rules' findings are
	// kept).
	err error
	// findings are in call order (final answer last), then path, then
	// rule.
	findings []credentialFinding
}

// scanCredentials scans every string value of every call's arguments (with
// its JSON pointer), the unreadable argument text of calls whose arguments
// did not decode, and the final answer. When the gitleaks rule set cannot
// be loaded (err is set), secret-named arguments are still found; when a
// rule cannot be built (err is set too), the other rules still run.
func scanCredentials(t *Trace) *credentialScan {
	cs := &credentialScan{}
	var sc *scanner
	if sr, err := loadSecretRules(); err != nil {
		cs.err = err
	} else {
		sc = newScanner(sr)
	}
	w := argWalker{sc: sc}
	for i := range t.Calls {
		c := &t.Calls[i]
		w.call = i
		if c.Args != nil {
			w.walk(c.Args, false)
		}
		if c.ArgsRaw != "" && sc != nil {
			for _, h := range sc.scan(c.ArgsRaw) {
				w.out = append(w.out, credentialFinding{
					Finding: Finding{Call: i, Rule: h.rule, Value: maskSecret(h.secret, h.rule)},
					secret:  h.secret,
				})
			}
		}
	}
	if t.FinalAnswer != nil && sc != nil {
		for _, h := range sc.scan(*t.FinalAnswer) {
			w.out = append(w.out, credentialFinding{
				Finding: Finding{Call: -1, Rule: h.rule, Value: maskSecret(h.secret, h.rule)},
				secret:  h.secret,
			})
		}
	}
	if sc != nil && sc.err != nil {
		cs.err = sc.err
	}
	slices.SortFunc(w.out, compareCredentialFindings)
	cs.findings = w.out
	return cs
}

// compareCredentialFindings orders findings by call (the final answer,
// call -1, last), JSON pointer, rule and secret.
func compareCredentialFindings(a, b credentialFinding) int {
	ca, cb := a.Call, b.Call
	if ca < 0 {
		ca = int(^uint(0) >> 1)
	}
	if cb < 0 {
		cb = int(^uint(0) >> 1)
	}
	if ca != cb {
		return cmp.Compare(ca, cb)
	}
	if c := strings.Compare(a.Path, b.Path); c != 0 {
		return c
	}
	if c := strings.Compare(a.Rule, b.Rule); c != 0 {
		return c
	}
	return strings.Compare(a.secret, b.secret)
}

// argWalker walks one call's argument tree, keeping the JSON pointer
// segments on a stack and building a pointer only for a finding, so deep
// nesting costs linear time.
type argWalker struct {
	sc   *scanner // nil: secret-named arguments only
	call int
	segs []string
	out  []credentialFinding
}

func (w *argWalker) pointer() string { return pointerOf(w.segs) }

// walk visits v; secretKey says whether v sits under a key that names a
// secret (array elements inherit it).
func (w *argWalker) walk(v any, secretKey bool) {
	switch x := v.(type) {
	case map[string]any:
		// Map order is random; scanCredentials sorts the findings.
		for k, e := range x {
			w.segs = append(w.segs, k)
			w.walk(e, isSecretKey(k))
			w.segs = w.segs[:len(w.segs)-1]
		}
	case []any:
		for i, e := range x {
			w.segs = append(w.segs, strconv.Itoa(i))
			w.walk(e, secretKey)
			w.segs = w.segs[:len(w.segs)-1]
		}
	case string:
		var hits []secretHit
		if w.sc != nil {
			hits = w.sc.scan(x)
		}
		for _, h := range hits {
			w.out = append(w.out, credentialFinding{
				Finding: Finding{Call: w.call, Path: w.pointer(), Rule: h.rule, Value: maskSecret(h.secret, h.rule)},
				secret:  h.secret,
			})
		}
		if secretKey && len(hits) == 0 {
			w.literal(x)
		}
	case json.Number:
		if secretKey {
			w.literal(x)
		}
	}
}

// literal reports v when it is a literal secret under a secret-named key.
func (w *argWalker) literal(v any) {
	s, ok := literalSecret(v)
	if !ok {
		return
	}
	w.out = append(w.out, credentialFinding{
		Finding: Finding{Call: w.call, Path: w.pointer(), Rule: RuleSecretNamedArgument, Value: maskSecret(s, RuleSecretNamedArgument)},
		secret:  s,
		exact:   true,
		segs:    slices.Clone(w.segs),
	})
}
