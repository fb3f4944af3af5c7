package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolscore/toolscore/internal/engine/secretscan"
)

// This file implements the credentials check's scan (SPEC section 5;
// docs/checks.md "credentials"). Secrets are found by two kinds of rules:
// those of the SecretScanner the caller injects (Options.SecretScanner;
// package secrets is the default: gitleaks' default rules and passwords in
// URLs), which sees every string the check examines in one call, and the
// engine's own rule for argument keys that name a secret
// (RuleSecretNamedArgument).

// SecretScanner finds secrets in texts for the credentials check: the
// engine gives it every non-empty string value of a trace's arguments,
// every args_raw text and the final answer in one call, and gets back
// which secret each text holds, by which rule. It must be safe for
// concurrent use and deterministic. See secretscan.Scanner for the whole
// contract; package secrets is the default implementation.
type SecretScanner = secretscan.Scanner

// SecretFinding is one secret a SecretScanner found: the index of the text
// it was given, the rule id, the secret as it occurs in the text, and the
// length of its literal prefix (see secretscan.Finding).
type SecretFinding = secretscan.Finding

// RuleSecretNamedArgument is the Finding.Rule of an argument whose key
// names a secret (password, api_key, token, ...) and whose value is a
// literal rather than a reference such as "${API_KEY}".
const RuleSecretNamedArgument = "secret-named-argument"

// errNoSecretScanner is the credential scan's error when Options has no
// SecretScanner: only secret-named arguments are found, and the
// credentials check reports unknown.
var errNoSecretScanner = errors.New("no secret scanner configured (Options.SecretScanner); only secret-named arguments were checked")

// secretKeyNames are normalised argument keys (lower case, letters and
// digits only) that name a secret; secretKeySuffixes also match as the end
// of a longer key (client_secret, db_password, x-api-key). A normalised
// key longer than maxSecretKeyLen names none.
var (
	secretKeyNames    = []string{"pwd", "authorization", "credential", "credentials"}
	secretKeySuffixes = []string{
		"password", "passwd", "passphrase", "secret", "apikey", "apikeys",
		"privatekey", "secretkey", "accesskey", "signingkey",
		"encryptionkey", "masterkey", "clientsecret", "token",
		"credentials", "passwords", "secrets",
	}
	// tokenNotSecret are key prefixes before "token" that name a
	// pagination or counting token, not a credential.
	tokenNotSecret = []string{
		"page", "nextpage", "prevpage", "previouspage", "pagination",
		"continuation", "next", "sync", "resume", "cursor", "max", "num",
		"total", "start", "end", "stop", "cancellation", "cancel", "idempotency",
	}
	// The lists above spelt backwards, for matching a key from its end:
	// the names, the suffixes grouped by their last byte (in list order),
	// and the token prefixes.
	secretNamesRev, tokenNotSecretRev = reverseAll(secretKeyNames), reverseAll(tokenNotSecret)
	secretSuffixesRevByLast           = func() (m [256][]string) {
		for _, s := range reverseAll(secretKeySuffixes) {
			m[s[0]] = append(m[s[0]], s)
		}
		return m
	}()
	// secretKeyEnds says which last two characters a normalised key may
	// end with and name a secret: bit b of secretKeyEnds[c] is set when
	// some name or suffix ends with the characters of alnum index b then
	// c (see alnumIndex).
	secretKeyEnds = func() (m [37]uint64) {
		for _, w := range append(append([]string{}, secretKeyNames...), secretKeySuffixes...) {
			m[alnumIndex(w[len(w)-1])] |= 1 << alnumIndex(w[len(w)-2])
		}
		return m
	}()
	// secretKeyEnds3 says which last three characters a normalised key
	// may end with and name a secret: bit b of secretKeyEnds3[37*i+j] is
	// set when some name or suffix ends with the characters of alnum
	// index b, j then i.
	secretKeyEnds3 = func() (m [37 * 37]uint64) {
		for _, w := range append(append([]string{}, secretKeyNames...), secretKeySuffixes...) {
			n := len(w)
			m[37*alnumIndex(w[n-1])+alnumIndex(w[n-2])] |= 1 << alnumIndex(w[n-3])
		}
		return m
	}()
	// lowerAlnum maps an ASCII letter or digit to itself lower-cased,
	// every other byte to 0.
	lowerAlnum = func() (t [256]byte) {
		for c := range 256 {
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				t[c] = byte(c)
			case 'A' <= c && c <= 'Z':
				t[c] = byte(c + 'a' - 'A')
			}
		}
		return t
	}()
)

