package engine

import "github.com/toolscore/toolscore/internal/jsondoc"

// argMember is one member of a trace call's arguments: its key and its
// value.
type argMember struct {
	key string
	val jsondoc.Value
}

// callArgs is the index of one trace call's arguments the scorer reads:
// their members (a repeated key once, with its last value), in the
// scorer's member arena, and their keys' keyBit set.
type callArgs struct {
	lo, hi int32
	bits   uint64
	built  bool
}

// argIndex returns the members of trace call i's arguments and the keyBit
// set of their keys (nothing for arguments that are no object), built once
// per evaluation from one pass over the arguments' top-level nodes.
func (sc *scorer) argIndex(i int) ([]argMember, uint64) {
	ca := &sc.callArgs[i]
	if !ca.built {
		ca.built = true
		ca.lo = int32(len(sc.members))
		sc.members, ca.bits = appendMembers(sc.members, sc.t.Calls[i].Args)
		ca.hi = int32(len(sc.members))
	}
	return sc.members[ca.lo:ca.hi:ca.hi], ca.bits
}

// appendMembers appends to dst the members of args as Members yields them
// (nothing when args is no object), and returns the keyBit set of their
// keys, from one pass over args' top-level nodes.
func appendMembers(dst []argMember, args jsondoc.Value) ([]argMember, uint64) {
	var bits uint64
	nodes := args.Nodes()
	switch {
	case nodes.Len() == 0 || nodes.Kind(0) != jsondoc.Object:
	case nodes.RepeatsKey(0):
		for k, v := range args.Members() {
			dst = append(dst, argMember{k, v})
			bits |= keyBit(k)
		}
	default:
		j := 1
		for range nodes.Count(0) {
			k := nodes.Text(j)
			dst = append(dst, argMember{k, nodes.Value(j + 1)})
			bits |= keyBit(k)
			j = nodes.Skip(j + 1)
		}
	}
	return dst, bits
}

// memberValue returns the value of member k of ms, and whether there is
// one.
func memberValue(ms []argMember, k string) (jsondoc.Value, bool) {
	if k == "" {
		for i := range ms {
			if ms[i].key == "" {
				return ms[i].val, true
			}
		}
		return jsondoc.Value{}, false
	}
	// Keys of the same length are told apart by their last byte before
	// their texts are compared.
	c := k[len(k)-1]
	for i := range ms {
		if mk := ms[i].key; len(mk) == len(k) && mk[len(mk)-1] == c && mk == k {
			return ms[i].val, true
		}
	}
	return jsondoc.Value{}, false
}

// countEqualIn returns how many of an object node's keys are present in
// the arguments indexed as ms with a value that matches.
func (e *cval) countEqualIn(ms []argMember, strict bool) int {
	n := 0
	for i, k := range e.keys {
		if av, ok := memberValue(ms, k); ok && e.kids[i].match(av, strict) {
			n++
		}
	}
	return n
}

// satisfiedByIn is satisfiedBy on arguments indexed as ms.
func (e *cval) satisfiedByIn(ms []argMember, strict bool) bool {
	for i, k := range e.keys {
		if av, ok := memberValue(ms, k); !ok || !e.kids[i].match(av, strict) {
			return false
		}
	}
	return true
}
