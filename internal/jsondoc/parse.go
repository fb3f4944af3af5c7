package jsondoc

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// SyntaxError is a document that does not read: Msg says what is wrong
// (in encoding/json's words where it has them), at byte Offset of the
// input, which is at 1-based Line and Column (columns count bytes), inside
// the value at Pointer (an RFC 6901 JSON pointer, "" for the top level).
type SyntaxError struct {
	Offset  int
	Line    int
	Column  int
	Pointer string
	Msg     string
}

// Error formats the error as "line L:C: msg", followed by " (at
// /pointer)" when the place is inside the top-level value; a pointer
// longer than 120 bytes is shown by its first and last 50 bytes.
func (e *SyntaxError) Error() string {
	s := "line " + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column) + ": " + e.Msg
	if p := e.Pointer; p != "" {
		if len(p) > 120 {
			head, tail := 50, len(p)-50
			for head > 0 && !utf8.RuneStart(p[head]) {
				head--
			}
			for tail < len(p) && !utf8.RuneStart(p[tail]) {
				tail++
			}
			p = p[:head] + "…" + p[tail:]
		}
		s += " (at " + p + ")"
	}
	return s
}

// LineCol converts a byte offset of s into a 1-based line and column
// (columns count bytes); an offset outside s is clamped to it. It is the
// one place toolscore turns offsets into lines.
func LineCol(s string, off int) (line, col int) {
	off = min(max(off, 0), len(s))
	prefix := s[:off]
	line = strings.Count(prefix, "\n") + 1
	return line, off - (strings.LastIndexByte(prefix, '\n') + 1) + 1
}

// Parse reads one JSON document from data, which is copied once (strings
// of the result share that copy). Only white space may follow the value.
// Errors are *SyntaxError.
func Parse(data []byte) (Value, error) { return ParseString(string(data)) }

// ParseString is Parse on a string, which the result shares (no copy).
func ParseString(s string) (Value, error) {
	var p Parser
	p.single = true
	return p.parse(s, false)
}

// ParseSeq reads a sequence of JSON values separated by white space (JSON
// Lines, concatenated or pretty-printed records) from s, which the result
// shares. The result is an array of the values, with pointers "/0", "/1",
// ... to them; its Raw text is all of s. An empty sequence is an empty
// array.
func ParseSeq(s string) (Value, error) {
	var p Parser
	p.single = true
	return p.parse(s, true)
}

// Parser reads many small documents (the argument texts of one trace)
// with shared allocations: their nodes and decoded strings come from
// buffers that grow across calls, so the documents it returns stay alive
// as long as any of them. The zero Parser is ready; it is not safe for
// concurrent use.
type Parser struct {
	nodes []node
	buf   []byte // decoded string text, shared by the documents
	docs  []Doc  // the rest of slab, handed out one by one
	slab  []Doc  // the latest slab of Docs
	seen  map[string]struct{}
	// single marks a Parser used for one document: its Doc is allocated
	// alone rather than from a slab.
	single bool

	// per document
	s     string
	pos   int
	depth int
	start int // index in nodes of the current document's first node
	bufAt int // offset in buf of the current document's first string
}

// Parse reads one document from s as ParseString does, sharing the
// Parser's buffers.
func (p *Parser) Parse(s string) (Value, error) { return p.parse(s, false) }

// ParseSeq reads a sequence of JSON values from s as the function
// ParseSeq does, sharing the Parser's buffers.
func (p *Parser) ParseSeq(s string) (Value, error) { return p.parse(s, true) }

// Reset makes the Parser read its next documents into the memory of
// those it has read: every Doc, Value and decoded string it returned
// before must no longer be used. A Parser that reads documents one after
// another (the traces of a batch) and resets between them allocates only
// while its buffers grow to the largest document.
func (p *Parser) Reset() {
	p.nodes = p.nodes[:0]
	p.buf = p.buf[:0]
	p.docs = p.slab
}

