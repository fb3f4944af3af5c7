// Package secrets is the default secret scanner of the credentials check
// (SPEC section 5; docs/checks.md "credentials"): it implements
// secretscan.Scanner (engine.SecretScanner) with the default rule set of
// gitleaks v8, used as a library, plus a rule of its own for passwords in
// URLs (RuleURICredentials). Callers make one Scanner per process with New
// and pass it to every evaluation (engine.Options.SecretScanner).
//
// gitleaks' Detector runs every one of its ~220 rules' keyword checks on
// each text it is given, which costs about 10 µs even for "LIS", and
// loading its rule set (TOML, then ~220 regular expressions and the
// allowlists) costs about 60 ms of CPU. The Scanner keeps its semantics
// and pays only for the rules that can fire. The rule set is compiled into
// the binary as static data (package secretrules, generated from gitleaks'
// default config). One Aho-Corasick automaton (gitleaks' own matcher,
// github.com/BobuSumisu/aho-corasick) over every rule keyword and the
// "://" of URLs walks all the texts of a call in one pass, lower-cased as
// gitleaks lower-cases them, and tells which rules' keywords occur in
// which text; the minimum match length of each rule's regular expression
// tells which texts are too short to match at all. Only a rule that
// passes both for some text is built, on first use: its regular
// expressions compiled and put in a Detector of its own that holds that
// rule alone (with the global allowlists, built once). Findings are then
// filtered across rules as gitleaks does (a generic rule yields to a
// specific one on the same secret). No rule is dropped or changed.
//
// A Scanner changes no global state. gitleaks logs through a
// package-level zerolog logger (logging.Logger, at Info level unless
// someone lowers it); the Scanner leaves it alone: on the path it uses
// (DetectString on a Detector that holds a rule and the rules it
// requires) gitleaks logs only at the Debug and Trace levels, which that
// logger drops (TestGitleaksLogsNothing). A program that lowers gitleaks'
// log level would see its trace lines, which quote secrets.
package secrets

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"math/bits"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/toolscore/toolscore/internal/engine/secretscan"
	"github.com/toolscore/toolscore/internal/secrets/internal/secretrules"
)

// RuleURICredentials is the rule id of a password written in a URL's user
// information (RFC 3986 section 3.2.1: scheme://user:password@host), such
// as a database connection string. gitleaks' default rules leave most of
// these out, and they are the commonest way a password reaches a tool
// call's arguments.
const RuleURICredentials = "uri-credentials"

// uriCredentialsPattern finds scheme://user:password@host; group 1 is the
// password (at least 3 characters, no white space, quote, '/', '@' or ':'
// in it).
const uriCredentialsPattern = `(?i)\b[a-z][a-z0-9+.\-]{1,30}://[^\s:/@"'<>]{1,256}:([^\s:/@"'<>]{3,256})@[a-z0-9\[]`

// uriKeyword is what a text must hold for uriCredentialsPattern to match;
// the prefilter looks for it beside the rules' keywords.
const uriKeyword = "://"

// Scanner finds secrets with gitleaks' default rules and
// RuleURICredentials (see the package documentation). Make one with New
// and share it: it builds each rule the first time a text needs it, and
// keeps it for later scans. It is safe for concurrent use.
type Scanner struct {
	// rules are the content rules in rule-id order (secretrules.Rules);
	// ids are their ids.
	rules []rule
	ids   []string
	// aux are the other rules that content rules require
	// (secretrules.AuxRules), by id.
	aux map[string]*secretrules.Rule
	// always lists the rules without keywords, which gitleaks runs on
	// every text.
	always []int
	// minLen is the smallest minLen over all rules and
	// uriCredentialsPattern: shorter texts cannot hold a secret.
	minLen int
	// uriMinLen is the least number of bytes uriCredentialsPattern
	// matches.
	uriMinLen int
	// err is set when the rule set is inconsistent (a rule requires one
	// that neither list holds); ScanSecrets then returns it.
	err error

	// prefilter returns the keyword automaton, built on first use.
	prefilter func() *keywordIndex
	// global returns gitleaks' global allowlists, built on first use.
	global func() ([]*config.Allowlist, error)
	// uri returns uriCredentialsPattern compiled, on first use (its
	// bounded repeats make a large program, about 0.3 ms to compile),
	// which only a text holding "://" needs.
	uri func() *regexp.Regexp
	// states holds scratch buffers of finished scans (*scanState).
	states sync.Pool
}

