package jsondoc

import "unsafe"

// Nodes is a read-only view of the values of one value's subtree as the
// document stores them: node 0 is the value itself, then the values
// inside it in document order, an object's members as key (a String
// node) then value, each member in the order of the text, repeated keys
// included. It is for reading every value of a subtree in one tight loop
// (a scan of all its strings, an index); Value's methods read a value the
// plain way.
type Nodes struct {
	// d is the document; first points at node 0, d.nodes[base], and n
	// is the number of nodes. The view is four words, so that a Nodes
	// passed around or read in a loop stays in registers.
	d     *Doc
	first *node
	base  uint32
	n     uint32
}

// Nodes returns the view of v's subtree (empty for the zero Value).
func (v Value) Nodes() Nodes {
	if v.d == nil {
		return Nodes{}
	}
	return Nodes{d: v.d, first: &v.d.nodes[v.i], base: v.i, n: v.d.next(v.i) - v.i}
}

// at returns node i; it panics when i is not in [0, Len()).
func (n Nodes) at(i int) *node {
	if uint(i) >= uint(n.n) {
		panic("jsondoc: Nodes index out of range")
	}
	return (*node)(unsafe.Add(unsafe.Pointer(n.first), uintptr(i)*unsafe.Sizeof(node{})))
}

// Len returns the number of nodes.
func (n Nodes) Len() int { return int(n.n) }

// Kind returns node i's kind (String for an object key).
func (n Nodes) Kind(i int) Kind { return n.at(i).kind }

// Str returns the text of string node i (decoded) and whether it is an
// object key, with ok true; "", false, false for any other node.
func (n Nodes) Str(i int) (s string, key, ok bool) {
	nd := n.at(i)
	if nd.kind != String {
		return "", false, false
	}
	src := n.d.src
	if nd.flag&flagEsc != 0 {
		src = n.d.esc
	}
	return src[nd.off : nd.off+nd.n], nd.flag&flagKey != 0, true
}

// Text returns the text of string or number node i: a string's decoded
// text (an object key's too), a number's literal; "" for any other node.
// It is Str's text, or Value(i).Num's literal, at the cost of one load of
// the node.
func (n Nodes) Text(i int) string {
	nd := n.at(i)
	if nd.kind-Number > String-Number {
		return ""
	}
	p := unsafe.StringData(n.d.src)
	if nd.flag&flagEsc != 0 {
		p = unsafe.StringData(n.d.esc)
	}
	return unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(p), nd.off)), nd.n)
}

// IsKey reports whether string node i is an object key.
func (n Nodes) IsKey(i int) bool { return n.at(i).flag&flagKey != 0 }

// RepeatsKey reports whether node i is an object with a repeated key
// (its Members then leave some members out).
func (n Nodes) RepeatsKey(i int) bool {
	nd := n.at(i)
	return nd.kind == Object && nd.flag&flagDup != 0
}

// Count returns the number of elements of array node i or of members of
// object node i (repeated keys counted each time), 0 for any other node.
func (n Nodes) Count(i int) int {
	if nd := n.at(i); nd.kind >= Array {
		return int(nd.n)
	}
	return 0
}

// Skip returns the index of the node after node i's subtree.
func (n Nodes) Skip(i int) int {
	if nd := n.at(i); nd.kind >= Array {
		return int(nd.end - n.base)
	}
	return i + 1
}

// Value returns node i as a Value (for a key, the key as a string Value
// of its own).
func (n Nodes) Value(i int) Value {
	return Value{d: n.d, i: n.base + uint32(i)}
}

// AppendStrings appends to texts the strings of v and of everything inside
// it that are no object key and have at least minLen bytes, in document
// order, and calls key for each object key (in document order too); it
// stops, reporting false, at the first key for which key reports false,
// or at the first object with a repeated key (whose Members leave some
// members out). It is one pass over v's nodes: a quick look at every
// text of a value.
func (v Value) AppendStrings(texts []string, minLen int, key func(string) bool) ([]string, bool) {
	if v.d == nil {
		return texts, true
	}
	d := v.d
	nodes := d.nodes[v.i:d.next(v.i)]
	for i := range nodes {
		nd := &nodes[i]
		switch nd.kind {
		case String:
			if nd.flag&flagKey != 0 {
				if !key(d.text(v.i + uint32(i))) {
					return texts, false
				}
			} else if int(nd.n) >= minLen {
				texts = append(texts, d.text(v.i+uint32(i)))
			}
		case Object:
			if nd.flag&flagDup != 0 {
				return texts, false
			}
		}
	}
	return texts, true
}

// Cursor reads the nodes of a Nodes view one after the other in
// document order, each at the cost of a load: for a loop that visits
// every node of a subtree once (compiling it, say). Its methods read the
// node it is at, which is node 0 of the view to begin with; Next moves
// it to the following node. The zero Cursor, and the Cursor of an empty
// view, is at one Invalid node.
type Cursor struct {
	// p is the node the cursor is at, last the view's last node; src
	// and esc point at the document's texts (Doc.src, Doc.esc).
	p, last  unsafe.Pointer
	src, esc unsafe.Pointer
}

// noNode is the node of an empty view's Cursor.
var noNode node

// Cursor returns a Cursor at node 0 of n.
func (n Nodes) Cursor() Cursor {
	if n.n == 0 {
		return Cursor{p: unsafe.Pointer(&noNode), last: unsafe.Pointer(&noNode)}
	}
	return Cursor{
		p:    unsafe.Pointer(n.first),
		last: unsafe.Add(unsafe.Pointer(n.first), uintptr(n.n-1)*unsafe.Sizeof(node{})),
		src:  unsafe.Pointer(unsafe.StringData(n.d.src)),
		esc:  unsafe.Pointer(unsafe.StringData(n.d.esc)),
	}
}

