package jsondoc

import (
	"encoding/json"
	"iter"
	"strconv"
	"unsafe"
)

// Kind returns v's JSON type; Invalid for the zero Value.
func (v Value) Kind() Kind {
	if v.d == nil {
		return Invalid
	}
	return v.node().kind
}

// Exists reports whether v is a value (not the zero Value).
func (v Value) Exists() bool { return v.d != nil }

// IsZero reports whether v is the zero Value (so that a struct field
// tagged omitzero leaves it out).
func (v Value) IsZero() bool { return v.d == nil }

// IsNull reports whether v is JSON null.
func (v Value) IsNull() bool { return v.Kind() == Null }

// Str returns the text of a string (decoded) and true, or "" and false
// for any other value.
func (v Value) Str() (string, bool) {
	if v.d == nil || v.node().kind != String {
		return "", false
	}
	return v.d.text(v.i), true
}

// Text returns the text of a string, or "" for any other value.
func (v Value) Text() string {
	s, _ := v.Str()
	return s
}

// Num returns the exact literal of a number ("1", "-0.5e3") and true, or
// "" and false for any other value.
func (v Value) Num() (string, bool) {
	if v.d == nil || v.node().kind != Number {
		return "", false
	}
	return v.d.text(v.i), true
}

// Bool returns the value of a boolean and true, or false and false for
// any other value.
func (v Value) Bool() (value, ok bool) {
	if v.d == nil || v.node().kind != Bool {
		return false, false
	}
	return v.node().flag&flagTrue != 0, true
}

// Len returns the number of elements of an array or of distinct keys of
// an object, and 0 for any other value.
func (v Value) Len() int {
	if v.d == nil {
		return 0
	}
	nd := v.node()
	switch nd.kind {
	case Array:
		return int(nd.n)
	case Object:
		if nd.flag&flagDup == 0 {
			return int(nd.n)
		}
		n := 0
		for range v.Members() {
			n++
		}
		return n
	}
	return 0
}

// Get returns the value of an object's member key (the last one when the
// key is repeated), or the zero Value when v is not an object or has no
// such member.
func (v Value) Get(key string) Value {
	if v.d == nil {
		return Value{}
	}
	d := v.d
	nd := &d.nodes[v.i]
	if nd.kind != Object {
		return Value{}
	}
	dup := nd.flag&flagDup != 0
	found := Value{}
	nodes := d.nodes
	kn := uint32(len(key))
	j := v.i + 1
	for range nd.n {
		// A key of another length is passed over without reading its
		// text: most members asked for are absent.
		if k := &nodes[j]; k.n == kn {
			src := d.src
			if k.flag&flagEsc != 0 {
				src = d.esc
			}
			if src[k.off:k.off+kn] == key {
				found = Value{d: d, i: j + 1}
				if !dup {
					return found
				}
			}
		}
		if m := &nodes[j+1]; m.kind >= Array {
			j = m.end
		} else {
			j += 2
		}
	}
	return found
}

// HasKeyPrefix reports whether some key of the object v starts with
// prefix (a repeated key counts as any key does); false when v is not an
// object. It reads only the keys, and only as many bytes of each as
// prefix has.
func (v Value) HasKeyPrefix(prefix string) bool {
	if v.d == nil {
		return false
	}
	d := v.d
	nodes := d.nodes
	nd := &nodes[v.i]
	if nd.kind != Object {
		return false
	}
	if prefix == "" {
		return nd.n > 0
	}
	kn, c := uint32(len(prefix)), prefix[0]
	j, end := v.i+1, nd.end
	for j < end {
		// j is a key, j+1 its value.
		k := &nodes[j]
		if k.n >= kn {
			src := d.src
			if k.flag&flagEsc != 0 {
				src = d.esc
			}
			if src[k.off] == c && (kn == 1 || src[k.off:k.off+kn] == prefix) {
				return true
			}
		}
		j++
		if m := &nodes[j]; m.kind >= Array {
			j = m.end
		} else {
			j++
		}
	}
	return false
}

// Index returns element i of an array, or the zero Value when v is not
// an array or i is out of range. It takes time linear in i; use Elems to
// walk an array.
func (v Value) Index(i int) Value {
	if v.d == nil || i < 0 {
		return Value{}
	}
	d := v.d
	nd := &d.nodes[v.i]
	if nd.kind != Array || i >= int(nd.n) {
		return Value{}
	}
	j := v.i + 1
	for range i {
		j = d.next(j)
	}
	return Value{d: d, i: j}
}