// New returns a Scanner for gitleaks' default rules (the static table of
// package secretrules) and RuleURICredentials. It takes microseconds: no
// rule is compiled until a text needs it (WarmUp compiles them all).
func New() *Scanner {
	return newScanner(secretrules.Rules, secretrules.AuxRules)
}

// WarmUp builds the Scanner's whole rule set now (every rule's regular
// expressions and Detector, the global allowlists, the keyword automaton;
// tens of milliseconds of CPU), so that no scan pays for building a rule
// the first time a text needs it; a server calls it at start. It is safe
// for concurrent use. The error is non-nil only when a rule of the pinned
// set cannot be built; scans then report the same error for texts that
// need that rule.
func (s *Scanner) WarmUp() error {
	if s.err != nil {
		return s.err
	}
	s.prefilter()
	s.uri()
	for i := range s.rules {
		r := &s.rules[i]
		r.build(s, secretrules.StopWordTrie)
		if r.built.err != nil {
			return r.built.err
		}
		if r.built.scanning {
			r.useTrie(s)
		}
	}
	return nil
}

// ScanSecrets implements secretscan.Scanner: it returns the secrets that
// gitleaks' default rules and RuleURICredentials find in texts, sorted by
// text, then rule, then secret, each once per text; nil when there are
// none. Each finding's Prefix is the longest literal prefix of its rule
// (secretrules.Rule.Prefixes) that the secret starts with.
//
// A text is scanned whole, as gitleaks scans one fragment, unless it is
// longer than fragmentSize: then it is scanned in overlapping fragments
// (see fragments), which keeps time and memory linear in its length.
// Extra memory is bounded by about windowSize bytes whatever the number
// and size of texts.
//
// The error is ctx.Err() when ctx ends first (the scan stops within one
// rule's run on one fragment), or the error of a rule that some text
// needed and that could not be built (the other rules' findings are
// returned with it).
func (s *Scanner) ScanSecrets(ctx context.Context, texts []string) ([]secretscan.Finding, error) {
	if s.err != nil {
		return nil, s.err
	}
	st, _ := s.states.Get().(*scanState)
	if st == nil {
		st = &scanState{s: s, seen: make([]uint64, (len(s.rules)+63)/64)}
	}
	out, err := st.scan(ctx, texts)
	if st.size() <= maxPooledBytes {
		s.states.Put(st)
	}
	return out, err
}

// MinTextLen implements secretscan.MinTextLen: no rule (nor
// RuleURICredentials) matches fewer bytes, and ScanSecrets skips shorter
// texts. It is 0 for a Scanner whose rule set is inconsistent, so that
// every scan is handed texts and reports the error.
func (s *Scanner) MinTextLen() int {
	if s.err != nil {
		return 0
	}
	return s.minLen
}