func (p *Parser) parse(s string, seq bool) (Value, error) {
	if uint64(len(s)) >= 1<<32-1 {
		return Value{}, &SyntaxError{Line: 1, Column: 1, Msg: "document larger than 4 GiB"}
	}
	if len(p.nodes) == cap(p.nodes) && len(p.nodes) > 0 {
		// Start a fresh buffer rather than copying the earlier
		// documents' nodes, which stay where they are.
		p.nodes = make([]node, 0, max(2*cap(p.nodes), len(s)/8+8))
	} else if p.nodes == nil {
		p.nodes = make([]node, 0, len(s)/8+8)
	}
	p.s, p.pos, p.depth = s, 0, 0
	p.start, p.bufAt = len(p.nodes), len(p.buf)
	var err error
	if seq {
		err = p.sequence()
	} else {
		err = p.document()
	}
	if err != nil {
		p.nodes = p.nodes[:p.start]
		p.buf = p.buf[:p.bufAt]
		return Value{}, err
	}
	d := p.newDoc()
	d.src = s
	d.esc = bytesString(p.buf[p.bufAt:len(p.buf):len(p.buf)])
	// Offsets into buf are relative to this document's part of it.
	if p.bufAt > 0 {
		for j := p.start; j < len(p.nodes); j++ {
			if nd := &p.nodes[j]; nd.flag&flagEsc != 0 {
				nd.off -= uint32(p.bufAt)
			}
		}
	}
	d.nodes = p.nodes[p.start:len(p.nodes):len(p.nodes)]
	if cap(p.buf)-len(p.buf) < 64 {
		p.buf = nil // the rest of the buffer belongs to d.esc now
	} else {
		p.buf = p.buf[len(p.buf):]
	}
	p.bufAt = 0
	return Value{d: d}, nil
}

// newDoc returns a Doc from the slab.
func (p *Parser) newDoc() *Doc {
	if p.single {
		return new(Doc)
	}
	if len(p.docs) == 0 {
		p.slab = make([]Doc, max(8, 2*len(p.slab)))
		p.docs = p.slab
	}
	d := &p.docs[0]
	p.docs = p.docs[1:]
	return d
}

// document reads one value followed only by white space.
func (p *Parser) document() error {
	p.skipSpace()
	if p.pos >= len(p.s) {
		return p.fail(p.pos, "empty document")
	}
	if err := p.value(); err != nil {
		return err
	}
	p.skipSpace()
	if p.pos < len(p.s) {
		return p.fail(p.pos, "invalid character %s after top-level value", p.quoteAt(p.pos))
	}
	return nil
}

// sequence reads values until the end, under a synthetic root array.
func (p *Parser) sequence() error {
	root := len(p.nodes)
	p.nodes = append(p.nodes, node{kind: Array, flag: flagSeq})
	n := uint32(0)
	for {
		p.skipSpace()
		if p.pos >= len(p.s) {
			break
		}
		if err := p.value(); err != nil {
			return withIndex(err, n)
		}
		n++
	}
	nd := &p.nodes[root]
	nd.n, nd.end, nd.rend = n, uint32(len(p.nodes)-p.start), uint32(len(p.s))
	return nil
}

// space marks the bytes JSON counts as white space.
var space = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

func (p *Parser) skipSpace() {
	s, i := p.s, p.pos
	for i < len(s) && space[s[i]] {
		i++
	}
	p.pos = i
}

// value reads the value at p.pos, which is not white space and not the
// end of the input.
func (p *Parser) value() error {
	switch c := p.s[p.pos]; c {
	case '{':
		return p.object()
	case '[':
		return p.array()
	case '"':
		return p.str()
	case 't':
		return p.literal("true", Bool, flagTrue)
	case 'f':
		return p.literal("false", Bool, 0)
	case 'n':
		return p.literal("null", Null, 0)
	default:
		if c == '-' || ('0' <= c && c <= '9') {
			return p.number()
		}
		return p.fail(p.pos, "invalid character %s looking for beginning of value", p.quoteAt(p.pos))
	}
}

func (p *Parser) literal(lit string, k Kind, flag uint8) error {
	s, at := p.s, p.pos
	if len(s)-at >= len(lit) && s[at:at+len(lit)] == lit {
		p.nodes = append(p.nodes, node{kind: k, flag: flag, off: uint32(at), n: uint32(len(lit))})
		p.pos += len(lit)
		return nil
	}
	for i := 1; i < len(lit); i++ {
		q := at + i
		if q >= len(s) {
			return p.fail(q, "unexpected end of JSON input")
		}
		if s[q] != lit[i] {
			return p.fail(q, "invalid character %s in literal %s (expecting %s)", p.quoteAt(q), lit, quoteByte(lit[i]))
		}
	}
	return nil // unreachable: the whole literal matched
}

