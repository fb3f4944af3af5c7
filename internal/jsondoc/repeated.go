package jsondoc

import "slices"

// RepeatedKey is one later occurrence of a key an object gives more than
// once (reading keeps the last one's value, as encoding/json does).
type RepeatedKey struct {
	// Key is the key's text.
	Key string
	// Value is the member's value at this occurrence; its Pointer is
	// the member's, the same for every occurrence.
	Value Value
	// Offset is the byte offset of this occurrence's opening quote in
	// the document's text, First that of the key's first occurrence in
	// the object.
	Offset, First int
}

// HasRepeatedKey reports whether v, or a value inside it, is an object
// that gives some key more than once. It costs one look at v's node: the
// parser records it while it reads (false for the synthetic root of a
// ParseSeq document, whose values answer for themselves).
func (v Value) HasRepeatedKey() bool {
	if v.d == nil {
		return false
	}
	nd := v.node()
	return nd.kind >= Array && nd.flag&flagDupIn != 0
}

// RepeatsKey reports whether v is an object that itself gives some key
// more than once (objects inside it aside: HasRepeatedKey tells of those).
// It costs one look at v's node, which the parser marked while it read.
func (v Value) RepeatsKey() bool {
	if v.d == nil {
		return false
	}
	nd := v.node()
	return nd.kind == Object && nd.flag&flagDup != 0
}

// AppendRepeatedMembers appends to dst the repeated keys of v's own
// members, when v is an object (RepeatsKey), in the order of their
// offsets; the objects inside v are not read.
func (v Value) AppendRepeatedMembers(dst []RepeatedKey) []RepeatedKey {
	if !v.RepeatsKey() {
		return dst
	}
	return v.d.appendRepeated(dst, v.i)
}

// AppendRepeatedKeys appends to dst every repeated key of v and of the
// objects inside it, in the order of their offsets: each occurrence of a
// key after its first in one object. Subtrees without one are passed
// over without reading them.
func (v Value) AppendRepeatedKeys(dst []RepeatedKey) []RepeatedKey {
	if !v.HasRepeatedKey() {
		return dst
	}
	d := v.d
	n0 := len(dst)
	for j, end := v.i, d.next(v.i); j < end; {
		nd := &d.nodes[j]
		if nd.kind < Array {
			j++
			continue
		}
		if nd.flag&flagDupIn == 0 {
			j = nd.end
			continue
		}
		if nd.kind == Object && nd.flag&flagDup != 0 {
			dst = d.appendRepeated(dst, j)
		}
		j++
	}
	slices.SortStableFunc(dst[n0:], func(a, b RepeatedKey) int { return a.Offset - b.Offset })
	return dst
}

// appendRepeated appends the repeated keys of the object node obj, in
// the order of its members.
func (d *Doc) appendRepeated(dst []RepeatedKey, obj uint32) []RepeatedKey {
	nd := &d.nodes[obj]
	first := make(map[string]int, nd.n)
	j := obj + 1
	for range nd.n {
		k, key := &d.nodes[j], d.text(j)
		if at, seen := first[key]; seen {
			dst = append(dst, RepeatedKey{Key: key, Value: Value{d: d, i: j + 1}, Offset: int(k.end), First: at})
		} else {
			first[key] = int(k.end)
		}
		j = d.next(j + 1)
	}
	return dst
}
