package jsondoc

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
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
		s += " (at " + ShortPointer(p) + ")"
	}
	return s
}

// ShortPointer returns the JSON pointer p as messages show it: p itself
// when at most 120 bytes long, else its first and last 50 bytes (moved to
// whole UTF-8 characters) joined by "…".
func ShortPointer(p string) string {
	if len(p) <= 120 {
		return p
	}
	head, tail := 50, len(p)-50
	for head > 0 && !utf8.RuneStart(p[head]) {
		head--
	}
	for tail < len(p) && !utf8.RuneStart(p[tail]) {
		tail++
	}
	return p[:head] + "…" + p[tail:]
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

// LineColBreaks is LineCol for a text whose lines may also end in a bare
// CR, as Server-Sent Events' lines may (CR, LF and CRLF each end one
// line); it is LineCol when s holds no CR before off.
func LineColBreaks(s string, off int) (line, col int) {
	off = min(max(off, 0), len(s))
	if strings.IndexByte(s[:off], '\r') < 0 {
		return LineCol(s, off)
	}
	line, start := 1, 0
	for i := 0; i < off; i++ {
		switch s[i] {
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				continue
			}
			line, start = line+1, i+1
		case '\n':
			line, start = line+1, i+1
		}
	}
	return line, off - start + 1
}

// Parse reads one JSON document from data, which is copied once (strings
// of the result share that copy). Only white space may follow the value.
// Errors are *SyntaxError.
func Parse(data []byte) (Value, error) {
	if len(data) <= smallMin || len(data) > len(smallCopy{}.text) {
		return ParseString(string(data))
	}
	// A small document's text, Doc and nodes share one allocation.
	sc := new(smallCopy)
	n := copy(sc.text[:], data)
	p := Parser{single: true, doc: &sc.d, nodes: sc.nodes[:0]}
	return p.parse(unsafe.String(&sc.text[0], n), false)
}

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
	// slashU is set by strSlow when the document being read holds a
	// backslash followed by 'u' (Doc.HoldsSlashU).
	slashU bool
	// single marks a Parser used for one document: its Doc is allocated
	// alone rather than from a slab, with its nodes when it is small
	// (doc).
	single bool
	doc    *Doc

	// per document
	s     string
	seq   bool   // s is a sequence of values
	seqN  uint32 // values of the sequence read so far
	cur   uint32 // the innermost open container (read)
	depth int    // open containers
	start int    // index in nodes of the current document's first node
	bufAt int    // offset in buf of the current document's first string
	// ws and tok are the offsets of the last white space between two
	// tokens read and of the last token appendAt does not write as read
	// (a string with escapes or bytes >= 0x80, a key not greater than
	// the one before it), -1 for none: a container opened after them
	// holds neither (see flagTokens). pw is the keyRank of the previous
	// key of the object read (0 before its first) and pk, when that key
	// is eight bytes or longer, its node.
	ws, tok int
	pk      uint32
	pw      uint64
	// dupAt is the index in nodes of the last container read that got
	// flagDupIn, 0 for none (the first node has none after it).
	dupAt uint32
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
		est := len(s)/8 + 8
		if p.single && !seq && strings.IndexByte(s[:min(len(s), 64)], '\n') < 0 {
			// A document without line breaks at its start is written
			// compactly, with more values than the length tells.
			est = nodeBound(s)
		}
		if p.single && len(s) > smallMin && est <= len(smallDoc{}.nodes) {
			// One allocation for the Doc and its nodes.
			sd := new(smallDoc)
			p.nodes, p.doc = sd.nodes[:0], &sd.d
		} else {
			p.nodes = make([]node, 0, est)
		}
	}
	p.s, p.seq, p.seqN, p.depth, p.slashU = s, seq, 0, 0, false
	p.start, p.bufAt = len(p.nodes), len(p.buf)
	if err := p.read(); err != nil {
		p.nodes = p.nodes[:p.start]
		p.buf = p.buf[:p.bufAt]
		return Value{}, err
	}
	d := p.newDoc()
	d.src, d.slashU = s, p.slashU
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