func (p *Parser) number() error {
	s, start := p.s, p.pos
	i := start
	if s[i] == '-' {
		i++
	}
	need := func(i int, what string) error {
		if i >= len(s) {
			return p.fail(i, "unexpected end of JSON input")
		}
		return p.fail(i, "invalid character %s %s", p.quoteAt(i), what)
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i++
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	default:
		return need(i, "in numeric literal")
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return need(i, "after decimal point in numeric literal")
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return need(i, "in exponent of numeric literal")
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	if i-start > MaxNumberLen {
		return p.fail(start, "numeric literal longer than %d bytes", MaxNumberLen)
	}
	p.nodes = append(p.nodes, node{kind: Number, off: uint32(start), n: uint32(i - start)})
	p.pos = i
	return nil
}

func (p *Parser) object() error {
	open := p.pos
	p.pos++
	if p.depth++; p.depth > MaxDepth {
		return p.fail(open, "exceeded max depth of %d nested arrays and objects", MaxDepth)
	}
	me := len(p.nodes)
	p.nodes = append(p.nodes, node{kind: Object, off: uint32(open)})
	p.skipSpace()
	if p.pos < len(p.s) && p.s[p.pos] == '}' {
		p.pos++
		p.depth--
		nd := &p.nodes[me]
		nd.end, nd.rend = uint32(len(p.nodes)-p.start), uint32(p.pos)
		return nil
	}
	n := uint32(0)
	var bits uint64 // see mayRepeat
	maybeDup := false
	for {
		p.skipSpace()
		if p.pos >= len(p.s) {
			return p.fail(p.pos, "unexpected end of JSON input")
		}
		if p.s[p.pos] != '"' {
			return p.fail(p.pos, "invalid character %s looking for beginning of object key string", p.quoteAt(p.pos))
		}
		k := uint32(len(p.nodes))
		if err := p.str(); err != nil {
			return err
		}
		p.nodes[k].flag |= flagKey
		if !maybeDup {
			bit := p.keyBit(k)
			maybeDup = bits&bit != 0
			bits |= bit
		}
		p.skipSpace()
		if p.pos >= len(p.s) {
			return p.fail(p.pos, "unexpected end of JSON input")
		}
		if p.s[p.pos] != ':' {
			return p.fail(p.pos, "invalid character %s after object key", p.quoteAt(p.pos))
		}
		p.pos++
		p.skipSpace()
		if p.pos >= len(p.s) {
			return p.fail(p.pos, "unexpected end of JSON input")
		}
		if err := p.value(); err != nil {
			return withKey(err, p.keyText(k))
		}
		n++
		p.skipSpace()
		if p.pos >= len(p.s) {
			return p.fail(p.pos, "unexpected end of JSON input")
		}
		c := p.s[p.pos]
		p.pos++
		if c == ',' {
			continue
		}
		if c == '}' {
			break
		}
		return p.fail(p.pos-1, "invalid character %s after object key:value pair", p.quoteAt(p.pos-1))
	}
	p.depth--
	nd := &p.nodes[me]
	nd.n, nd.end, nd.rend = n, uint32(len(p.nodes)-p.start), uint32(p.pos)
	if maybeDup && p.repeatedKey(uint32(me)) {
		nd.flag |= flagDup
	}
	return nil
}

// keyBit is one bit of a 64-bit set, chosen by the length and the first
// and last bytes of key node k: keys whose bits all differ are distinct,
// so an object's keys are compared only when two bits collide.
func (p *Parser) keyBit(k uint32) uint64 {
	nd := &p.nodes[k]
	h := uint64(nd.n) * 31
	if nd.n > 0 {
		t := p.keyText(k)
		h += uint64(t[0])*7 + uint64(t[len(t)-1])
	}
	return 1 << (h & 63)
}

// repeatedKey reports whether two keys of the object node obj (just read)
// have the same text.
func (p *Parser) repeatedKey(obj uint32) bool {
	nd := &p.nodes[obj]
	keys := make([]uint32, 0, nd.n)
	j := obj + 1
	for range nd.n {
		keys = append(keys, j)
		j++ // the value
		if v := &p.nodes[j]; v.kind >= Array {
			j = v.end + uint32(p.start)
		} else {
			j++
		}
	}
	if len(keys) <= 8 {
		for a := 1; a < len(keys); a++ {
			ka := p.keyText(keys[a])
			for b := 0; b < a; b++ {
				if p.keyText(keys[b]) == ka {
					return true
				}
			}
		}
		return false
	}
	if p.seen == nil {
		p.seen = make(map[string]struct{}, len(keys))
	} else {
		clear(p.seen)
	}
	for _, k := range keys {
		t := p.keyText(k)
		if _, dup := p.seen[t]; dup {
			return true
		}
		p.seen[t] = struct{}{}
	}
	return false
}

// keyText returns the text of the string node k of the document being
// read (only to compare it: an escaped key's text lives in buf).
func (p *Parser) keyText(k uint32) string {
	nd := &p.nodes[k]
	if nd.flag&flagEsc != 0 {
		return bytesString(p.buf[nd.off : nd.off+nd.n])
	}
	return p.s[nd.off : nd.off+nd.n]
}

func (p *Parser) array() error {
	open := p.pos
	p.pos++
	if p.depth++; p.depth > MaxDepth {
		return p.fail(open, "exceeded max depth of %d nested arrays and objects", MaxDepth)
	}
	me := len(p.nodes)
	p.nodes = append(p.nodes, node{kind: Array, off: uint32(open)})
	p.skipSpace()
	if p.pos < len(p.s) && p.s[p.pos] == ']' {
		p.pos++
		p.depth--
		nd := &p.nodes[me]
		nd.end, nd.rend = uint32(len(p.nodes)-p.start), uint32(p.pos)
		return nil
	}
	n := uint32(0)
	for {
		p.skipSpace()
		if p.pos >= len(p.s) {
			return p.fail(p.pos, "unexpected end of JSON input")
		}
		if err := p.value(); err != nil {
			return withIndex(err, n)
		}
		n++
		p.skipSpace()
		if p.pos >= len(p.s) {
			return p.fail(p.pos, "unexpected end of JSON input")
		}
		c := p.s[p.pos]
		p.pos++
		if c == ',' {
			continue
		}
		if c == ']' {
			break
		}
		return p.fail(p.pos-1, "invalid character %s after array element", p.quoteAt(p.pos-1))
	}
	p.depth--
	nd := &p.nodes[me]
	nd.n, nd.end, nd.rend = n, uint32(len(p.nodes)-p.start), uint32(p.pos)
	return nil
}

// plainByte marks the string bytes that need no care: printable ASCII
// other than '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads a string literal starting at its opening quote. A literal
// with no escapes and valid UTF-8 is a slice of the input; any other is
// decoded into p.buf.
func (p *Parser) str() error {
	s := p.s
	quote := p.pos
	start := quote + 1
	i := start
	ascii := true
	// Eight bytes at a time while none needs care: no '"', '\\',
	// control character or byte >= 0x80. The lowest byte each test
	// flags is one that needs care (a test may flag bytes above it
	// wrongly), so the first such byte is found without going back.
	for i+8 <= len(s) {
		x := load64(s, i)
		if m := (x-0x2020202020202020)&^x&0x8080808080808080 | hasZero(x^0x2222222222222222) | hasZero(x^0x5c5c5c5c5c5c5c5c) | x&0x8080808080808080; m != 0 {
			i += bits.TrailingZeros64(m) >> 3
			break
		}
		i += 8
	}
	for i < len(s) {
		c := s[i]
		if plainByte[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			if !ascii && !utf8.ValidString(s[start:i]) {
				return p.strSlow(quote, start, start)
			}
			p.nodes = append(p.nodes, node{kind: String, off: uint32(start), n: uint32(i - start), end: uint32(quote), rend: uint32(i + 1)})
			p.pos = i + 1
			return nil
		case c == '\\':
			if !ascii {
				// Decode from the start: the bytes read so far may
				// hold invalid UTF-8.
				return p.strSlow(quote, start, start)
			}
			return p.strSlow(quote, start, i)
		case c < 0x20:
			return p.fail(i, "invalid character %s in string literal", p.quoteAt(i))
		default:
			ascii = false
			i++
		}
	}
	return p.fail(len(s), "unexpected end of JSON input")
}

// strSlow finishes a string literal that has escapes or invalid UTF-8,
// decoding it into p.buf; i is the first byte that needs care.
func (p *Parser) strSlow(quote, start, i int) error {
	s := p.s
	b := p.buf
	at := len(b)
	b = append(b, s[start:i]...)
	for i < len(s) {
		c := s[i]
		if plainByte[c] {
			j := i + 1
			for j < len(s) && plainByte[s[j]] {
				j++
			}
			b = append(b, s[i:j]...)
			i = j
			continue
		}
		switch {
		case c == '"':
			p.buf = b
			p.nodes = append(p.nodes, node{kind: String, flag: flagEsc, off: uint32(at), n: uint32(len(b) - at), end: uint32(quote), rend: uint32(i + 1)})
			p.pos = i + 1
			return nil
		case c < 0x20:
			p.buf = b
			return p.fail(i, "invalid character %s in string literal", p.quoteAt(i))
		case c == '\\':
			i++
			if i >= len(s) {
				p.buf = b
				return p.fail(i, "unexpected end of JSON input")
			}
			switch e := s[i]; e {
			case '"', '\\', '/':
				b = append(b, e)
				i++
			case 'b':
				b = append(b, '\b')
				i++
			case 'f':
				b = append(b, '\f')
				i++
			case 'n':
				b = append(b, '\n')
				i++
			case 'r':
				b = append(b, '\r')
				i++
			case 't':
				b = append(b, '\t')
				i++
			case 'u':
				r, bad := hex4(s, i+1)
				if bad >= 0 {
					p.buf = b
					if bad >= len(s) {
						return p.fail(bad, "unexpected end of JSON input")
					}
					return p.fail(bad, "invalid character %s in \\u hexadecimal character escape", p.quoteAt(bad))
				}
				i += 5
				if utf16.IsSurrogate(r) {
					// A valid pair is read whole; anything else is
					// U+FFFD and reading goes on, as in encoding/json.
					if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if r2, bad := hex4(s, i+2); bad < 0 {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								b = utf8.AppendRune(b, dec)
								i += 6
								break
							}
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
			default:
				p.buf = b
				return p.fail(i, "invalid character %s in string escape code", p.quoteAt(i))
			}
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
		}
	}
	p.buf = b
	return p.fail(len(s), "unexpected end of JSON input")
}

// hex4 reads the four hex digits of a \u escape at s[i:]; bad is the
// offset of the first byte that is not one (len(s) at the end), or -1.
func hex4(s string, i int) (r rune, bad int) {
	for j := i; j < i+4; j++ {
		if j >= len(s) {
			return 0, len(s)
		}
		c := s[j]
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, j
		}
		r = r<<4 | rune(v)
	}
	return r, -1
}

// quoteAt quotes the character at s[i] for a message, as encoding/json
// does but naming the whole UTF-8 character rather than its first byte:
// 'x', '\n', 'é'.
func (p *Parser) quoteAt(i int) string {
	c := p.s[i]
	if c < utf8.RuneSelf {
		return quoteByte(c)
	}
	r, _ := utf8.DecodeRuneInString(p.s[i:])
	return strconv.QuoteRune(r)
}

// quoteByte quotes an ASCII byte as encoding/json does in its messages.
func quoteByte(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	q := strconv.Quote(string(rune(c)))
	return "'" + q[1:len(q)-1] + "'"
}

// fail builds the *SyntaxError at offset off; the containers it is in
// add their tokens to its pointer as the error returns through them
// (withKey, withIndex), so reading pays nothing for pointers.
func (p *Parser) fail(off int, msg string, args ...any) error {
	if len(args) > 0 {
		msg = fmt.Sprintf(msg, args...)
	}
	line, col := LineCol(p.s, off)
	return &SyntaxError{Offset: off, Line: line, Column: col, Msg: msg}
}

// withKey puts the member key in front of err's pointer.
func withKey(err error, key string) error {
	if se, ok := err.(*SyntaxError); ok {
		se.Pointer = string(appendPointerToken([]byte{'/'}, key)) + se.Pointer
	}
	return err
}

// withIndex puts the element index in front of err's pointer.
func withIndex(err error, i uint32) error {
	if se, ok := err.(*SyntaxError); ok {
		se.Pointer = "/" + strconv.FormatUint(uint64(i), 10) + se.Pointer
	}
	return err
}

// appendPointerToken appends a JSON pointer token: ~ as ~0 and / as ~1
// (RFC 6901 section 3).
func appendPointerToken(b []byte, tok string) []byte {
	for i := 0; i < len(tok); i++ {
		switch c := tok[i]; c {
		case '~':
			b = append(b, '~', '0')
		case '/':
			b = append(b, '~', '1')
		default:
			b = append(b, c)
		}
	}
	return b
}

// load64 reads the eight bytes of s at i as a little-endian word; i+8 <=
// len(s).
func load64(s string, i int) uint64 {
	b := unsafe.Slice(unsafe.StringData(s), len(s))[i : i+8 : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// hasZero reports (as a nonzero word) whether a byte of x is zero.
func hasZero(x uint64) uint64 { return (x - 0x0101010101010101) &^ x & 0x8080808080808080 }