// newScanner makes the Scanner over the content rules rules (sorted by
// id); aux are the other rules that content rules may require. A rule
// that requires one that neither list holds leaves the Scanner's err set.
func newScanner(rules, aux []secretrules.Rule) *Scanner {
	s := &Scanner{
		minLen:    -1,
		rules:     make([]rule, len(rules)),
		ids:       make([]string, len(rules)),
		aux:       make(map[string]*secretrules.Rule, len(aux)),
		uriMinLen: secretrules.RegexMinLen(uriCredentialsPattern),
	}
	for i := range aux {
		s.aux[aux[i].ID] = &aux[i]
	}
	for i := range rules {
		spec := &rules[i]
		if spec.Always {
			s.always = append(s.always, i)
		}
		r := &s.rules[i]
		r.id, r.minLen, r.spec = spec.ID, spec.MinLen, spec
		s.ids[i] = spec.ID
		if pf, ok := rulePrefilters[spec.ID]; ok && spec.Regex == pf.regex {
			r.mayMatch = pf.mayMatch
		}
		if s.minLen < 0 || r.minLen < s.minLen {
			s.minLen = r.minLen
		}
	}
	s.minLen = max(min(s.minLen, s.uriMinLen), 0)
	if !slices.IsSorted(s.ids) {
		s.err = fmt.Errorf("gitleaks rules are not sorted by id")
	}
	for i := range s.rules {
		r := &s.rules[i]
		for _, k := range r.spec.Keywords {
			if k == "" || strings.IndexByte(k, separator) >= 0 {
				s.err = fmt.Errorf("gitleaks rule %s: keyword %q is empty or holds a NUL byte", r.id, k)
			}
		}
		for _, req := range r.spec.Required {
			if s.spec(req.RuleID) == nil && s.aux[req.RuleID] == nil {
				s.err = fmt.Errorf("gitleaks rule %s requires rule %s, which the rule set does not hold", r.id, req.RuleID)
			}
		}
	}
	s.prefilter = sync.OnceValue(s.newKeywordIndex)
	s.global = sync.OnceValues(newGlobalAllowlists)
	s.uri = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(uriCredentialsPattern) })
	return s
}

// spec returns the content rule with the given id, nil when there is none.
func (s *Scanner) spec(id string) *secretrules.Rule {
	i, ok := slices.BinarySearch(s.ids, id)
	if !ok {
		return nil
	}
	return s.rules[i].spec
}

// prefix returns the number of leading bytes of secret that are the
// longest literal prefix of rule's pattern (secretrules.SecretPrefixes)
// it starts with; 0 for a rule without one (RuleURICredentials).
func (s *Scanner) prefix(rule, secret string) int {
	spec := s.spec(rule)
	if spec == nil {
		return 0
	}
	best := 0
	for _, p := range spec.Prefixes {
		n := len(p.Text)
		if n > best && n <= len(secret) && (secret[:n] == p.Text || p.Fold && strings.EqualFold(secret[:n], p.Text)) {
			best = n
		}
	}
	return best
}

// keywordIndex is the prefilter: one Aho-Corasick automaton over the
// distinct keywords of all rules (lower-case, as gitleaks matches them)
// and uriKeyword.
type keywordIndex struct {
	trie *ahocorasick.Trie
	// rulesOf lists, by pattern number of trie, the indexes into
	// Scanner.rules of the rules carrying that keyword; uriRule stands for
	// RuleURICredentials.
	rulesOf [][]int
}

// uriRule stands for RuleURICredentials in keywordIndex.rulesOf.
const uriRule = -1

// separator ends each text in the buffer the automaton walks. No keyword
// holds it (newScanner checks), so no match spans two texts.
const separator = 0

// newKeywordIndex builds the prefilter over s's rules (about a millisecond
// and 3 MB for the default rules: the automaton has a transition table of
// 256 entries per state).
func (s *Scanner) newKeywordIndex() *keywordIndex {
	index := map[string]int{}
	var patterns []string
	ki := &keywordIndex{}
	add := func(k string, r int) {
		j, ok := index[k]
		if !ok {
			j = len(patterns)
			index[k] = j
			patterns = append(patterns, k)
			ki.rulesOf = append(ki.rulesOf, nil)
		}
		ki.rulesOf[j] = append(ki.rulesOf[j], r)
	}
	for i := range s.rules {
		for _, k := range s.rules[i].spec.Keywords {
			add(k, i)
		}
	}
	add(uriKeyword, uriRule)
	for j := range ki.rulesOf {
		ki.rulesOf[j] = slices.Compact(ki.rulesOf[j])
	}
	ki.trie = ahocorasick.NewTrieBuilder().AddStrings(patterns).Build()
	return ki
}

// Texts are lower-cased for the prefilter in windows of about windowSize
// bytes (a window holds whole fragments; see scanState), and scratch
// buffers larger than maxPooledBytes are not kept for the next scan.
const (
	windowSize     = 64 << 10
	maxPooledBytes = 1 << 20
)