// Elems iterates over an array's elements with their indexes; nothing
// for any other value.
func (v Value) Elems() iter.Seq2[int, Value] {
	return func(yield func(int, Value) bool) {
		if v.d == nil {
			return
		}
		d := v.d
		nd := &d.nodes[v.i]
		if nd.kind != Array {
			return
		}
		j := v.i + 1
		for k := range int(nd.n) {
			if !yield(k, Value{d: d, i: j}) {
				return
			}
			j = d.next(j)
		}
	}
}

// Members iterates over an object's members in document order, each key
// once: a repeated key is met where it last occurs, with its last value
// (as encoding/json keeps it). Nothing for any other value.
func (v Value) Members() iter.Seq2[string, Value] {
	return func(yield func(string, Value) bool) {
		if v.d == nil {
			return
		}
		d := v.d
		nd := &d.nodes[v.i]
		if nd.kind != Object {
			return
		}
		dup := nd.flag&flagDup != 0
		j := v.i + 1
		for range nd.n {
			k := d.text(j)
			next := d.next(j + 1)
			if !dup || !d.keyLater(k, next, v) {
				if !yield(k, Value{d: d, i: j + 1}) {
					return
				}
			}
			j = next
		}
	}
}

// keyLater reports whether the object obj has a member named k at or
// after node j.
func (d *Doc) keyLater(k string, j uint32, obj Value) bool {
	end := d.nodes[obj.i].end
	for j < end {
		if d.text(j) == k {
			return true
		}
		j = d.next(j + 1)
	}
	return false
}

// Raw returns v's exact source text ("" for the zero Value). The root of
// a ParseSeq document is all of its text.
func (v Value) Raw() string {
	if v.d == nil {
		return ""
	}
	nd := v.node()
	switch nd.kind {
	case String:
		return v.d.src[nd.end:nd.rend]
	case Array, Object:
		return v.d.src[nd.off:nd.rend]
	}
	return v.d.src[nd.off : nd.off+nd.n]
}

// Offset returns the byte offset in the document's text where v starts.
func (v Value) Offset() int {
	if v.d == nil {
		return 0
	}
	if nd := v.node(); nd.kind == String {
		return int(nd.end)
	}
	return int(v.node().off)
}

// Pointer returns v's RFC 6901 JSON pointer from its document's root (""
// for the root itself). It walks down from the root, skipping subtrees,
// so it costs time linear in the number of members and elements on the
// way: use it for error messages.
func (v Value) Pointer() string {
	if v.d == nil {
		return ""
	}
	return v.d.pointerFrom(0, nil, v.i)
}

// PointerFrom returns v's JSON pointer from its document's root given
// the pointer of anc, a value of the same document at or above v:
// ancPointer followed by the tokens from anc down to v, found walking
// down from anc only (so it costs time linear in the members and
// elements between them). It is false when v is not anc or inside it.
func (v Value) PointerFrom(anc Value, ancPointer string) (string, bool) {
	if v.d == nil || anc.d != v.d || v.i < anc.i || v.i >= v.d.next(anc.i) {
		return "", false
	}
	return v.d.pointerFrom(anc.i, []byte(ancPointer), v.i), true
}

// pointerFrom appends to b, the pointer of node cur, the tokens from cur
// down to node i (inside cur's subtree).
func (d *Doc) pointerFrom(cur uint32, b []byte, i uint32) string {
	v := Value{d: d, i: i}
	for cur != v.i {
		nd := &d.nodes[cur]
		j := cur + 1
		found := false
		for k := range nd.n {
			if nd.kind == Object {
				val := j + 1
				next := d.next(val)
				if v.i >= j && v.i < next {
					b = append(b, '/')
					b = appendPointerToken(b, d.text(j))
					cur, found = val, true
					if v.i == j {
						return string(b) // the key itself: the member's place
					}
					break
				}
				j = next
				continue
			}
			next := d.next(j)
			if v.i >= j && v.i < next {
				b = append(b, '/')
				b = strconv.AppendUint(b, uint64(k), 10)
				cur, found = j, true
				break
			}
			j = next
		}
		if !found {
			return string(b) // not below cur: cannot happen for a Value of d
		}
	}
	return string(b)
}

// Any returns v as encoding/json decodes it with UseNumber: map[string]any
// for an object, []any, string, json.Number, bool or nil; nil for the
// zero Value. Strings share the document's memory.
func (v Value) Any() any {
	if v.d == nil {
		return nil
	}
	return v.d.anyAt(v.i)
}

