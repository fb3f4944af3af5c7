package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolscore/toolscore/internal/engine/secretscan"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// minGlobalSecretLen is the shortest secret-named argument value that is
// also replaced wherever else it occurs (results, other calls, the final
// answer, check details). Shorter values are replaced only at their own
// argument path: replacing "abcd" everywhere would garble unrelated text.
// Secrets found by the gitleaks rules are replaced everywhere.
const minGlobalSecretLen = 6

// RedactTrace returns a copy of t with every secret that the credentials
// check finds (SPEC section 5; docs/checks.md "credentials") replaced by
// "[REDACTED:<rule>]", with the rules Evaluate applies to trace_calls and
// final_answer: a gitleaks secret is replaced wherever it occurs (tool
// names, ids, argument keys and values, results, args_raw, args_error,
// errors, the final answer), a secret-named argument value of 6 or more
// characters too, a shorter one only at its own path. It also returns the
// findings of the credentials check (masked values), in its order
// (call, JSON pointer, rule; the final answer, call -1, last); nil when
// there are none.
//
// Secrets are found by s (see SecretScanner) and the secret-named argument
// rule. t is never modified: the copy has a Calls slice of its own, and
// argument maps, arrays and results are copied where something is
// replaced and shared with t elsewhere, so treat both as read-only. Time
// is linear in the size of t, plus what s takes. It is safe for
// concurrent use.
//
// The error is non-nil when the scan is incomplete: s is nil (then only
// secret-named arguments are found), or it failed (ctx ended, say; what
// it found is still replaced). The trace and findings are returned either
// way.
func RedactTrace(ctx context.Context, t Trace, s SecretScanner) (Trace, []Finding, error) {
	cs := scanCredentials(ctx, &t, s)
	out := Trace{Calls: slices.Clone(t.Calls), FinalAnswer: t.FinalAnswer}
	if len(cs.findings) == 0 && len(cs.shown) == 0 {
		return out, nil, cs.err
	}
	red := newRedactor(cs.findings, nil).withShown(cs.findings, cs.shown)
	for i, c := range out.Calls {
		out.Calls[i] = red.call(i, c)
	}
	if t.FinalAnswer != nil {
		s := red.text(*t.FinalAnswer)
		out.FinalAnswer = &s
	}
	if len(cs.findings) == 0 {
		return out, nil, cs.err
	}
	findings := make([]Finding, len(cs.findings))
	for i, f := range cs.findings {
		findings[i] = f.Finding
	}
	return out, findings, cs.err
}

// redactor replaces detected secrets in values a result returns. The zero
// value (Options.KeepSecrets) replaces nothing.
type redactor struct {
	// repl replaces every secret that is replaced everywhere; nil when
	// there is none.
	repl *strings.Replacer
	// exact lists, per call index, its secret-named argument values to
	// replace whole.
	exact map[int][]exactRedaction
	// named hides secrets written in expected arguments (contracts, gold
	// files, forbidden rules) in what results show: the literal values of
	// secret-named keys, and what scanner finds in string values.
	named bool
	// scanner scans expected argument strings; nil scans none.
	scanner SecretScanner
	// shownArgs memoizes expectedArgs by the identity of the arguments
	// (expected calls are rendered by several issues and redact).
	shownArgs map[*args]Args
	// contractShown are the contract's arguments as hideWritten shows
	// them, with their issue texts, shared by every evaluation of the
	// contract (see shownArgsCache); nil outside an evaluation.
	contractShown map[*args]*shownEntry
	// contractSame reports that contractShown shows every argument map of
	// the contract as it is.
	contractSame bool
	// secrets are every detected secret value (those replaced only at
	// their path too), for the grounding check's hiding rule.
	secrets []string
	// scanFailed records that scanner failed on an expected argument.
	scanFailed bool
	// collect, when non-nil, makes hideWritten list the strings it would
	// scan here instead of scanning them (see hideWrittenAll).
	collect *[]string
	// prescan makes hideWritten look up what scanner found in a string
	// in prescanned (by text; texts without findings are absent) instead
	// of scanning it.
	prescan    bool
	prescanned map[string][]SecretFinding
}