// nodeBound returns at least the number of nodes of the JSON document s,
// exactly that when no string of s holds a comma, colon or opening
// bracket: a node is the top-level value, an object's key (a colon
// each), or an element or a member's value (one after each comma, and
// the first of each non-empty array or object). It reads s four times
// (strings.Count, a few instructions per 32 bytes), which costs less
// than the nodes a compact document's length underestimates (slices.Grow
// copies them into twice the room).
func nodeBound(s string) int {
	return strings.Count(s, ",") + strings.Count(s, ":") + strings.Count(s, "{") + strings.Count(s, "[") + 1
}

// newDoc returns a Doc from the slab.
func (p *Parser) newDoc() *Doc {
	if p.single {
		if p.doc != nil {
			return p.doc
		}
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

// smallDoc is a small document's Doc with room for its nodes (as many
// as parse reserves for a text of up to 320 bytes), allocated at once;
// smallCopy adds room for the text Parse copies. Texts of at most
// smallMin bytes, which would leave most of that room unused, have their
// own allocations.
type smallDoc struct {
	d     Doc
	nodes [48]node
}

type smallCopy struct {
	smallDoc
	text [320]byte
}

const smallMin = 128

// noParent is the parent link of a top-level container.
const noParent = ^uint32(0)

// topN is read's count of the members or elements read when no
// container is open; no container's count (twice its members or
// elements, plus 1 for an object, each member at least four bytes long)
// reaches it.
const topN = ^uint32(0)

// read reads p.s into p.nodes: one document, or with p.seq a sequence of
// values.
//
// It is one loop over the text, with no calls on the common paths (Go
// keeps no register across a call) and no recursion. While a container
// is open its node keeps, instead of what it gets when it closes, the
// link to the enclosing container (end) and, for the containers that
// enclose the one being read, the count of members or elements read so
// far (n) and an object's key bits (rend, see keyBit). The current
// container's count, kind and key bits are locals. A *SyntaxError's
// pointer is built from the links only when reading fails (located).
//
// While it reads, it also records for each array and object whether
// appendAt would write its text as it is (flagTokens, flagCompact), which
// also tells that an object's keys increase strictly and so spares the
// search for a repeated key: the offsets of the last white space between
// tokens and of the last string that is not plain ASCII or key not
// greater than the one before (p.ws, p.tok) are before the container's
// opening bracket.
func (p *Parser) read() error {
	b := unsafe.Slice(unsafe.StringData(p.s), len(p.s))
	// nodes[:k] are the nodes read, the rest of it room for more
	// (newNode).
	k := len(p.nodes)
	nodes := p.nodes[:cap(p.nodes)]
	// p.cur is the innermost open container, kept in memory: it is
	// read when a container opens or closes, and whether one is open
	// is told by n. n is twice the count of members or elements of
	// cur read so far, plus 1 when cur is an object, or topN when no
	// container is open; kb is an object's key bits. p.ws, p.tok, p.pk
	// and p.pw are also kept in memory (few steps use them).
	p.cur = noParent
	n, kb := uint32(topN), uint32(0)
	i := 0
	p.ws, p.tok, p.pw, p.dupAt = -1, -1, 0, 0
	var (
		c     byte
		j     int
		msg   string
		inner bool // the failure is inside the value cur is reading
		nd    *node
	)
	if p.seq {
		nodes, nd = newNode(nodes, k)
		*nd = node{kind: Array, flag: flagSeq}
		k++
	}

value: // a value is expected at i, after white space
	if uint(i) < uint(len(b)) && b[i] <= ' ' {
		p.ws = i
		if i = skipNL(b, i); b[i] <= ' ' {
			i = skipWS(b, i)
		}
	}
	if uint(i) >= uint(len(b)) {
		if n != topN {
			msg = "unexpected end of JSON input"
			goto fail
		}
		if p.seq {
			goto done
		}
		msg = "empty document"
		goto fail
	}
	switch c = b[i]; c {
	case '"':
		j = scanPlain(b, i+1)
		if j < len(b) && b[j] == '"' {
			nodes, nd = newNode(nodes, k)
			k++
			nd.kind, nd.flag, nd.n, nd.off, nd.end, nd.rend = String, 0, uint32(j-i-1), uint32(i+1), uint32(i), uint32(j+1)
			i = j + 1
			goto after
		}
		{
			snd, end, err := p.strRest(i, j)
			if err != nil {
				return p.located(err, nodes[:k], p.cur, n, true)
			}
			nodes, nd = newNode(nodes, k)
			k++
			*nd = snd
			if snd.flag != 0 { // flagEsc or flagWide
				p.tok = i
			}
			i = end
		}
		goto after
	case '{', '[':
		if p.depth++; p.depth > MaxDepth {
			msg, inner = fmt.Sprintf("exceeded max depth of %d nested arrays and objects", MaxDepth), true
			goto fail
		}
		if n != topN {
			up := &nodes[p.cur]
			up.n, up.rend = n, kb
		}
		nodes, nd = newNode(nodes, k)
		nd.kind, nd.flag, nd.n, nd.off, nd.end, nd.rend = Array+Kind(c>>5&1), 0, 0, uint32(i), p.cur, 0 // '[' 0x5b, '{' 0x7b
		p.cur, n, kb, p.pw = uint32(k), uint32(c>>5&1), 0, 0
		k++
		i++
		if n != 0 {
			goto key
		}
		goto value
	case ']':
		if n == 0 { // an empty array
			i++
			goto closed
		}
	case 't':
		if len(b)-i >= 4 && string(b[i:i+4]) == "true" {
			nodes, nd = newNode(nodes, k)
			k++
			nd.kind, nd.flag, nd.n, nd.off, nd.end, nd.rend = Bool, flagTrue, 4, uint32(i), 0, 0
			i += 4
			goto after
		}
		i, msg, inner = p.badLiteral(i, "true")
		goto fail
	case 'f':
		if len(b)-i >= 5 && string(b[i:i+5]) == "false" {
			nodes, nd = newNode(nodes, k)
			k++
			nd.kind, nd.flag, nd.n, nd.off, nd.end, nd.rend = Bool, 0, 5, uint32(i), 0, 0
			i += 5
			goto after
		}
		i, msg, inner = p.badLiteral(i, "false")
		goto fail
	case 'n':
		if len(b)-i >= 4 && string(b[i:i+4]) == "null" {
			nodes, nd = newNode(nodes, k)
			k++
			nd.kind, nd.flag, nd.n, nd.off, nd.end, nd.rend = Null, 0, 4, uint32(i), 0, 0
			i += 4
			goto after
		}
		i, msg, inner = p.badLiteral(i, "null")
		goto fail
	default:
		if c == '-' || c-'0' < 10 {
			// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
			j = i
			if c == '-' {
				j++
			}
			if j < len(b) && b[j] == '0' {
				j++
			} else if j < len(b) && b[j]-'1' < 9 {
				j++
				for j < len(b) && b[j]-'0' < 10 {
					j++
				}
			} else {
				goto badNumber
			}
			if j < len(b) && b[j] == '.' {
				j++
				if j >= len(b) || b[j]-'0' >= 10 {
					goto badNumber
				}
				for j < len(b) && b[j]-'0' < 10 {
					j++
				}
			}
			if j < len(b) && b[j]|0x20 == 'e' {
				j++
				if j < len(b) && (b[j] == '+' || b[j] == '-') {
					j++
				}
				if j >= len(b) || b[j]-'0' >= 10 {
					goto badNumber
				}
				for j < len(b) && b[j]-'0' < 10 {
					j++
				}
			}
			if j-i > MaxNumberLen {
				msg, inner = fmt.Sprintf("numeric literal longer than %d bytes", MaxNumberLen), true
				goto fail
			}
			nodes, nd = newNode(nodes, k)
			k++
			nd.kind, nd.flag, nd.n, nd.off, nd.end, nd.rend = Number, 0, uint32(j-i), uint32(i), 0, 0
			i = j
			goto after
		}
	}
	msg, inner = "invalid character "+p.quoteAt(i)+" looking for beginning of value", true
	goto fail

after: // a value ends at i
	if n == topN {
		if p.seq {
			p.seqN++
			goto value
		}
		i = skipWS(b, i)
		if i < len(b) {
			msg = "invalid character " + p.quoteAt(i) + " after top-level value"
			goto fail
		}
		goto done
	}
	n += 2
	if i+8 <= len(b) {
		// The white space of pretty-printed JSON: a comma, a line
		// break and the indentation of the next member or element
		// (up to six spaces), or a line break, the indentation (up to
		// seven) and the closing bracket.
		x := le64(b, i)
		if uint16(x) == ','|'\n'<<8 {
			p.ws = i
			i += 2 + bits.TrailingZeros64(x>>16^0x2020202020202020)>>3
			if n&1 != 0 {
				goto key
			}
			goto value
		}
		if uint8(x) == '\n' {
			p.ws = i
			j = i + 1 + bits.TrailingZeros64(x>>8^0x2020202020202020)>>3
			if j < len(b) && b[j] == ']'+byte(n&1)<<5 {
				i = j + 1
				goto closed
			}
		}
	}
	if uint(i) < uint(len(b)) && b[i] <= ' ' {
		p.ws = i
		if i = skipNL(b, i); b[i] <= ' ' {
			i = skipWS(b, i)
		}
	}
	if uint(i) >= uint(len(b)) {
		msg = "unexpected end of JSON input"
		goto fail
	}
	c = b[i]
	i++
	if c == ',' {
		if n&1 != 0 {
			goto key
		}
		goto value
	}
	if c == ']'+byte(n&1)<<5 { // ']' 0x5d, '}' 0x7d
		goto closed
	}
	i--
	if n&1 != 0 {
		msg = "invalid character " + p.quoteAt(i) + " after object key:value pair"
	} else {
		msg = "invalid character " + p.quoteAt(i) + " after array element"
	}
	goto fail

closed: // cur's closing bracket ends at i
	{
		cur := p.cur
		nd = &nodes[cur]
		up := nd.end
		nd.n, nd.end, nd.rend = n>>1, uint32(k-p.start), uint32(i)
		flag := uint8(0)
		if open := int(nd.off); p.tok < open {
			flag = flagTokens
			if p.ws < open {
				flag = flagTokens | flagCompact
			}
		}
		// An object of m members whose keys are not known to increase
		// strictly and have fewer than m bits may repeat a key. A
		// container with flagTokens holds no repeated key (its keys
		// all increase); one without it holds one when an object of
		// its subtree, which follows it, was last to have flagDupIn
		// (p.dupAt).
		if flag == 0 {
			if n&1 != 0 && bits.OnesCount32(kb) < int(n>>1) && p.repeatedKey(nodes[:k], cur) {
				flag, p.dupAt = flagDup|flagDupIn, cur
			} else if p.dupAt > cur {
				flag, p.dupAt = flagDupIn, cur
			}
		}
		nd.flag = flag
		p.depth--
		p.cur = up
		n = topN
		if up != noParent {
			un := &nodes[up]
			n, kb = un.n, un.rend
			if n&1 != 0 {
				// The key of the member just read (cur its value) is
				// the one the next key follows (an escaped one is a
				// token not as read already).
				p.pk = cur - 1
				if key := &nodes[cur-1]; key.flag&flagEsc == 0 {
					p.pw = keyRank(b, int(key.off), int(key.n))
				}
			}
		}
	}
	goto after

key: // an object's key is expected at i, after white space
	if uint(i) < uint(len(b)) && b[i] <= ' ' {
		p.ws = i
		if i = skipNL(b, i); b[i] <= ' ' {
			i = skipWS(b, i)
		}
	}
	if uint(i) >= uint(len(b)) {
		msg = "unexpected end of JSON input"
		goto fail
	}
	if b[i] != '"' {
		if b[i] == '}' && n == 1 { // an empty object
			i++
			goto closed
		}
		msg = "invalid character " + p.quoteAt(i) + " looking for beginning of object key string"
		goto fail
	}
	if i+12 <= len(b) {
		// A key of up to seven plain bytes, from one word: its text
		// and its bit.
		x := le64(b, i+1)
		if m := careMask(x); m != 0 {
			t := uint(bits.TrailingZeros64(m)) // 8*len + 7
			l := t >> 3
			w := x & (1<<(t&56) - 1)
			bit := uint32(1) << ((w + uint64(l)) * keyMul >> 59) // keyBit
			// The first byte that needs care is the closing quote.
			if byte(x>>(t&56)) == '"' {
				kb |= bit
				// keyRank; a key of up to seven bytes with the rank
				// of the one before is that key.
				if r := bits.ReverseBytes64(w) + 1; r > p.pw {
					p.pw = r
				} else {
					p.tok = i
				}
				nodes, nd = newNode(nodes, k)
				k++
				nd.kind, nd.flag, nd.n, nd.off, nd.end, nd.rend = String, flagKey, uint32(l), uint32(i+1), uint32(i), uint32(i+int(l)+2)
				i += int(l) + 2
				// The two bytes after the quote, from x when it
				// holds them (a key of up to five bytes).
				sep := uint16(x >> ((t&56 + 8) & 63))
				if l > 5 {
					sep = binary.LittleEndian.Uint16(b[i : i+2])
				}
				if sep == ':'|' '<<8 {
					p.ws = i
					i += 2
					goto value
				}
				goto colon
			}
		}
	}
	j = scanPlain(b, i+1)
	if j < len(b) && b[j] == '"' {
		if l := j - i - 1; l >= 8 {
			// A key of eight plain bytes or more: its bit and its
			// rank from its first word (keyBit, keyRank).
			w := le64(b, i+1)
			kb |= 1 << ((w + uint64(l)) * keyMul >> 59)
			if r := bits.ReverseBytes64(w) + 1; r > p.pw {
				p.pw = r
			} else if r < p.pw || !p.keyGreater(nodes, i+1, l) {
				p.tok = i
			}
		} else {
			kb |= keyBit(b, i+1, l)
			var ok bool
			if p.pw, ok = p.keyAfter(nodes, i+1, l); !ok {
				p.tok = i
			}
		}
		p.pk = uint32(k)
		nodes, nd = newNode(nodes, k)
		k++
		nd.kind, nd.flag, nd.n, nd.off, nd.end, nd.rend = String, flagKey, uint32(j-i-1), uint32(i+1), uint32(i), uint32(j+1)
		i = j + 1
	} else {
		snd, end, err := p.strRest(i, j)
		if err != nil {
			return p.located(err, nodes[:k], p.cur, n, false)
		}
		if snd.flag != 0 { // flagEsc or flagWide
			p.tok = i
		} else {
			var ok bool
			if p.pw, ok = p.keyAfter(nodes, int(snd.off), int(snd.n)); !ok {
				p.tok = i
			}
		}
		p.pk = uint32(k)
		nodes, nd = newNode(nodes, k)
		k++
		*nd = snd
		nd.flag |= flagKey
		if nd.flag&flagEsc != 0 {
			kb |= keyBit(p.buf, int(nd.off), int(nd.n))
		} else {
			kb |= keyBit(b, int(nd.off), int(nd.n))
		}
		i = end
	}
	if i+2 <= len(b) && binary.LittleEndian.Uint16(b[i:i+2]) == ':'|' '<<8 { // ": ", the usual separator
		p.ws = i
		i += 2
		goto value
	}
colon: // a key ends at i
	if uint(i) < uint(len(b)) && b[i] <= ' ' {
		p.ws = i
		if i = skipNL(b, i); b[i] <= ' ' {
			i = skipWS(b, i)
		}
	}
	if uint(i) >= uint(len(b)) {
		msg = "unexpected end of JSON input"
		goto fail
	}
	if b[i] != ':' {
		msg = "invalid character " + p.quoteAt(i) + " after object key"
		goto fail
	}
	i++
	goto value

badNumber:
	j, msg = scanNumber(p.s, i)
	i, msg, inner = j, p.unexpected(j, msg), true
	goto fail

done:
	if p.seq {
		nd = &nodes[p.start]
		nd.n, nd.end, nd.rend = p.seqN, uint32(k-p.start), uint32(len(b))
	}
	p.nodes = nodes[:k]
	return nil

fail:
	return p.located(p.fail(i, msg), nodes[:k], p.cur, n, inner)
}

// newNode returns nodes, grown when node k is past its end, and node k,
// whose every field the caller sets (a reused buffer holds old nodes).
func newNode(nodes []node, k int) ([]node, *node) {
	for k >= len(nodes) {
		nodes = growNodes(nodes)
	}
	return nodes, &nodes[k]
}

// growNodes returns nodes with more room, as long as its capacity.
func growNodes(nodes []node) []node {
	nodes = slices.Grow(nodes, 1)
	return nodes[:cap(nodes)]
}

// space marks the bytes JSON counts as white space.
var space = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

// skipNL returns the index after the line break at b[i] and the spaces
// after it, when it is a line break followed by up to seven spaces and a
// byte that is not a space (the white space of pretty-printed JSON), else
// i.
func skipNL(b []byte, i int) int {
	if i+9 <= len(b) && b[i] == '\n' {
		if w := le64(b, i+1) ^ 0x2020202020202020; w != 0 {
			return i + 1 + bits.TrailingZeros64(w)>>3
		}
	}
	return i
}

// skipWS returns the index of the first byte of b at or after i that is
// not white space. After each white space byte it passes over up to
// eight spaces at once: indentation.
func skipWS(b []byte, i int) int {
	for uint(i) < uint(len(b)) && space[b[i]] {
		i++
		if i+8 <= len(b) {
			k := bits.TrailingZeros64(le64(b, i)^0x2020202020202020) >> 3
			i += k
			if k < 8 && b[i] > ' ' {
				break
			}
		}
	}
	return i
}

// le64 returns the eight bytes of b at i as a little-endian word.
func le64(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i : i+8]) }