// piece is one text, or one fragment of a long text, in the window.
type piece struct {
	// text is the index of the text in the texts scanned.
	text int
	// start and end are the fragment's byte range in the text.
	start, end int
	// hi is where the piece's lower-cased bytes end in the window (the
	// separator follows).
	hi int
}

// candidate is a rule to run on a piece of the window.
type candidate struct {
	piece int
	rule  int
}

// hit is one secret found in one text.
type hit struct {
	text   int
	rule   string
	secret string
}

// scanState is the scratch state of one scan; a Scanner keeps finished
// ones for the next scan.
type scanState struct {
	s      *Scanner
	texts  []string
	lower  []byte   // the window's pieces, lower-cased, each followed by separator
	pieces []piece  // the window's pieces
	seen   []uint64 // bitset over s.rules: the rules to run on the current piece
	marked bool     // some bit of seen is set
	cands  []candidate
	uri    []int // texts holding uriKeyword, in order
	found  []report.Finding
	hits   []hit
	err    error
}

// size is roughly how many bytes st's buffers hold.
func (st *scanState) size() int {
	return cap(st.lower) + 48*cap(st.pieces) + 16*cap(st.cands) + 8*cap(st.uri) + 400*cap(st.found) + 40*cap(st.hits)
}

// scan is ScanSecrets on texts.
func (st *scanState) scan(ctx context.Context, texts []string) ([]secretscan.Finding, error) {
	s := st.s
	st.texts, st.hits, st.uri, st.err = texts, st.hits[:0], st.uri[:0], nil
	defer func() { st.texts = nil }()
	st.lower, st.pieces = st.lower[:0], st.pieces[:0]
	for i, t := range texts {
		if len(t) < s.minLen {
			continue
		}
		for start, end := range fragments(t) {
			if len(st.lower) > 0 && len(st.lower)+end-start > windowSize {
				if err := st.window(ctx); err != nil {
					return st.findings(), err
				}
			}
			st.add(i, start, end)
		}
	}
	if len(st.pieces) > 0 {
		if err := st.window(ctx); err != nil {
			return st.findings(), err
		}
	}
	var re *regexp.Regexp
	for _, i := range st.uri {
		if err := ctx.Err(); err != nil {
			return st.findings(), err
		}
		if re == nil {
			re = s.uri()
		}
		for _, m := range re.FindAllStringSubmatch(texts[i], -1) {
			st.hits = append(st.hits, hit{text: i, rule: RuleURICredentials, secret: m[1]})
		}
	}
	return st.findings(), st.err
}

// add adds the fragment [start, end) of text i to the window.
func (st *scanState) add(i, start, end int) {
	st.lower = appendLower(st.lower, st.texts[i][start:end])
	st.lower = append(st.lower, separator)
	st.pieces = append(st.pieces, piece{text: i, start: start, end: end, hi: len(st.lower) - 1})
}

// window runs the prefilter over the window's pieces, then the rules it
// schedules, adding their findings to st.hits, and empties the window.
func (st *scanState) window(ctx context.Context) error {
	st.schedule()
	err := st.run(ctx)
	clear(st.found) // drop the references to the texts
	st.lower, st.pieces = st.lower[:0], st.pieces[:0]
	return err
}

// schedule walks the prefilter over the window, once, and sets st.cands
// to the rules to run on each piece, piece by piece; it adds the texts
// that may hold a password in a URL to st.uri.
func (st *scanState) schedule() {
	s := st.s
	ki := s.prefilter()
	st.cands = st.cands[:0]
	cur := 0
	ki.trie.Walk(st.lower, func(end, _, pattern int64) bool {
		for st.pieces[cur].hi <= int(end) {
			st.flush(cur)
			cur++
		}
		p := &st.pieces[cur]
		n := p.end - p.start
		for _, r := range ki.rulesOf[pattern] {
			switch {
			case r == uriRule:
				if len(st.texts[p.text]) >= s.uriMinLen && (len(st.uri) == 0 || st.uri[len(st.uri)-1] != p.text) {
					st.uri = append(st.uri, p.text)
				}
			case s.rules[r].minLen <= n:
				st.seen[r/64] |= 1 << (r % 64)
				st.marked = true
			}
		}
		return true
	})
	for ; cur < len(st.pieces); cur++ {
		st.flush(cur)
	}
}