// exactRedaction is an argument value to replace whole: its path segments
// and its marker.
type exactRedaction struct {
	segs   []string
	marker string
}

// newRedactor builds the redactor for a scan's findings; scanner (nil:
// none) scans expected arguments.
func newRedactor(findings []credentialFinding, scanner SecretScanner) *redactor {
	r := new(redactor)
	r.init(findings, scanner)
	return r
}

// init makes r the redactor newRedactor returns.
func (r *redactor) init(findings []credentialFinding, scanner SecretScanner) {
	*r = redactor{named: true, scanner: scanner}
	for _, f := range findings {
		r.secrets = append(r.secrets, f.secret)
		if f.exact {
			if r.exact == nil {
				r.exact = map[int][]exactRedaction{}
			}
			r.exact[f.Call] = append(r.exact[f.Call], exactRedaction{segs: f.segs, marker: redactionMarker(f.Rule)})
		}
	}
	r.repl = replacerOf(findings, nil)
}

// withShown returns r, for what a result shows, also replacing the
// secrets found only outside what the credentials check judges (tool
// results, error texts, argument keys; credentialScan.shown). The checks
// keep r itself, so their statuses and details depend on the judged
// texts alone. It returns r when there is nothing more to replace or r
// replaces nothing (Options.KeepSecrets).
func (r *redactor) withShown(findings []credentialFinding, shown []shownSecret) *redactor {
	if len(shown) == 0 || !r.named {
		return r
	}
	c := *r
	c.repl = replacerOf(findings, shown)
	c.shownArgs = nil
	return &c
}

// replacerOf returns the replacer of every secret replaced everywhere:
// the findings' secrets (a secret-named argument value only from
// minGlobalSecretLen bytes) and shown; nil when there is none.
func replacerOf(findings []credentialFinding, shown []shownSecret) *strings.Replacer {
	type pair struct{ secret, marker string }
	var pairs []pair
	for _, f := range findings {
		if f.exact && len(f.secret) < minGlobalSecretLen {
			continue
		}
		pairs = append(pairs, pair{f.secret, redactionMarker(f.Rule)})
	}
	for _, sh := range shown {
		pairs = append(pairs, pair{sh.secret, redactionMarker(sh.rule)})
	}
	if len(pairs) == 0 {
		return nil
	}
	// Longer secrets first, so a secret that contains another is replaced
	// whole; then by text, for a deterministic marker per secret (a
	// finding's before a shown one's).
	slices.SortStableFunc(pairs, func(a, b pair) int {
		if c := cmp.Compare(len(b.secret), len(a.secret)); c != 0 {
			return c
		}
		return strings.Compare(a.secret, b.secret)
	})
	args := make([]string, 0, 2*len(pairs))
	for i, p := range pairs {
		if i > 0 && p.secret == pairs[i-1].secret {
			continue
		}
		args = append(args, p.secret, p.marker)
	}
	return strings.NewReplacer(args...)
}

// active reports whether the redactor replaces anything.
func (r *redactor) active() bool { return r.repl != nil || len(r.exact) > 0 }

// text returns s with every globally replaced secret replaced.
func (r *redactor) text(s string) string {
	if r.repl == nil {
		return s
	}
	return r.repl.Replace(s)
}