// scanPlain returns the index of the first byte of b at or after i that
// needs care in a string literal ('"', '\\', a control character or a
// byte >= 0x80), looking eight bytes at a time; when fewer than eight
// bytes are left without one, it returns where they start.
func scanPlain(b []byte, i int) int {
	for i+8 <= len(b) {
		if m := careMask(le64(b, i)); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	return i
}

// careMask returns the bytes of the word x that need care in a string
// literal, as scanPlain counts them, as their high bits, exactly up to
// and including the first (the lowest) of them: a byte of x^q - 0x01 has
// its high bit set when the byte of x is q or >= 0x80, one of x - 0x20
// when it is a control character or >= 0x80, and only a byte that
// needs care borrows from the next.
func careMask(x uint64) uint64 {
	return ((x ^ 0x2222222222222222 - 0x0101010101010101) | (x ^ 0x5c5c5c5c5c5c5c5c - 0x0101010101010101) | (x - 0x2020202020202020) | x) & 0x8080808080808080
}

// badLiteral returns the offset and the message of the error in the
// literal lit, which s[at:] starts with but does not hold whole, and
// true: the error is inside the value being read.
func (p *Parser) badLiteral(at int, lit string) (off int, msg string, inner bool) {
	s := p.s
	for i := 1; i < len(lit); i++ {
		q := at + i
		if q >= len(s) {
			return q, "unexpected end of JSON input", true
		}
		if s[q] != lit[i] {
			return q, "invalid character " + p.quoteAt(q) + " in literal " + lit + " (expecting " + quoteByte(lit[i]) + ")", true
		}
	}
	return at, "invalid literal", true // unreachable: the whole literal matched
}

// scanNumber returns the end of the numeric literal at s[i]; when the
// literal is malformed, end is the offset of the byte that is wrong and
// what says what was expected there ("in numeric literal", ...).
func scanNumber(s string, i int) (end int, what string) {
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i = skipDigits(s, i+1)
	default:
		return i, "in numeric literal"
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return i, "after decimal point in numeric literal"
		}
		i = skipDigits(s, i+1)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return i, "in exponent of numeric literal"
		}
		i = skipDigits(s, i+1)
	}
	return i, ""
}