const (
	// maxSecretKeyLen is the longest normalised key that may name a
	// secret: far longer than any secret name we know.
	maxSecretKeyLen = 64
	// keyTail is how many normalised characters isSecretKey reads from
	// the end of a key: at least the longest name and suffix (13), and
	// "token" after the longest tokenNotSecret prefix (12 + 5).
	keyTail = 18
)

// alnumIndex returns 1 to 36 for a lower-case ASCII letter or a digit, 0
// for any other byte.
func alnumIndex(c byte) int {
	switch {
	case 'a' <= c && c <= 'z':
		return int(c-'a') + 1
	case '0' <= c && c <= '9':
		return int(c-'0') + 27
	}
	return 0
}

// reverseAll returns the strings of ss spelt backwards.
func reverseAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		b := []byte(s)
		slices.Reverse(b)
		out[i] = string(b)
	}
	return out
}

// keyMayNameSecret is false for most keys that name no secret (see
// isSecretKey), from their last three bytes alone: fewer than three
// bytes, or three letters or digits with which no name or suffix ends.
func keyMayNameSecret(key string) bool {
	n := len(key)
	if n < 3 {
		return false // fewer than three bytes
	}
	a, b, c := alnumIdx[key[n-1]], alnumIdx[key[n-2]], alnumIdx[key[n-3]]
	return a == 0 || b == 0 || c == 0 || secretKeyEnds3[37*int(a)+int(b)]&(1<<c) != 0
}

// secretKeyPairs says which last two bytes a key may end with and name a
// secret: any pair but two letters or digits with which no name or suffix
// ends (in either case). A key of two or more bytes whose ending is not in
// it names none (isSecretKey reads the same two characters first).
var secretKeyPairs = func() (e jsondoc.KeyEnds) {
	for last := range 256 {
		a := alnumIdx[last]
		if a == 0 {
			e[last] = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
			continue
		}
		for prev := range 256 {
			if b := alnumIdx[prev]; b == 0 || secretKeyEnds[a]&(1<<b) != 0 {
				e.Add(byte(prev), byte(last))
			}
		}
	}
	return e
}()

// alnumIdx is alnumIndex of lowerAlnum, by byte.
var alnumIdx = func() (t [256]uint8) {
	for c := range 256 {
		t[c] = uint8(alnumIndex(lowerAlnum[c]))
	}
	return t
}()

// isSecretKey reports whether an argument key names a secret: its
// normalised form (lower case, letters and digits only; at most
// maxSecretKeyLen characters) is one of secretKeyNames, or ends with one
// of secretKeySuffixes ("token" not after one of tokenNotSecret). It reads
// the key from its end, and only as far as a name or suffix could reach
// unless one matches.
func isSecretKey(key string) bool {
	var buf [keyTail]byte // the normalised key's last characters, last first
	n, i := 0, len(key)-1
	read := func(upTo int) {
		for ; i >= 0 && n < upTo; i-- {
			if c := lowerAlnum[key[i]]; c != 0 {
				buf[n] = c
				n++
			}
		}
	}
	read(2)
	if n < 2 || secretKeyEnds[alnumIndex(buf[0])]&(1<<alnumIndex(buf[1])) == 0 {
		return false // no name or suffix ends so (every one has 3 or more characters)
	}
	read(keyTail)
	// whole: buf holds the whole normalised key.
	whole := true
	for ; i >= 0 && whole; i-- {
		whole = lowerAlnum[key[i]] == 0
	}
	matched := false
	if whole {
		for _, name := range secretNamesRev {
			if string(buf[:n]) == name {
				matched = true
				break
			}
		}
	}
	if !matched {
		for _, suf := range secretSuffixesRevByLast[buf[0]] {
			if len(suf) > n || string(buf[:len(suf)]) != suf {
				continue
			}
			if suf == "nekot" && whole {
				for _, p := range tokenNotSecretRev {
					if string(buf[len(suf):n]) == p {
						return false
					}
				}
			}
			matched = true
			break
		}
	}
	if !matched {
		return false
	}
	if whole {
		return true
	}
	long := 0
	for i := 0; i < len(key); i++ {
		if lowerAlnum[key[i]] != 0 {
			long++
		}
	}
	return long <= maxSecretKeyLen
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
// four, and whole characters within its first prefix bytes: the literal that the rule's
// pattern fixes at the start of every secret it finds, "ghp_" of
// github-pat, "AKIA" of aws-access-token, "xoxb" of slack-bot-token; see
// SecretFinding.Prefix) when there are some, the rule is not a generic one
// nor secret-named-argument, and the secret is at least 20 characters
// long. Those characters tell the token's type and are no part of what is
// secret; a rule whose secrets start with random characters shows none.
func maskSecret(s, rule string, prefix int) string {
	const masked = "****"
	if utf8.RuneCountInString(s) < 20 || rule == RuleSecretNamedArgument || strings.Contains(rule, "generic") {
		return masked
	}
	best := min(max(prefix, 0), len(s))
	i := 0
	for n := 0; n < 4 && i < best; n++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		if i+size > best {
			break // whole characters only
		}
		i += size
	}
	return s[:i] + masked
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
	// err is set when the scan is incomplete: no SecretScanner, or it
	// failed on some text or returned an invalid finding (the other
	// findings are kept).
	err error
	// findings are in call order (final answer last), then path, then
	// rule.
	findings []credentialFinding
	// shown are the secrets found only in what the check does not judge
	// (tool results, error texts, argument keys), ordered by secret and
	// rule: redacted in what the result shows, never findings.
	shown []shownSecret
}