// call returns a copy of c with its secrets replaced in Tool, ID, Args
// (keys and values), Result, ArgsRaw, ArgsError and Error; maps and slices
// are copied only where something changes, so the caller's trace is never
// modified. i is c's trace index.
func (r *redactor) call(i int, c ToolCall) ToolCall {
	if !r.active() {
		return c
	}
	// Values are rewritten as Go values and read back (only for a trace
	// with a secret to hide).
	if c.Args.Exists() {
		args, _ := c.Args.Any().(map[string]any)
		v, changed := r.value(args)
		args, _ = v.(map[string]any)
		for _, e := range r.exact[i] {
			if v, ch := replaceAt(args, e.segs, e.marker); ch {
				args, changed = v.(map[string]any), true
			}
		}
		if changed {
			c.Args = jsondoc.MustFromAny(args)
		}
	}
	if c.Result.Exists() {
		if v, changed := r.value(c.Result.Any()); changed {
			c.Result = jsondoc.MustFromAny(v)
		}
	}
	c.Tool = r.text(c.Tool)
	c.ID = r.text(c.ID)
	c.ArgsRaw = r.text(c.ArgsRaw)
	c.ArgsError = r.text(c.ArgsError)
	c.Error = CallError(r.text(string(c.Error)))
	return c
}

// value returns v with every globally replaced secret replaced, in object
// keys too, and whether anything changed; maps and slices are copied only
// where something changes. A value of another Go type (a Matcher, say) is
// read through its JSON form: when that holds a secret, it is replaced by
// a value showing the redacted JSON (a Matcher keeps matching as before).
func (r *redactor) value(v any) (any, bool) {
	if r.repl == nil {
		return v, false
	}
	switch x := v.(type) {
	case nil, bool, json.Number:
		return v, false
	case string:
		s := r.text(x)
		return s, s != x
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			nk := r.text(k)
			ne, changed := r.value(e)
			if !changed && nk == k {
				continue
			}
			if out == nil {
				out = maps.Clone(x)
			}
			if nk != k {
				delete(out, k)
				for _, taken := out[nk]; taken; _, taken = out[nk] {
					nk += "'" // two keys redacted alike stay apart
				}
			}
			out[nk] = ne
		}
		if out == nil {
			return v, false
		}
		return out, true
	case []any:
		var out []any
		for i, e := range x {
			ne, changed := r.value(e)
			if changed {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = ne
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	}
	return r.opaque(v)
}

// opaque redacts a value of a type other than the plain JSON ones (a
// Matcher, or a Go value in a result) with redact, which rewrites a plain
// JSON value: see rewriteOpaque.
func (r *redactor) opaque(v any) (any, bool) {
	return rewriteOpaque(v, func(x any, _ bool) (any, bool) { return r.value(x) }, false)
}

// rewriteOpaque applies rewrite (to a plain JSON value; under reports
// whether it sits where the matcher's own key put it, see hideWritten) to
// the values a matcher compares with, or to the JSON form of another Go
// value. When something changes, a Matcher becomes a redactedMatcher that
// still matches as the original did and shows the rewritten JSON; another
// value becomes its rewritten JSON value. The built-in matchers are
// handled without going through JSON: Any, Type and Approx hold no text.
func rewriteOpaque(v any, rewrite func(x any, under bool) (any, bool), under bool) (any, bool) {
	var m Matcher
	var shown any
	switch x := v.(type) {
	case Any, *Any, *Type, *Approx:
		return v, false
	case *Regex:
		p, changed := rewrite(x.re.String(), under)
		if !changed {
			return v, false
		}
		m, shown = x, map[string]any{"$regex": p}
	case *Contains:
		c, changed := rewrite(x.Value, under)
		if !changed {
			return v, false
		}
		m, shown = x, map[string]any{"$contains": c}
	case *OneOf:
		c, changed := rewrite(x.Candidates, under)
		if !changed {
			return v, false
		}
		m, shown = x, map[string]any{"$one_of": c}
	case *redactedMatcher:
		s, changed := rewrite(x.shown, under)
		if !changed {
			return v, false
		}
		m, shown = x.m, s
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return v, false
		}
		doc, err := DecodeJSON(b)
		if err != nil {
			return v, false
		}
		s, changed := rewrite(doc, under)
		if !changed {
			return v, false
		}
		if mm, ok := v.(Matcher); ok {
			m, shown = mm, s
		} else {
			return s, true
		}
	}
	return &redactedMatcher{m: m, shown: shown}, true
}