// unexpected is the message for byte i of the input where what was
// expected ("in numeric literal"), or for the end of the input.
func (p *Parser) unexpected(i int, what string) string {
	if i >= len(p.s) {
		return "unexpected end of JSON input"
	}
	return "invalid character " + p.quoteAt(i) + " " + what
}

// keyBit chooses an object key's bit in read's 32-bit set of the keys
// of an object, from the key's length n and its first eight bytes (all of
// a shorter key), b[i:i+n]: keys with different bits differ, so the keys
// of an object whose set has as many bits as the object has members are
// distinct and not compared (repeatedKey).
func keyBit(b []byte, i, n int) uint32 {
	return 1 << ((keyWord(b, i, n) + uint64(n)) * keyMul >> 59)
}

// keyWord returns the first eight bytes of the key text b[i:i+n] (all of
// a shorter key, then zero bytes) as a little-endian word.
func keyWord(b []byte, i, n int) uint64 {
	var w uint64
	if i+8 <= len(b) {
		w = le64(b, i)
		if n < 8 {
			w &= 1<<(uint(n)*8&63) - 1
		}
	} else {
		for k := range min(n, 8) {
			w |= uint64(b[i+k]) << (8 * k)
		}
	}
	return w
}

// keyMul is keyBit's multiplier, 2**64 over the golden ratio.
const keyMul = 0x9e3779b97f4a7c15