// scanScratch is the credential scan's scratch: the texts handed to the
// SecretScanner, and the shown ones before they join them.
type scanScratch struct {
	texts, shown []string
	wk           jsondoc.Walker
	open         []byte
	flat         []jsondoc.Text
	keys         []string
}

// shownSecret is a secret to redact in the result that is not a finding
// of the credentials check: its text and the rule that found it.
type shownSecret struct{ secret, rule string }

// scanCredentials scans every string value of every call's arguments (with
// its JSON pointer), the args_raw text of every call that has one, and the
// final answer: all of them with s in one call, and the values under
// secret-named keys for literal secrets. When s is nil or fails (err is
// set), secret-named arguments are still found, and what s did find is
// kept.
//
// The same call to s also scans what the check does not judge but a
// result shows: the arguments' object keys, every string value and object
// key of every call's result, and every call's error text. Their secrets
// go to shown (redacted, never findings), so the check's findings and
// status are those of the judged texts alone.
//
// s finds secrets in texts, whatever their place: a finding applies to
// every place that holds its text (the same text holds the same secrets),
// so the trace is walked once more, to find those places, only when s
// found something.
func scanCredentials(ctx context.Context, t *Trace, s SecretScanner) *credentialScan {
	cs := &credentialScan{}
	scanCredentialsInto(ctx, t, s, nil, cs)
	return cs
}

