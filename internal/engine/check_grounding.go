package engine

import (
	"bytes"
	"cmp"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"slices"
	"strings"
	"unicode/utf8"
)

// This file holds the deterministic rules of the grounding check (SPEC
// section 5; docs/checks.md "grounding"): which parts of a final answer
// are identifiers, and where in the trace they are looked for.

// maxGroundingIDs bounds how many distinct identifiers of one answer are
// looked up, so a huge answer costs at most maxGroundingIDs passes over the
// calls' text.
const maxGroundingIDs = 500

// identifier is one identifier quoted in a final answer.
type identifier struct {
	// text is the identifier as written.
	text string
	// kind is "url", "email", "code" or "number".
	kind string
}

// idKeywords are words after which a number of at least 4 digits, or an
// upper-case code of at least 5 letters, is an identifier ("order 12345",
// "confirmation number: 884512", "PNR XKCDQZ").
var idKeywords = map[string]bool{
	"order": true, "ticket": true, "booking": true, "reservation": true,
	"confirmation": true, "invoice": true, "case": true, "reference": true,
	"ref": true, "id": true, "tracking": true, "transaction": true,
	"account": true, "pnr": true, "receipt": true, "record": true,
	"incident": true, "claim": true, "locator": true, "code": true,
}

// idFillers may stand between an id keyword and the identifier.
var idFillers = map[string]bool{"number": true, "no": true, "id": true, "is": true, "code": true, "num": true, "nr": true}

// unitSuffixes are letter suffixes that make a number-with-letters token a
// quantity, an ordinal or a time rather than a code ("22nd", "10am",
// "500kg").
var unitSuffixes = map[string]bool{
	"st": true, "nd": true, "rd": true, "th": true, "am": true, "pm": true,
	"h": true, "hr": true, "hrs": true, "min": true,
	"mins": true, "s": true, "sec": true, "secs": true, "ms": true, "d": true,
	"w": true, "m": true, "y": true, "yr": true, "yrs": true, "k": true,
	"kb": true, "mb": true, "gb": true, "tb": true, "kg": true, "g": true,
	"lb": true, "lbs": true, "oz": true, "km": true, "mi": true, "cm": true,
	"mm": true, "px": true, "x": true, "l": true, "ml": true, "kw": true,
	"kwh": true, "mph": true, "kmh": true, "usd": true, "eur": true,
	"gbp": true, "pct": true, "c": true, "f": true,
}

// extractIdentifiers returns the distinct identifiers quoted in text, in
// order of first appearance (compared case-insensitively), at most max of
// them, and whether more were left out (docs/checks.md "grounding"): URLs
// (http:// or https://), e-mail addresses, codes (a token of letters and
// digits, possibly joined by '-' or '_', with at least one letter and two
// digits, such as FL-204, 12A, INC0012345, a UUID; not a quantity such as
// 10am or 22nd), and numbers of at least 3 digits after '#' or of at
// least 4 digits (or upper-case codes of at least 5 letters) after an id
// keyword ("order 12345"). Every identifier is ASCII: a URL ends before
// the first byte that is not, and the other kinds are made of ASCII
// letters, digits and punctuation. Time is linear in len(text).
func extractIdentifiers(text string, max int) (ids []identifier, more bool) {
	ids, more, _ = extractIdentifiersHiding(text, max, nil)
	return ids, more
}

// extractIdentifiersHiding is extractIdentifiers leaving out every
// identifier for which hide (when not nil) reports true, given its text
// and its byte range [start, end) in text: an identifier text hidden once
// is hidden wherever it occurs. hidden counts the distinct identifiers
// left out; hidden ones do not count towards max.
func extractIdentifiersHiding(text string, max int, hide func(id string, start, end int) bool) (ids []identifier, more bool, hidden int) {
	var seen idSet
	at := 0 // the start of the identifier being added
	add := func(s, kind string) {
		if more {
			return
		}
		if !seen.add(s) {
			return
		}
		if hide != nil && hide(s, at, at+len(s)) {
			hidden++
			return
		}
		if len(ids) == max {
			more = true
			return
		}
		ids = append(ids, identifier{text: s, kind: kind})
	}
	var prev [3]string // the last words, most recent first
	push := func(w string) { prev[2], prev[1], prev[0] = prev[1], prev[0], w }
	afterKeyword := func() bool {
		for _, w := range prev {
			if idKeywords[w] {
				return true
			}
			if !idFillers[w] {
				return false
			}
		}
		return false
	}
	for i := 0; i < len(text); {
		c := text[i]
		// URLs.
		if (c == 'h' || c == 'H') && hasPrefixFold(text[i:], "http") {
			if n := urlLen(text[i:]); n > 0 {
				at = i
				add(text[i:i+n], "url")
				i += n
				push("")
				continue
			}
		}
		if !isAlnum(c) {
			i++
			continue
		}
		// A token: letters and digits, single '-' or '_' between them,
		// or a '.' between letters and digits inside an e-mail address.
		j := i
		for j < len(text) {
			if isAlnum(text[j]) {
				j++
				continue
			}
			if (text[j] == '-' || text[j] == '_' || text[j] == '.' || text[j] == '+' || text[j] == '%') && j+1 < len(text) && isAlnum(text[j+1]) {
				j++
				continue
			}
			break
		}
		if j < len(text) && text[j] == '@' {
			if n := domainLen(text[j+1:]); n > 0 {
				at = i
				add(text[i:j+1+n], "email")
				i = j + 1 + n
				push("")
				continue
			}
		}
		// Outside e-mail addresses, '.', '+' and '%' end tokens.
		if k := strings.IndexAny(text[i:j], ".+%"); k >= 0 {
			j = i + k
		}
		tok := text[i:j]
		hash := i > 0 && text[i-1] == '#'
		at = i
		switch letters, digits := countLettersDigits(tok); {
		case letters > 0 && digits >= 2 && !isQuantity(tok):
			add(tok, "code")
		case letters == 0 && (hash && digits >= 3 || digits >= 4 && afterKeyword()) && !strings.ContainsAny(tok, "-_"):
			add(tok, "number")
		case digits == 0 && len(tok) >= 5 && isUpperWord(tok) && afterKeyword():
			add(tok, "code")
		}
		push(strings.ToLower(tok))
		i = j
	}
	return ids, more, hidden
}