// Next moves c to the next node and reports whether there was one (at
// the view's last node, c stays there).
func (c *Cursor) Next() bool {
	if c.p == c.last {
		return false
	}
	c.p = unsafe.Add(c.p, unsafe.Sizeof(node{}))
	return true
}

// Kind returns the node's kind (String for an object key).
func (c *Cursor) Kind() Kind { return (*node)(c.p).kind }

// Text returns the text of a string or number node: a string's decoded
// text (an object key's too), a number's literal; "" for any other node.
func (c *Cursor) Text() string {
	nd := (*node)(c.p)
	if nd.kind-Number > String-Number {
		return ""
	}
	base := c.src
	if nd.flag&flagEsc != 0 {
		base = c.esc
	}
	return unsafe.String((*byte)(unsafe.Add(base, nd.off)), nd.n)
}

// True reports whether the node is the boolean true.
func (c *Cursor) True() bool {
	nd := (*node)(c.p)
	return nd.kind == Bool && nd.flag&flagTrue != 0
}

// Count returns the number of elements of an array node or of members of
// an object node (repeated keys counted each time), 0 for any other node.
func (c *Cursor) Count() int {
	if nd := (*node)(c.p); nd.kind >= Array {
		return int(nd.n)
	}
	return 0
}

// RepeatsKey reports whether the node is an object with a repeated key.
func (c *Cursor) RepeatsKey() bool {
	nd := (*node)(c.p)
	return nd.kind == Object && nd.flag&flagDup != 0
}

// Raw returns an array's or object's exact source text, "" for any other
// node.
func (c *Cursor) Raw() string {
	nd := (*node)(c.p)
	if nd.kind < Array {
		return ""
	}
	return unsafe.String((*byte)(unsafe.Add(c.src, nd.off)), nd.rend-nd.off)
}

// KeyEnds is a set of two-byte endings of object keys, for
// AppendStringsKeys: the pair of bytes prev, last is in it when bit prev
// of KeyEnds[last] is set (Add sets it, Has tests it).
type KeyEnds [256][4]uint64

// Add puts the ending prev, last in e.
func (e *KeyEnds) Add(prev, last byte) { e[last][prev>>6] |= 1 << (prev & 63) }

// Has reports whether the ending prev, last is in e.
func (e *KeyEnds) Has(prev, last byte) bool { return e[last][prev>>6]&(1<<(prev&63)) != 0 }

// has is Has of the ending p[0], p[1]: the pair read as one little-endian
// 16-bit word w = last<<8 | prev is bit w of e's words taken in order
// (bit prev&63 of word e[last][prev>>6]).
func (e *KeyEnds) has(p [2]byte) bool {
	w := uint(p[0]) | uint(p[1])<<8
	return (*[1024]uint64)(unsafe.Pointer(e))[w>>6]&(1<<(w&63)) != 0
}

// AppendStringsKeys is AppendStrings with the object keys appended to keys
// instead of handed to a function: the keys that have at least minLen
// bytes, or at least two bytes whose last two are an ending in ends, in
// document order (the others are left out). It reports false at the first
// object with a repeated key, with what it appended before it. It is one
// tight pass over v's nodes that calls nothing for most of them.
func (v Value) AppendStringsKeys(texts, keys []string, minLen int, ends *KeyEnds) ([]string, []string, bool) {
	if v.d == nil {
		return texts, keys, true
	}
	out := stringsKeys{texts, keys}
	ok := v.d.appendStringsKeys(&out, v.d.nodes[v.i:v.d.next(v.i)], uint32(max(minLen, 0)), ends)
	return out.texts, out.keys, ok
}

// stringsKeys are the lists AppendStringsKeys appends to. They are kept
// in memory rather than in the loop's registers: most nodes append
// nothing.
type stringsKeys struct{ texts, keys []string }

// appendStringsKeys is AppendStringsKeys over nodes, a subtree of d's. It
// steps from node to node by pointer (a node's index is never needed)
// and reads a string's text from the document's texts without bounds
// checks: the parser made every string node's offset and length fit.
func (d *Doc) appendStringsKeys(out *stringsKeys, nodes []node, minLen uint32, ends *KeyEnds) bool {
	if len(nodes) == 0 {
		return true
	}
	const size = unsafe.Sizeof(node{})
	src := unsafe.Pointer(unsafe.StringData(d.src))
	esc := unsafe.Pointer(unsafe.StringData(d.esc))
	p := unsafe.Pointer(&nodes[0])
	last := unsafe.Add(p, uintptr(len(nodes)-1)*size)
	for ; ; p = unsafe.Add(p, size) {
		nd := (*node)(p)
		if nd.kind == String {
			n, flag := nd.n, nd.flag
			at := unsafe.Add(src, nd.off)
			if flag&flagEsc != 0 {
				at = unsafe.Add(esc, nd.off)
			}
			if n >= minLen {
				if flag&flagKey != 0 {
					out.keys = append(out.keys, unsafe.String((*byte)(at), n))
				} else {
					out.texts = append(out.texts, unsafe.String((*byte)(at), n))
				}
			} else if flag&flagKey != 0 && n >= 2 && ends.has(*(*[2]byte)(unsafe.Add(at, n-2))) {
				out.keys = append(out.keys, unsafe.String((*byte)(at), n))
			}
		} else if nd.kind == Object && nd.flag&flagDup != 0 {
			return false
		}
		if p == last {
			return true
		}
	}
}