// keyRank returns the first eight bytes of the key text b[i:i+n] (all
// of a shorter key, then zero bytes) as a big-endian word, plus 1 (it is
// never 0: no plain key starts with eight 0xff bytes, invalid UTF-8). Of
// two plain keys (which hold no zero byte) with different ranks, the
// lesser rank's key is the lesser string; two with the same rank are
// equal when one of them is shorter than eight bytes, else they share
// their first eight.
func keyRank(b []byte, i, n int) uint64 {
	return bits.ReverseBytes64(keyWord(b, i, n)) + 1
}

// keyAfter reports whether the plain key p.s[i:i+n] is greater than the
// current object's previous key, of keyRank p.pw (there is none when
// p.pw is 0), and returns the key's keyRank.
func (p *Parser) keyAfter(nodes []node, i, n int) (uint64, bool) {
	r := keyRank(unsafe.Slice(unsafe.StringData(p.s), len(p.s)), i, n)
	if r != p.pw {
		return r, r > p.pw
	}
	// The same rank: the same key unless both have eight bytes or more.
	return r, n >= 8 && p.keyGreater(nodes, i, n)
}

// keyGreater reports whether the key p.s[i:i+n] is greater than the
// previous key of the object read, node p.pk: one of eight bytes or
// more, whose first eight the key shares (the same keyRank).
func (p *Parser) keyGreater(nodes []node, i, n int) bool {
	return p.s[i:i+n] > p.keyText(nodes, p.pk)
}