// idSet is a set of identifiers compared case-insensitively. Identifiers
// are ASCII (see extractIdentifiersHiding), so the first few are kept in a
// list compared with strings.EqualFold, and a map of lower-cased keys is
// made only past smallIDSet of them.
type idSet struct {
	small [smallIDSet]string
	n     int
	big   map[string]bool
}

const smallIDSet = 8

// add adds id and reports whether it was not in the set.
func (s *idSet) add(id string) bool {
	if s.big == nil {
		for _, x := range s.small[:s.n] {
			if strings.EqualFold(x, id) {
				return false
			}
		}
		if s.n < smallIDSet {
			s.small[s.n] = id
			s.n++
			return true
		}
		s.big = make(map[string]bool, 2*smallIDSet)
		for _, x := range s.small[:s.n] {
			s.big[strings.ToLower(x)] = true
		}
	}
	k := strings.ToLower(id)
	if s.big[k] {
		return false
	}
	s.big[k] = true
	return true
}

func isAlnum(c byte) bool { return '0' <= c && c <= '9' || isASCIILetter(c) }

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// urlLen returns the length of the http(s) URL at the start of s, without
// trailing punctuation, or 0.
func urlLen(s string) int {
	var n int
	switch {
	case hasPrefixFold(s, "https://"):
		n = len("https://")
	case hasPrefixFold(s, "http://"):
		n = len("http://")
	default:
		return 0
	}
	start := n
	for n < len(s) {
		c := s[n]
		if c <= ' ' || c == '"' || c == '<' || c == '>' || c == '`' || c == '\'' || c >= 0x7f {
			break
		}
		n++
	}
	for n > start && strings.IndexByte(".,;:!?)]}*", s[n-1]) >= 0 {
		n--
	}
	if n == start {
		return 0
	}
	return n
}

// domainLen returns the length of the e-mail domain at the start of s
// (labels of letters, digits and '-', a last label of at least two
// letters), or 0.
func domainLen(s string) int {
	n, lastDot := 0, -1
	for n < len(s) && (isAlnum(s[n]) || s[n] == '-' || s[n] == '.' && n+1 < len(s) && isAlnum(s[n+1])) {
		if s[n] == '.' {
			lastDot = n
		}
		n++
	}
	if lastDot <= 0 || n-lastDot-1 < 2 {
		return 0
	}
	for _, c := range []byte(s[lastDot+1 : n]) {
		if !isASCIILetter(c) {
			return 0
		}
	}
	return n
}

func countLettersDigits(s string) (letters, digits int) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			digits++
		case isASCIILetter(c):
			letters++
		}
	}
	return letters, digits
}

// isQuantity reports whether tok is digits followed by a unit, ordinal or
// time suffix ("10am", "22nd", "500kg").
func isQuantity(tok string) bool {
	i := 0
	for i < len(tok) && '0' <= tok[i] && tok[i] <= '9' {
		i++
	}
	return i > 0 && unitSuffixes[strings.ToLower(tok[i:])]
}

func isUpperWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// groundingIndex holds, per trace call, the lower-cased text of its tool
// name, argument values, raw arguments, result values and error, where
// identifiers are looked for. A call's text is built the first time a
// lookup reaches it (lookups go through the calls in order, so the texts
// built are those of the first calls), so an identifier found in the
// first call costs one call's text. The texts are built one after another
// in one buffer.
type groundingIndex struct {
	t *Trace
	// buf holds the texts of calls 0 to len(ends)-1, in order; call i's
	// ends at ends[i].
	buf  []byte
	ends []int
}

