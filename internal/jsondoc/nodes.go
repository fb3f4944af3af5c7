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

// AppendStringsKeys is AppendStrings with the object keys appended to keys
// instead of handed to a function: the keys that have at least minLen
// bytes or end with a byte b for which end[b] is set, in document order
// (the others are left out). It reports false at the first object with a
// repeated key, with what it appended before it. It is one tight pass over
// v's nodes that calls nothing for most of them.
func (v Value) AppendStringsKeys(texts, keys []string, minLen int, end *[256]bool) ([]string, []string, bool) {
	if v.d == nil {
		return texts, keys, true
	}
	d := v.d
	nodes := d.nodes[v.i:d.next(v.i)]
	src, esc := d.src, d.esc
	ml := uint32(max(minLen, 0))
	for i := range nodes {
		nd := &nodes[i]
		if nd.kind != String {
			if nd.kind == Object && nd.flag&flagDup != 0 {
				return texts, keys, false
			}
			continue
		}
		n, flag := nd.n, nd.flag
		if flag&flagKey == 0 {
			if n >= ml {
				texts = append(texts, nodeText(nd, src, esc))
			}
			continue
		}
		if n < ml {
			if n == 0 {
				continue
			}
			var last byte
			if flag&flagEsc == 0 {
				last = src[nd.off+n-1]
			} else {
				last = esc[nd.off+n-1]
			}
			if !end[last] {
				continue
			}
		}
		keys = append(keys, nodeText(nd, src, esc))
	}
	return texts, keys, true
}

// nodeText is the text of string node nd of a document with text src and
// decoded texts esc.
func nodeText(nd *node, src, esc string) string {
	if nd.flag&flagEsc != 0 {
		return esc[nd.off : nd.off+nd.n]
	}
	return src[nd.off : nd.off+nd.n]
}