// scanCredentialsInto is scanCredentials into cs, with buf (nil: none) as
// scratch for the lists of texts handed to s: they are reused, and left
// empty with no reference to the trace.
func scanCredentialsInto(ctx context.Context, t *Trace, s SecretScanner, buf *scanScratch, cs *credentialScan) {
	*cs = credentialScan{}
	var w argWalker
	if buf != nil {
		w.texts, w.shown, w.wk, w.open, w.flat, w.keys = buf.texts[:0], buf.shown[:0], buf.wk, buf.open, buf.flat, buf.keys
		defer func() {
			clear(w.texts)
			clear(w.shown)
			clear(w.flat)
			clear(w.keys[:cap(w.keys)]) // collectFlat's, left as they were
			buf.texts, buf.shown, buf.open, buf.flat, buf.keys = w.texts[:0], w.shown[:0], w.open, w.flat[:0], w.keys[:0]
			buf.wk = w.wk
			buf.wk.Reset(jsondoc.Value{}) // no reference to the trace
		}()
	}
	if m, ok := s.(secretscan.MinTextLen); ok {
		w.minLen = m.MinTextLen()
	}
	if w.texts == nil {
		n := 1
		for i := range t.Calls {
			n += t.Calls[i].Args.Len() + 1
		}
		w.texts = make([]string, 0, n)
	}
	for i := range t.Calls {
		c := &t.Calls[i]
		if c.Args.Exists() && !w.collectFlat(c.Args) && w.collect(c.Args) {
			// A literal under a secret-named key: walk the call again,
			// with its argument paths, to record it.
			w.call = i
			w.literals(c.Args, false)
		}
		if c.ArgsRaw != "" {
			w.texts = append(w.texts, c.ArgsRaw)
		}
		if c.Result.Exists() {
			w.collectShown(c.Result)
		}
		if c.Error != "" && c.Error != "true" {
			w.shown = append(w.shown, string(c.Error))
		}
	}
	if t.FinalAnswer != nil && *t.FinalAnswer != "" {
		w.texts = append(w.texts, *t.FinalAnswer)
	}
	// The shown texts come after the judged ones (one scan for both).
	w.texts = distinctTexts(append(w.texts, w.shown...))
	var found []SecretFinding
	switch {
	case s == nil:
		cs.err = errNoSecretScanner
	case len(w.texts) > 0:
		found, cs.err = s.ScanSecrets(ctx, w.texts)
	}
	for k, f := range found {
		if err := validFinding(f, w.texts); err != nil {
			if cs.err == nil {
				cs.err = fmt.Errorf("secret scanner: finding %d: %w", k, err)
			}
			continue
		}
		if w.found == nil {
			w.found = map[string][]SecretFinding{}
		}
		text := w.texts[f.Text]
		w.found[text] = append(w.found[text], f)
	}
	// A value under a secret-named key is a secret-named argument unless
	// the scanner found a secret in it.
	for _, l := range w.lits {
		if _, ok := w.found[l.text]; !ok {
			w.out = append(w.out, l.finding)
		}
	}
	if w.found != nil {
		for i := range t.Calls {
			c := &t.Calls[i]
			w.call = i
			if c.Args.Exists() {
				w.place(c.Args)
			}
			if c.ArgsRaw != "" {
				w.report(c.ArgsRaw)
			}
		}
		if t.FinalAnswer != nil {
			w.call = -1
			w.report(*t.FinalAnswer)
		}
	}
	slices.SortFunc(w.out, compareCredentialFindings)
	cs.findings = slices.CompactFunc(w.out, func(a, b credentialFinding) bool {
		return a.Call == b.Call && a.Path == b.Path && a.Rule == b.Rule && a.secret == b.secret
	})
	if w.found != nil {
		judged := make(map[string]bool, len(cs.findings))
		for _, f := range cs.findings {
			judged[f.secret] = true
		}
		for _, fs := range w.found {
			for _, f := range fs {
				if !judged[f.Secret] {
					cs.shown = append(cs.shown, shownSecret{f.Secret, f.Rule})
				}
			}
		}
		slices.SortFunc(cs.shown, func(a, b shownSecret) int {
			return cmp.Or(strings.Compare(a.secret, b.secret), strings.Compare(a.rule, b.rule))
		})
		cs.shown = slices.Compact(cs.shown)
	}
}

// distinctTexts returns texts without the repeats that a small table of
// the texts kept so far catches (most repeats in a trace: the same path
// or name in call after call) and without empty texts, compacted in place
// and the rest of the slice cleared. A scanner finds the same secrets in
// the same text, and findings are grouped by text, so a repeat left out
// changes nothing found; an empty text holds no secret (a finding's
// secret is a non-empty part of its text). Time is linear in the texts'
// number (one string comparison each).
func distinctTexts(texts []string) []string {
	if len(texts) == 0 || len(texts) == 1 && texts[0] != "" {
		return texts
	}
	var seen [32]string
	n := 0
	for _, t := range texts {
		if t == "" {
			continue // no secret is in it
		}
		h := uint(len(t)) ^ uint(t[0])<<1 ^ uint(t[len(t)-1])<<3
		if h %= uint(len(seen)); seen[h] == t {
			continue
		}
		seen[h] = t
		texts[n] = t
		n++
	}
	clear(texts[n:])
	return texts[:n]
}