// redactedMatcher is a Matcher whose JSON form held a detected secret: it
// matches as the original does and shows the redacted JSON.
type redactedMatcher struct {
	m     Matcher
	shown any
}

// Match implements Matcher.
func (m *redactedMatcher) Match(actual any, opts CompareOptions) bool { return m.m.Match(actual, opts) }

// MarshalJSON writes the redacted JSON form.
func (m *redactedMatcher) MarshalJSON() ([]byte, error) { return json.Marshal(m.shown) }

// expectedArgs returns args (an expected call's or a forbidden rule's
// arguments) as results show them: detected secrets replaced everywhere;
// the literal value of every secret-named key (see literalSecret; in
// arrays under such a key too) replaced whole by
// redactionMarker(RuleSecretNamedArgument); and every secret the gitleaks
// rules find in a string value replaced by its marker, at any depth
// (values of matchers included). Maps and slices are copied only where
// something changes; nil stays nil.
func (r *redactor) expectedArgs(a Args) Args {
	if !a.Checked() || r.repl == nil && !r.named {
		return a
	}
	if v, ok := r.shownArgs[a.a]; ok {
		return v
	}
	var v any
	changed := false
	if r.repl != nil {
		v, changed = r.value(a.Map())
	}
	if r.named {
		if e, ok := r.contractShown[a.a]; ok && !changed {
			return e.shown // no detected secret in args: the contract's own
		}
		if v == nil {
			v = a.Map()
		}
		var hid bool
		v, hid = r.hideWritten(v, false)
		changed = changed || hid
	}
	out := a
	if changed {
		out = NewArgs(v.(map[string]any))
	}
	if r.shownArgs == nil {
		r.shownArgs = map[*args]Args{}
	}
	r.shownArgs[a.a] = out
	return out
}

// shownArgsCache holds a contract's arguments (those of its required
// calls, of every option of its alternatives groups and of its forbidden
// rules) as expectedArgs shows them when no secret detected in the trace
// is in them: hideWritten of each, by the identity of the argument map.
// That depends on the contract and the SecretScanner alone, so it is made
// once, on first use, with the scanner of that evaluation, and shared by
// every evaluation of the contract with the same scanner (a process has
// one); it is read-only once made. The Args it holds are the contract's
// own where nothing is hidden, else copies; results share them.
type shownArgsCache struct {
	once    sync.Once
	scanner SecretScanner
	m       map[*args]*shownEntry
	// same reports that m shows every argument map as it is (nothing
	// hidden).
	same bool
}

// shownEntry is an argument map of a contract as a result shows it (see
// shownArgsCache), and the issue texts of what is shown (textArena.shown
// of shownArgs of it; appendArgsWords of it, for a missing call's fix),
// each rendered on first use: most arguments of a contract are never
// shown in an issue, and a contract read for one evaluation renders none
// it does not show.
type shownEntry struct {
	shown Args
	text  sharedText
	words sharedText
}

// contractText returns the shared issue text slot of sa, which
// expectedArgs(a) returned: the slot of the contract's shown arguments
// when sa is them, else nil (sa holds a secret detected in the trace, or
// a is no argument map of the contract).
func (r *redactor) contractText(a, sa Args) *sharedText {
	if e := r.contractEntry(a, sa); e != nil {
		return &e.text
	}
	return nil
}

// contractWords is contractText for the words of the arguments
// (appendArgsWords).
func (r *redactor) contractWords(a, sa Args) *sharedText {
	if e := r.contractEntry(a, sa); e != nil {
		return &e.words
	}
	return nil
}