// repeatedKey reports whether two keys of the object node obj (just read)
// have the same text; nodes holds the document, whose first node is
// nodes[p.start].
func (p *Parser) repeatedKey(nodes []node, obj uint32) bool {
	base := p.start
	nd := &nodes[obj]
	var small [8]uint32
	keys := small[:0]
	if nd.n > uint32(len(small)) {
		keys = make([]uint32, 0, nd.n)
	}
	j := obj + 1
	for range nd.n {
		keys = append(keys, j)
		j++ // the value
		if v := &nodes[j]; v.kind >= Array {
			j = v.end + uint32(base)
		} else {
			j++
		}
	}
	if len(keys) <= 8 {
		for a := 1; a < len(keys); a++ {
			ka := p.keyText(nodes, keys[a])
			for b := 0; b < a; b++ {
				if p.keyText(nodes, keys[b]) == ka {
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
		t := p.keyText(nodes, k)
		if _, dup := p.seen[t]; dup {
			return true
		}
		p.seen[t] = struct{}{}
	}
	return false
}

// keyText returns the text of the string node k of the document being
// read (only to compare it: an escaped key's text lives in buf).
func (p *Parser) keyText(nodes []node, k uint32) string {
	nd := &nodes[k]
	if nd.flag&flagEsc != 0 {
		return bytesString(p.buf[nd.off : nd.off+nd.n])
	}
	return p.s[nd.off : nd.off+nd.n]
}

// located completes a *SyntaxError of read with its pointer: the index
// of the value of a sequence, then one token for each open container,
// outermost first, down to cur, whose own token (the key or index of the
// value it is reading, after the members or elements n counts as read
// does) is there only when inner is set.
func (p *Parser) located(err error, nodes []node, cur, n uint32, inner bool) error {
	se, ok := err.(*SyntaxError)
	if !ok {
		return err
	}
	var chain []uint32 // innermost first
	for c := cur; c != noParent; c = nodes[c].end {
		chain = append(chain, c)
	}
	var b []byte
	if p.seq {
		b = append(b, '/')
		b = strconv.AppendUint(b, uint64(p.seqN), 10)
	}
	base := uint32(p.start)
	for k := len(chain) - 1; k >= 0; k-- {
		c := chain[k]
		if k == 0 && !inner {
			break
		}
		count := n >> 1
		if k > 0 {
			count = nodes[c].n >> 1
		}
		b = append(b, '/')
		if nodes[c].kind == Array {
			b = strconv.AppendUint(b, uint64(count), 10)
			continue
		}
		// The current key: the one after count members.
		j := c + 1
		for range count {
			if v := &nodes[j+1]; v.kind >= Array {
				j = v.end + base
			} else {
				j += 2
			}
		}
		b = appendPointerToken(b, p.keyText(nodes, j))
	}
	se.Pointer = string(b)
	return se
}

// plainByte marks the string bytes that need no care: printable ASCII
// other than '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// strRest reads the rest of the string literal whose opening quote is
// s[quote], from its first byte i that needs care other than a closing
// quote (or the end of the input), and returns its node and the offset
// after it. A literal with no escapes and valid UTF-8 is a slice of the
// input (flagWide when it holds bytes >= 0x80); any other is decoded
// into p.buf (flagEsc).
func (p *Parser) strRest(quote, i int) (node, int, error) {
	s := p.s
	start := quote + 1
	ascii := true
	for i < len(s) {
		c := s[i]
		if plainByte[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			nd := node{kind: String, off: uint32(start), n: uint32(i - start), end: uint32(quote), rend: uint32(i + 1)}
			if !ascii {
				if !utf8.ValidString(s[start:i]) {
					return p.strSlow(quote, start, start)
				}
				nd.flag = flagWide
			}
			return nd, i + 1, nil
		case c == '\\':
			if !ascii {
				// Decode from the start: the bytes read so far may
				// hold invalid UTF-8.
				return p.strSlow(quote, start, start)
			}
			return p.strSlow(quote, start, i)
		case c < 0x20:
			return node{}, 0, p.fail(i, "invalid character %s in string literal", p.quoteAt(i))
		default:
			ascii = false
			i++
		}
	}
	return node{}, 0, p.fail(len(s), "unexpected end of JSON input")
}

// strSlow finishes a string literal that has escapes or invalid UTF-8,
// decoding it into p.buf (the bytes between those that need care eight
// at a time, as scanPlain finds them); i is the first byte that needs
// care.
func (p *Parser) strSlow(quote, start, i int) (node, int, error) {
	s := p.s
	src := unsafe.Slice(unsafe.StringData(s), len(s))
	// Room for the text (no longer than the literal, unless it holds
	// invalid UTF-8) and a word more, up to a few KB at once.
	b := slices.Grow(p.buf, min(len(s)-start, 4<<10)+8)
	at := len(b)
	b = append(b, s[start:i]...)
	for i < len(s) {
		if i+8 <= len(src) && cap(b)-len(b) >= 8 {
			// Eight bytes copied at once into the room after b (w is
			// where), of which those before the first that needs care
			// are kept; \", the usual escape, is a quote written in
			// place of the backslash copied, when the word holds both
			// of its bytes. Anything else is read byte by byte below.
			room := b[:cap(b)]
			w := len(b)
			for i+8 <= len(src) && w+8 <= len(room) {
				x := le64(src, i)
				binary.LittleEndian.PutUint64(room[w:w+8], x)
				m := careMask(x)
				if m == 0 {
					w += 8
					i += 8
					continue
				}
				k := uint(bits.TrailingZeros64(m)) >> 3
				w += int(k)
				i += int(k)
				if k < 7 && uint16(x>>(8*k)) == '\\'|'"'<<8 {
					room[w] = '"'
					w++
					i += 2
					continue
				}
				break
			}
			b = room[:w]
			if i >= len(s) {
				break
			}
		}
		c := s[i]
		if plainByte[c] {
			b = append(b, c)
			i++
			continue
		}
		switch {
		case c == '"':
			p.buf = b
			return node{kind: String, flag: flagEsc, off: uint32(at), n: uint32(len(b) - at), end: uint32(quote), rend: uint32(i + 1)}, i + 1, nil
		case c < 0x20:
			p.buf = b
			return node{}, 0, p.fail(i, "invalid character %s in string literal", p.quoteAt(i))
		case c == '\\':
			i++
			if i >= len(s) {
				p.buf = b
				return node{}, 0, p.fail(i, "unexpected end of JSON input")
			}
			switch e := s[i]; e {
			case '"', '\\', '/':
				b = append(b, e)
				i++
				if e == '\\' && i < len(s) && s[i] == 'u' {
					p.slashU = true // \\u
				}
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
				p.slashU = true
				r, bad := hex4(s, i+1)
				if bad >= 0 {
					p.buf = b
					if bad >= len(s) {
						return node{}, 0, p.fail(bad, "unexpected end of JSON input")
					}
					return node{}, 0, p.fail(bad, "invalid character %s in \\u hexadecimal character escape", p.quoteAt(bad))
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
				return node{}, 0, p.fail(i, "invalid character %s in string escape code", p.quoteAt(i))
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
	return node{}, 0, p.fail(len(s), "unexpected end of JSON input")
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