func (d *Doc) anyAt(j uint32) any {
	nd := &d.nodes[j]
	switch nd.kind {
	case Null:
		return nil
	case Bool:
		return nd.flag&flagTrue != 0
	case Number:
		return json.Number(d.text(j))
	case String:
		return d.text(j)
	case Array:
		out := make([]any, nd.n)
		k := j + 1
		for i := range out {
			out[i] = d.anyAt(k)
			k = d.next(k)
		}
		return out
	case Object:
		out := make(map[string]any, nd.n)
		k := j + 1
		for range nd.n {
			out[d.text(k)] = d.anyAt(k + 1)
			k = d.next(k + 1)
		}
		return out
	}
	return nil
}

// Equal reports whether v and w are the same JSON value as encoding/json
// would decode them (with UseNumber): objects with the same members (each
// key's last value), arrays element by element, numbers by their
// literals (1 and 1.0 differ), strings by their decoded text. Two zero
// Values are equal. (go-cmp compares Values with it.)
func (v Value) Equal(w Value) bool {
	if v.d == nil || w.d == nil {
		return v.d == w.d
	}
	if v == w {
		return true
	}
	var a, b [256]byte
	return string(v.AppendJSON(a[:0])) == string(w.AppendJSON(b[:0]))
}

// String returns v's JSON text as AppendJSON writes it ("null" for the
// zero Value), for messages and %v.
func (v Value) String() string { return string(v.AppendJSON(nil)) }

// MarshalJSON implements json.Marshaler: v's JSON as AppendJSON writes it,
// null for the zero Value.
func (v Value) MarshalJSON() ([]byte, error) {
	return v.AppendJSON(nil), nil
}

// UnmarshalJSON implements json.Unmarshaler: v becomes the value of a
// document of its own, read from a copy of data; JSON null becomes the
// zero Value (as a nil map or interface would be).
func (v *Value) UnmarshalJSON(data []byte) error {
	nv, err := Parse(data)
	if err != nil {
		return err
	}
	if nv.IsNull() {
		nv = Value{}
	}
	*v = nv
	return nil
}

// FromAny returns v (a Go value json.Marshal can encode: the generic
// values of encoding/json, maps, slices, structs, Values) as a Value of a
// document of its own; nil gives a null Value. The error is AppendAny's.
func FromAny(v any) (Value, error) {
	data, err := AppendAny(nil, v)
	if err != nil {
		return Value{}, err
	}
	return ParseString(string(data))
}

// MustFromAny is FromAny for values known to encode (literals in code and
// tests); it panics on an error.
func MustFromAny(v any) Value {
	out, err := FromAny(v)
	if err != nil {
		panic(err)
	}
	return out
}

// Census counts the parts of a value, to size what is built from it.
type Census struct {
	// Values counts v and the values inside it by Kind (object keys are
	// not values).
	Values [Object + 1]int
	// Members counts the members of its objects, repeated keys each time
	// they occur; Elements counts the elements of its arrays.
	Members, Elements int
}

// Census counts v's values, members and elements in one pass over its
// subtree, without decoding anything; the zero Value counts nothing.
func (v Value) Census() Census {
	var c Census
	if v.d == nil {
		return c
	}
	nodes := v.d.nodes
	end := v.i + 1
	if nd := &nodes[v.i]; nd.kind >= Array {
		end = nd.end
	}
	var kinds [8]int  // by Kind, masked so that indexing needs no check
	var counts [2]int // elements and members, by kind-Array
	// One step of a pointer per node, from v's node to the last of its
	// subtree (end > v.i).
	const size = unsafe.Sizeof(node{})
	p := unsafe.Pointer(&nodes[v.i])
	last := unsafe.Pointer(&nodes[end-1])
	for ; ; p = unsafe.Add(p, size) {
		nd := (*node)(p)
		k := nd.kind
		kinds[k&7]++
		if k >= Array {
			counts[(k-Array)&1] += int(nd.n)
		}
		if p == last {
			break
		}
	}
	copy(c.Values[:], kinds[:])
	c.Elements, c.Members = counts[0], counts[1]
	c.Values[String] -= c.Members
	return c
}

// Add adds the counts of o to c.
func (c *Census) Add(o Census) {
	for k, n := range o.Values {
		c.Values[k] += n
	}
	c.Members += o.Members
	c.Elements += o.Elements
}
