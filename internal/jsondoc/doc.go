// Package jsondoc is toolscore's one JSON layer: it reads JSON documents
// into a compact, read-only representation, navigates and compares their
// values without building Go maps, and writes JSON exactly as
// encoding/json does. Every other package reads and writes JSON through it
// (or through encoding/json for small typed values).
//
// # Reading
//
// [Parse] (and [ParseString], [ParseSeq], a [Parser] for many small
// documents) reads a document into a [Doc]: one flat array of nodes over
// the input text (a tape), where a string or a number is an offset and a
// length into the text and a container knows where its subtree ends, so a
// subtree is skipped in O(1). Numbers are kept as their exact literal
// text. Reading accepts exactly what encoding/json accepts, with the same
// values (invalid UTF-8 and lone surrogates read as U+FFFD, a repeated key
// keeps its last value, which [Value.HasRepeatedKey] and
// [Value.AppendRepeatedKeys] tell of), within two limits that apply to every document:
// at most [MaxDepth] nested arrays and objects and numeric literals of at
// most [MaxNumberLen] bytes. A document that does not read is a
// [*SyntaxError] with the byte offset, the line and column and the JSON
// pointer of the place, computed only then.
//
// # Values
//
// A [Value] is a handle to one node: its [Kind], its text ([Value.Str],
// [Value.Num], [Value.Bool]), its members and elements ([Value.Get],
// [Value.Members], [Value.Elems]), its exact source text ([Value.Raw]) and
// its JSON pointer ([Value.Pointer]). [Value.Any] converts it to the
// generic values of encoding/json with UseNumber (map[string]any, []any,
// string, json.Number, bool, nil).
//
// # Writing
//
// [AppendString], [AppendFloat], [Value.AppendJSON] and [AppendAny] write
// exactly the bytes json.Marshal writes for the same values; [Canonical]
// is the canonical form hashed to identify contract bodies.
//
// # Without decoding
//
// [Valid], [SkipValue], [Lookup] and [Elements] delimit values in JSON text
// without building anything: one member's raw value, the raw elements of
// an array, the end of a value.
//
// Everything here is pure; a Doc and its Values are immutable and safe for
// concurrent use. A Parser is not.
package jsondoc

import "unsafe"

// MaxDepth is the deepest nesting of arrays and objects any document may
// have; a deeper one is a *SyntaxError. It bounds the recursion of every
// reader and writer of values (comparison, encoding, schema validation).
const MaxDepth = 1000

// MaxNumberLen is the longest numeric literal, in bytes, a document may
// hold; a longer one is a *SyntaxError. Integers stay exact far beyond
// int64 (SPEC section 2) while no literal costs more than a fixed time to
// compare.
const MaxNumberLen = 500

// Kind is the JSON type of a Value.
type Kind uint8

// The kinds of JSON values. Invalid is the zero Value (no value).
const (
	Invalid Kind = iota
	Null
	Bool
	Number
	String
	Array
	Object
)

// String names the kind as JSON Schema does ("object", "array", ...), or
// "invalid".
func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "boolean"
	case Number:
		return "number"
	case String:
		return "string"
	case Array:
		return "array"
	case Object:
		return "object"
	}
	return "invalid"
}

// node flags.
const (
	flagTrue uint8 = 1 << iota // Bool: true
	flagEsc                    // String: text is in Doc.esc (escapes or invalid UTF-8)
	flagDup                    // Object: some key is repeated
	flagSeq                    // Array: the synthetic root of a ParseSeq document
	flagKey                    // String: an object key
	flagWide                   // String: the text holds bytes >= 0x80 (valid UTF-8, no escapes)
	// flagTokens marks an array or object each of whose tokens appendAt
	// writes as the text has it, HTML aside: every string in it plain
	// ASCII as read (flagEsc and flagWide clear) and every object's keys
	// in strictly increasing order. The parser sets it while it reads.
	flagTokens
	// flagCompact marks a flagTokens array or object with no white space
	// between its tokens: its text is appendAt's output (HTML aside).
	flagCompact
	// flagDupIn marks an array or object that is, or holds, an object
	// with a repeated key (flagDup), so that a subtree without one is
	// known at once (Value.HasRepeatedKey); the synthetic root of a
	// ParseSeq document does not have it. It is flagWide's bit, which
	// only strings have.
	flagDupIn = flagWide
)

// node is one value of a document. Offsets are bytes into Doc.src unless
// said otherwise.
type node struct {
	kind Kind
	flag uint8
	// n is the text length of a string or number, the number of elements
	// of an array or of members (repeated keys included) of an object.
	n uint32
	// off is the text offset of a string (into esc with flagEsc), number
	// or literal, or the offset of a container's opening bracket.
	off uint32
	// end is the index of the node after a container's subtree, or the
	// offset of a string's opening quote.
	end uint32
	// rend is the offset just past a container's closing bracket or a
	// string's closing quote.
	rend uint32
}

// Doc is one parsed document: its text and the tape of its values.
type Doc struct {
	src string
	// esc holds the decoded text of strings with escapes or invalid
	// UTF-8.
	esc   string
	nodes []node
	// slashU reports that src holds a backslash followed by 'u'
	// (HoldsSlashU).
	slashU bool
}

// Value is a handle to one value of a Doc. The zero Value is no value
// (Kind Invalid): an absent member, an element past the end. Values are
// small (a pointer and an index), compare equal when they are the same
// value of the same document, and are safe for concurrent use.
type Value struct {
	d *Doc
	i uint32
}

// Root returns the document's top-level value (for a ParseSeq document,
// the array of its values).
func (d *Doc) Root() Value { return Value{d: d} }

// Source returns the document's text.
func (d *Doc) Source() string { return d.src }

// HoldsSlashU reports whether the text the document was read from holds
// the two bytes \u (in JSON text, a \u escape or an escaped backslash
// followed by u, \\u): the parser notes it while it decodes escapes,
// so asking costs nothing.
func (d *Doc) HoldsSlashU() bool { return d.slashU }

// Doc returns the document v belongs to, nil for the zero Value.
func (v Value) Doc() *Doc { return v.d }

// node returns v's node; v must not be the zero Value.
func (v Value) node() *node { return &v.d.nodes[v.i] }

// text returns the text of the string or number node j.
func (d *Doc) text(j uint32) string {
	nd := &d.nodes[j]
	if nd.flag&flagEsc != 0 {
		return d.esc[nd.off : nd.off+nd.n]
	}
	return d.src[nd.off : nd.off+nd.n]
}

// next returns the index of the node after node j's subtree.
func (d *Doc) next(j uint32) uint32 {
	if nd := &d.nodes[j]; nd.kind >= Array {
		return nd.end
	}
	return j + 1
}

// bytesString returns the bytes of b as a string without copying; b must
// never be written again.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