// newGroundingIndex returns the (lazy) index of t's calls.
func newGroundingIndex(t *Trace) *groundingIndex {
	return &groundingIndex{t: t}
}

// text returns call i's lower-cased text: its tool name, every string and
// number of its arguments (object keys too), its raw arguments, every
// string and number of its result and its error, each followed by a line
// break but the error. Lower-casing each piece alone gives what
// lower-casing the whole text would: a line break cannot be part of a
// multi-byte character.
func (gi *groundingIndex) text(i int) []byte {
	for len(gi.ends) <= i {
		if gi.ends == nil {
			gi.ends = make([]int, 0, len(gi.t.Calls))
			gi.buf = make([]byte, 0, 512)
		}
		c := &gi.t.Calls[len(gi.ends)]
		b := appendLowerText(gi.buf, c.Tool)
		b = append(b, '\n')
		b = appendDocLeaves(b, c.Args)
		b = appendLowerText(b, c.ArgsRaw)
		b = append(b, '\n')
		b = appendDocLeaves(b, c.Result)
		b = appendLowerText(b, string(c.Error))
		gi.buf = b
		gi.ends = append(gi.ends, len(b))
	}
	start := 0
	if i > 0 {
		start = gi.ends[i-1]
	}
	return gi.buf[start:gi.ends[i]]
}

// appendLowerText appends strings.ToLower(s) to dst, without allocating
// for ASCII text.
func appendLowerText(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return append(dst, strings.ToLower(s[i:])...)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// appendDocLeaves appends every string and number of a document's value
// (object keys too), lower-cased, one per line, in document order.
func appendDocLeaves(b []byte, v jsondoc.Value) []byte {
	switch v.Kind() {
	case jsondoc.Object:
		for k, e := range v.Members() {
			b = appendLowerText(b, k)
			b = append(b, '\n')
			b = appendDocLeaves(b, e)
		}
	case jsondoc.Array:
		for _, e := range v.Elems() {
			b = appendDocLeaves(b, e)
		}
	case jsondoc.String, jsondoc.Number:
		s, ok := v.Str()
		if !ok {
			s, _ = v.Num()
		}
		b = appendLowerText(b, s)
		b = append(b, '\n')
	}
	return b
}

// find returns the index of the first call whose text holds id
// (case-insensitively, not as part of a longer run of letters and digits),
// or -1.
func (gi *groundingIndex) find(id string) int {
	var buf [64]byte
	lid := appendLowerText(buf[:0], id)
	for i := range gi.t.Calls {
		if containsToken(gi.text(i), lid) {
			return i
		}
	}
	return -1
}

// containsToken reports whether h contains id with no letter or digit
// right before or after it (when id starts or ends with one).
func containsToken(h, id []byte) bool {
	for off := 0; ; {
		k := bytes.Index(h[off:], id)
		if k < 0 {
			return false
		}
		start, end := off+k, off+k+len(id)
		okL := start == 0 || !isAlnum(h[start-1]) || !isAlnum(id[0])
		okR := end == len(h) || !isAlnum(h[end]) || !isAlnum(id[len(id)-1])
		if okL && okR {
			return true
		}
		off = start + 1
	}
}

// secretHider returns the grounding check's hiding rule for text, a final
// answer whose detected secrets were replaced by redaction markers, given
// every detected secret value: an identifier is left out when it overlaps
// or touches (no character between) a marker "[REDACTED:...]", when it is
// part of a secret, or when it contains a secret (compared
// case-insensitively). Building it costs one pass over text; each call
// costs O(log markers + total length of the secrets).
func secretHider(text string, secrets []string) func(id string, start, end int) bool {
	const open = "[REDACTED:"
	var spans [][2]int // markers, in text order, not overlapping
	for off := 0; ; {
		k := strings.Index(text[off:], open)
		if k < 0 {
			break
		}
		start := off + k
		end := start + len(open)
		if m := strings.IndexByte(text[end:], ']'); m >= 0 {
			end += m + 1
		}
		spans = append(spans, [2]int{start, end})
		off = end
	}
	lower := make([]string, len(secrets))
	for i, s := range secrets {
		lower[i] = strings.ToLower(s)
	}
	return func(id string, start, end int) bool {
		// The first marker ending at or after start-1...
		i, _ := slices.BinarySearchFunc(spans, start-1, func(sp [2]int, x int) int { return cmp.Compare(sp[1], x+1) })
		// ...touches [start, end) when it starts at or before end.
		if i < len(spans) && spans[i][0] <= end {
			return true
		}
		lid := strings.ToLower(id)
		for _, s := range lower {
			if strings.Contains(s, lid) || strings.Contains(lid, s) {
				return true
			}
		}
		return false
	}
}