// run runs the scheduled rules on their pieces, adding their findings to
// st.hits. The error is ctx.Err() when ctx ends first.
func (st *scanState) run(ctx context.Context) error {
	s := st.s
	// The candidates come piece by piece.
	var err error
	for k := 0; k < len(st.cands) && err == nil; {
		pi := st.cands[k].piece
		p := st.pieces[pi]
		text := st.texts[p.text][p.start:p.end]
		st.found = st.found[:0]
		for ; k < len(st.cands) && st.cands[k].piece == pi; k++ {
			if err = ctx.Err(); err != nil {
				break
			}
			r := &s.rules[st.cands[k].rule]
			if r.mayMatch != nil && !r.mayMatch(text) {
				continue
			}
			det, derr := r.detector(s)
			if derr != nil {
				if st.err == nil {
					st.err = derr
				}
				continue
			}
			st.found = append(st.found, det.DetectString(text)...)
			r.ran(s, len(text))
		}
		for i, f := range st.found {
			if f.Secret != "" && !shadowedGeneric(f, st.found, i) {
				st.hits = append(st.hits, hit{text: p.text, rule: f.RuleID, secret: f.Secret})
			}
		}
	}
	return err
}

// flush adds the rules scheduled for piece pi (and the rules without
// keywords that are not too long for it) to the candidates, and clears
// them.
func (st *scanState) flush(pi int) {
	s := st.s
	p := &st.pieces[pi]
	for _, r := range s.always {
		if s.rules[r].minLen <= p.end-p.start {
			st.seen[r/64] |= 1 << (r % 64)
			st.marked = true
		}
	}
	if !st.marked {
		return
	}
	st.marked = false
	for w, word := range st.seen {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			word &^= 1 << b
			st.cands = append(st.cands, candidate{piece: pi, rule: w*64 + b})
		}
		st.seen[w] = 0
	}
}

// findings returns st.hits as findings, sorted by text, rule and secret,
// without repeats; nil when there are none. The slice is the caller's.
func (st *scanState) findings() []secretscan.Finding {
	if len(st.hits) == 0 {
		return nil
	}
	slices.SortFunc(st.hits, func(a, b hit) int {
		if c := cmp.Compare(a.text, b.text); c != 0 {
			return c
		}
		if c := strings.Compare(a.rule, b.rule); c != 0 {
			return c
		}
		return strings.Compare(a.secret, b.secret)
	})
	st.hits = slices.Compact(st.hits)
	out := make([]secretscan.Finding, len(st.hits))
	for i, h := range st.hits {
		out[i] = secretscan.Finding{Text: h.text, Rule: h.rule, Secret: h.secret, Prefix: st.s.prefix(h.rule, h.secret)}
	}
	clear(st.hits) // drop the references to the texts
	st.hits = st.hits[:0]
	return out
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

// appendLower appends strings.ToLower(s) to dst (what gitleaks matches
// keywords against), without allocating for ASCII text.
func appendLower(dst []byte, s string) []byte {
	n := len(dst)
	dst = slices.Grow(dst, len(s))[:n+len(s)]
	out := dst[n:]
	for i, c := range []byte(s) {
		if c >= utf8.RuneSelf {
			return append(dst[:n], strings.ToLower(s)...)
		}
		out[i] = asciiLower[c]
	}
	return dst
}

// asciiLower maps an ASCII byte to itself lower-cased.
var asciiLower = func() (t [utf8.RuneSelf]byte) {
	for c := range t {
		t[c] = byte(c)
		if 'A' <= c && c <= 'Z' {
			t[c] += 'a' - 'A'
		}
	}
	return t
}()

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

// fragments yields the [start, end) byte ranges of the fragments a text
// s is scanned in: one range for a text of at most fragmentSize bytes;
// else ranges of at most fragmentSize bytes, the first starting at 0, the
// last ending at len(s), each ending at fragmentEnd and the next starting
// at the boundary at most fragmentSlack bytes before end-fragmentOverlap.
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