// contractEntry returns the contract's entry of a when sa, which
// expectedArgs(a) returned, is its shown arguments, else nil.
func (r *redactor) contractEntry(a, sa Args) *shownEntry {
	if e, ok := r.contractShown[a.a]; ok && sa.a != nil && sa.same(e.shown) {
		return e
	}
	return nil
}

// sharedText is the issue text of a contract's shown arguments, shared by
// the evaluations of the contract: nil until one renders it, then the
// same text whichever evaluation stored it.
type sharedText = atomic.Pointer[string]

// get returns the cache of contract c for scanner, making it on the first
// call, and whether it shows every argument map as it is; nil and false
// when it was made with another scanner, or when a scan failed while
// making it (the caller then hides per evaluation).
func (sc *shownArgsCache) get(c *Contract, scanner SecretScanner) (map[*args]*shownEntry, bool) {
	sc.once.Do(func() {
		sc.scanner = scanner
		all := make([]Args, 0, len(c.Required)+len(c.Forbidden))
		add := func(a Args) {
			if a.Checked() {
				all = append(all, a)
			}
		}
		for _, st := range c.Required {
			if st.Call != nil {
				add(st.Call.Args)
			}
			if st.Group != nil {
				for _, opt := range st.Group.Options {
					for i := range opt {
						add(opt[i].Args)
					}
				}
			}
		}
		for i := range c.Forbidden {
			add(c.Forbidden[i].Args)
		}
		r := &redactor{named: true, scanner: scanner}
		shown := r.hideWrittenAll(all)
		m := make(map[*args]*shownEntry, len(all))
		entries := make([]shownEntry, len(all))
		same := true
		for i, a := range all {
			same = same && shown[i].same(a)
			if _, ok := m[a.a]; !ok {
				entries[i].shown = shown[i]
				m[a.a] = &entries[i]
			}
		}
		if !r.scanFailed {
			sc.m, sc.same = m, same
		}
	})
	if !sameScanner(sc.scanner, scanner) {
		return nil, false
	}
	return sc.m, sc.same
}

// sameScanner reports whether a and b are the same scanner (both nil, or
// equal comparable values of one type).
func sameScanner(a, b SecretScanner) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if ta := reflect.TypeOf(a); ta == reflect.TypeOf(b) && ta.Kind() == reflect.Pointer {
		return a == b // the usual scanner, a pointer: compared without reflect's allocation
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.Type() == vb.Type() && va.Comparable() && vb.Comparable() && va.Equal(vb)
}

// hideWrittenAll returns hideWritten of each of all (expected calls'
// arguments; the same Args where nothing is hidden), scanning every
// string they hold with r.scanner in one call rather than one call per
// string. A first pass lists the strings (those shorter than the
// scanner's MinTextLen left out), from the document's object or the
// compiled form where they tell everything (see textsOf), else with
// hideWritten listing what it would scan; the scanner's findings are
// grouped by text; then each argument map is returned as it is when the
// first pass showed it holds nothing to hide and the scanner found
// nothing, and hideWritten hides the rest.
func (r *redactor) hideWrittenAll(all []Args) []Args {
	out := make([]Args, len(all))
	walk := make([]bool, len(all))
	// Texts shorter than the scanner's MinTextLen hold nothing it finds.
	minLen := 1
	if m, ok := r.scanner.(secretscan.MinTextLen); ok {
		minLen = max(m.MinTextLen(), 1)
	}
	var texts, keys []string
	for i, a := range all {
		if d := a.Document(); d.Exists() {
			// The document's object is the map's JSON: one flat pass
			// over its nodes lists its strings and the keys that may
			// name a secret.
			n := len(texts)
			var ok bool
			texts, keys, ok = d.AppendStringsKeys(texts, keys[:0], minLen, &secretKeyPairs)
			for _, k := range keys {
				if ok && keyMayNameSecret(k) && isSecretKey(k) {
					ok = false
				}
			}
			if ok {
				continue
			}
			texts = texts[:n]
		}
		if textsOf(a.compiled(), minLen, &texts) {
			continue
		}
		walk[i] = true
		if r.scanner != nil {
			r.collect = &texts
			r.hideWritten(a.Map(), false)
			r.collect = nil
		}
	}
	if r.scanner != nil {
		r.prescan = true
		defer func() { r.prescan, r.prescanned = false, nil }()
		if texts = distinctTexts(texts); len(texts) > 0 {
			found, err := r.scanner.ScanSecrets(context.Background(), texts)
			if err != nil {
				r.scanFailed = true
			}
			for _, f := range found {
				if validFinding(f, texts) != nil {
					continue
				}
				// A text listed twice is found twice: keep one of each.
				t := texts[f.Text]
				if r.prescanned == nil {
					r.prescanned = map[string][]SecretFinding{}
				}
				if !slices.ContainsFunc(r.prescanned[t], func(g SecretFinding) bool { return g.Rule == f.Rule && g.Secret == f.Secret }) {
					r.prescanned[t] = append(r.prescanned[t], f)
				}
			}
		}
	}
	for i, a := range all {
		out[i] = a
		if !walk[i] && len(r.prescanned) == 0 {
			continue
		}
		if v, changed := r.hideWritten(a.Map(), false); changed {
			out[i] = NewArgs(v.(map[string]any))
		}
	}
	return out
}