// validFinding returns why f, found in texts, breaks the rules of
// SecretFinding; nil when it does not.
func validFinding(f SecretFinding, texts []string) error {
	switch {
	case f.Text < 0 || f.Text >= len(texts):
		return fmt.Errorf("text %d out of range [0, %d)", f.Text, len(texts))
	case f.Rule == "":
		return errors.New("no rule")
	case f.Secret == "":
		return errors.New("empty secret")
	case f.Prefix < 0 || f.Prefix > len(f.Secret):
		return fmt.Errorf("prefix %d out of range [0, %d]", f.Prefix, len(f.Secret))
	case !strings.Contains(texts[f.Text], f.Secret):
		return fmt.Errorf("secret of rule %s not in text %d", f.Rule, f.Text)
	}
	return nil
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

// argWalker walks the calls' argument trees, keeping the JSON pointer
// segments on a stack and building a pointer only for a finding, so deep
// nesting costs linear time.
type argWalker struct {
	call int
	segs []string
	// minLen is the scanner's minimum text length (see
	// secretscan.MinTextLen): shorter texts are not collected.
	minLen int
	// wk and open are collect's walker and stack, flat the texts of
	// collectShown, keys collectFlat's keys (empty between calls; the
	// scan clears what they held once, at its end).
	wk   jsondoc.Walker
	open []byte
	flat []jsondoc.Text
	keys []string
	// texts are the texts to scan, in walk order: the judged ones, then
	// shown.
	texts []string
	// shown are the texts scanned only for redaction (argument keys,
	// results, error texts), in walk order.
	shown []string
	// lits are the literal values under secret-named keys found by
	// literals; those whose text holds a secret the scanner found are not
	// reported.
	lits []literalValue
	// found are the scanner's valid findings by the text they are in.
	found map[string][]SecretFinding
	out   []credentialFinding
}

// literalValue is a literal under a secret-named key: its text (a string
// value, or "" for a number, which the scanner does not see) and its
// finding.
type literalValue struct {
	text    string
	finding credentialFinding
}

// collectFlat is collect for arguments v without a key that names a
// secret and without a repeated key (most): it adds what collect adds,
// from one flat pass over v's nodes (jsondoc.Value.AppendStrings), and
// reports true. For other arguments it adds nothing and reports false:
// collect then walks them.
func (w *argWalker) collectFlat(v jsondoc.Value) bool {
	minLen := max(w.minLen, 1)
	nt, ns := len(w.texts), len(w.shown)
	// The keys that may name a secret (by their last two bytes) or are
	// long enough to be shown; the others are neither.
	texts, keys, ok := v.AppendStringsKeys(w.texts, w.keys[:0], minLen, &secretKeyPairs)
	w.texts, w.keys = texts, keys
	if ok {
		for _, k := range keys {
			if keyMayNameSecret(k) && isSecretKey(k) {
				ok = false
				break
			}
			if len(k) >= minLen {
				w.shown = append(w.shown, k)
			}
		}
	}
	if !ok {
		w.rollback(nt, ns)
	}
	return ok
}

// rollback drops the texts and shown texts added after the first nt and
// ns.
func (w *argWalker) rollback(nt, ns int) {
	clear(w.texts[nt:])
	clear(w.shown[ns:])
	w.texts, w.shown = w.texts[:nt], w.shown[:ns]
}

// collect adds the strings of v to w.texts and its object keys to w.shown
// (those shorter than w.minLen left out: the scanner finds nothing in
// them), and reports whether v holds a literal secret under a
// secret-named key (see literalSecret): a string or number under such a
// key, directly or in arrays (array elements inherit the key). It keeps
// no paths: literals walks v again for them. It is one flat pass over v
// (jsondoc.Walker), with a stack of what each open array or object is.
func (w *argWalker) collect(v jsondoc.Value) bool {
	wk := &w.wk
	wk.Reset(v)
	// open holds, per open array or object: inObject, inArray, or
	// inSecretArray (an array under a secret-named key, or in one).
	open := w.open[:0]
	defer func() { w.open = open[:0] }()
	minLen := max(w.minLen, 1)
	found := false
	key := ""
	for {
		switch wk.Next() {
		case jsondoc.StepDone:
			return found
		case jsondoc.StepEnd:
			open = open[:len(open)-1]
		case jsondoc.StepKey:
			key = wk.Text()
			if len(key) >= minLen {
				w.shown = append(w.shown, key)
			}
		case jsondoc.StepValue:
			in := byte(0)
			if len(open) > 0 {
				in = open[len(open)-1]
			}
			switch wk.Kind() {
			case jsondoc.String:
				x := wk.Text()
				if x == "" {
					continue
				}
				if len(x) >= minLen {
					w.texts = append(w.texts, x)
				}
				if !found && len(x) >= 4 && (in == inSecretArray || in == inObject && isSecretKey(key)) {
					_, found = literalSecret(x)
				}
			case jsondoc.Number:
				if !found && len(wk.Text()) >= 4 && (in == inSecretArray || in == inObject && isSecretKey(key)) {
					found = true // literalSecret: a number of 4 digits or more
				}
			case jsondoc.Array:
				a := inArray
				if in == inSecretArray || in == inObject && wk.Value().Len() > 0 && isSecretKey(key) {
					a = inSecretArray
				}
				open = append(open, a)
			case jsondoc.Object:
				open = append(open, inObject)
			}
		}
	}
}

// What collect's open stack says of an open array or object.
const (
	inObject byte = 1 + iota
	inArray
	inSecretArray
)

// literals adds the literal values of v under secret-named keys to
// w.lits, with their paths; secretKey is as for collect.
func (w *argWalker) literals(v jsondoc.Value, secretKey bool) {
	switch v.Kind() {
	case jsondoc.Object:
		for k, e := range v.Members() {
			w.segs = append(w.segs, k)
			w.literals(e, mayBeLiteral(e) && isSecretKey(k))
			w.segs = w.segs[:len(w.segs)-1]
		}
	case jsondoc.Array:
		for i, e := range v.Elems() {
			w.segs = append(w.segs, strconv.Itoa(i))
			w.literals(e, secretKey)
			w.segs = w.segs[:len(w.segs)-1]
		}
	case jsondoc.String:
		if x := v.Text(); x != "" && secretKey {
			w.literal(x, x)
		}
	case jsondoc.Number:
		if secretKey {
			n, _ := v.Num()
			w.literal(json.Number(n), "")
		}
	}
}

// collectShown adds every string value and object key of v (a tool
// result) to w.shown (those shorter than w.minLen left out), for secrets
// to redact in what the result shows.
func (w *argWalker) collectShown(v jsondoc.Value) {
	minLen := max(w.minLen, 1)
	w.flat = v.AppendTexts(w.flat[:0], minLen)
	for _, t := range w.flat {
		if len(t.Text) >= minLen {
			w.shown = append(w.shown, t.Text)
		}
	}
}

// mayBeLiteral reports whether v may be, or hold as an array, a literal
// secret (see literalSecret): only then does its key need checking.
func mayBeLiteral(v jsondoc.Value) bool {
	switch v.Kind() {
	case jsondoc.String:
		return len(v.Text()) >= 4
	case jsondoc.Number:
		n, _ := v.Num()
		return len(n) >= 4
	case jsondoc.Array:
		return v.Len() > 0
	}
	return false
}

// literal records v, whose scanned text is text, when it is a literal
// secret under a secret-named key (see literalSecret).
func (w *argWalker) literal(v any, text string) {
	s, ok := literalSecret(v)
	if !ok {
		return
	}
	w.lits = append(w.lits, literalValue{text: text, finding: credentialFinding{
		Finding: Finding{Call: w.call, Path: pointerOf(w.segs), Rule: RuleSecretNamedArgument, Value: maskSecret(s, RuleSecretNamedArgument, 0)},
		secret:  s,
		exact:   true,
		segs:    slices.Clone(w.segs),
	}})
}

// place walks v again, reporting the findings of each string value at its
// pointer; scanCredentials sorts the findings.
func (w *argWalker) place(v jsondoc.Value) {
	switch v.Kind() {
	case jsondoc.Object:
		for k, e := range v.Members() {
			w.segs = append(w.segs, k)
			w.place(e)
			w.segs = w.segs[:len(w.segs)-1]
		}
	case jsondoc.Array:
		for i, e := range v.Elems() {
			w.segs = append(w.segs, strconv.Itoa(i))
			w.place(e)
			w.segs = w.segs[:len(w.segs)-1]
		}
	case jsondoc.String:
		w.report(v.Text())
	}
}

// report adds the findings in text, at the current call and pointer.
func (w *argWalker) report(text string) {
	fs := w.found[text]
	if len(fs) == 0 {
		return
	}
	path := pointerOf(w.segs)
	for _, f := range fs {
		w.out = append(w.out, credentialFinding{
			Finding: Finding{Call: w.call, Path: path, Rule: f.Rule, Value: maskSecret(f.Secret, f.Rule, f.Prefix)},
			secret:  f.Secret,
		})
	}
}