// textsOf appends to texts the strings hideWritten would scan in the
// expected value compiled as e (those shorter than minLen, at least 1,
// left out), and reports whether that is all hideWritten would do: false
// for a value it may change otherwise (a value under a secret-named key)
// or that e does not show whole (a matcher), which hideWritten must then
// walk itself.
func textsOf(e *cval, minLen int, texts *[]string) bool {
	switch e.op {
	case copObject:
		for i, k := range e.keys {
			if keyMayNameSecret(k) && isSecretKey(k) || !textsOf(&e.kids[i], minLen, texts) {
				return false
			}
		}
	case copArray:
		for i := range e.kids {
			if !textsOf(&e.kids[i], minLen, texts) {
				return false
			}
		}
	case copString:
		if len(e.s) >= minLen {
			*texts = append(*texts, e.s)
		}
	case copNumber, copBool, copNull:
	default:
		return false
	}
	return true
}

// hideWritten hides the secrets written in expected arguments v
// (secretKey: v sits under a secret-named key), copying maps and slices
// only where something changes, and reports whether anything did.
func (r *redactor) hideWritten(v any, secretKey bool) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			ne, changed := r.hideWritten(e, isSecretKey(k))
			if changed {
				if out == nil {
					out = maps.Clone(x)
				}
				out[k] = ne
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	case []any:
		var out []any
		for i, e := range x {
			ne, changed := r.hideWritten(e, secretKey)
			if changed {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = ne
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	case string:
		if secretKey {
			if _, ok := literalSecret(x); ok {
				return redactionMarker(RuleSecretNamedArgument), true
			}
		}
		if r.scanner == nil || x == "" {
			return v, false
		}
		if r.collect != nil {
			*r.collect = append(*r.collect, x)
			return v, false
		}
		var found []SecretFinding
		if r.prescan {
			found = r.prescanned[x]
			if len(found) == 0 {
				return v, false
			}
			found = slices.Clone(found)
			for i := range found {
				found[i].Text = 0
			}
		} else {
			// Expected arguments are the contract's (bounded by its
			// size), so the scan is not cancelled with an evaluation.
			var err error
			found, err = r.scanner.ScanSecrets(context.Background(), []string{x})
			if err != nil {
				r.scanFailed = true
			}
		}
		slices.SortFunc(found, func(a, b SecretFinding) int {
			return cmp.Or(strings.Compare(a.Rule, b.Rule), strings.Compare(a.Secret, b.Secret))
		})
		args := make([]string, 0, 2*len(found))
		for _, f := range found {
			if validFinding(f, []string{x}) == nil {
				args = append(args, f.Secret, redactionMarker(f.Rule))
			}
		}
		if len(args) == 0 {
			return v, false
		}
		return strings.NewReplacer(args...).Replace(x), true
	case json.Number:
		if secretKey {
			if _, ok := literalSecret(x); ok {
				return redactionMarker(RuleSecretNamedArgument), true
			}
		}
		return v, false
	case nil, bool:
		return v, false
	}
	// A matcher: under a secret-named key, the values it compares with
	// ($regex, $contains, $one_of) are secrets too; type names and
	// tolerances hold none. Most matchers hold nothing to hide: say so
	// without converting their values.
	if !secretKey && !r.mayHide(v) {
		return v, false
	}
	return rewriteOpaque(v, r.hideWritten, secretKey)
}

// mayHide reports whether hideWritten may change a built-in matcher that
// does not sit under a secret-named key (true for other values).
func (r *redactor) mayHide(v any) bool {
	long := func(s string) bool { return r.scanner != nil && s != "" }
	switch x := v.(type) {
	case Any, *Any, *Type, *Approx:
		return false
	case *Regex:
		return long(x.re.String())
	case *OneOf:
		for _, c := range x.Candidates {
			if s, ok := c.(string); !ok || long(s) {
				return true
			}
		}
		return false
	case *Contains:
		s, ok := x.Value.(string)
		return !ok || long(s)
	}
	return true
}

// expectedCalls returns calls, expected calls of the evaluation's
// contract, with their arguments as results show them (see expectedArgs);
// the slice is copied only when something changes.
func (r *redactor) expectedCalls(calls []ExpectedCall) []ExpectedCall {
	if r.repl == nil && (!r.named || r.contractSame) {
		return calls // nothing replaced, and the contract's arguments hide nothing
	}
	var out []ExpectedCall
	for i, c := range calls {
		tool, args := r.text(c.Tool), r.expectedArgs(c.Args)
		if tool == c.Tool && args.same(c.Args) {
			continue
		}
		if out == nil {
			out = slices.Clone(calls)
		}
		out[i] = ExpectedCall{Tool: tool, Args: args}
	}
	if out == nil {
		return calls
	}
	return out
}

// texts returns xs with every globally replaced secret replaced, copied
// only when something changes.
func (r *redactor) texts(xs []string) []string {
	if r.repl == nil {
		return xs
	}
	var out []string
	for i, x := range xs {
		if y := r.text(x); y != x {
			if out == nil {
				out = slices.Clone(xs)
			}
			out[i] = y
		}
	}
	if out == nil {
		return xs
	}
	return out
}

// replaceAt returns v with the string or number at the path segs replaced
// by marker, copying the maps and slices along the path, and whether
// anything changed (false when the path does not lead to a string or a
// number).
func replaceAt(v any, segs []string, marker string) (any, bool) {
	if len(segs) == 0 {
		switch v.(type) {
		case string, json.Number:
			return marker, true
		}
		return v, false
	}
	switch x := v.(type) {
	case map[string]any:
		e, ok := x[segs[0]]
		if !ok {
			return v, false
		}
		ne, changed := replaceAt(e, segs[1:], marker)
		if !changed {
			return v, false
		}
		out := maps.Clone(x)
		out[segs[0]] = ne
		return out, true
	case []any:
		i, err := strconv.Atoi(segs[0])
		if err != nil || i < 0 || i >= len(x) {
			return v, false
		}
		ne, changed := replaceAt(x[i], segs[1:], marker)
		if !changed {
			return v, false
		}
		out := slices.Clone(x)
		out[i] = ne
		return out, true
	}
	return v, false
}

// pointerOf joins path segments into a JSON pointer.
func pointerOf(segs []string) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(escapePointer(s))
	}
	return b.String()
}
