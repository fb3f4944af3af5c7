package jsondoc

// Step is what Walker.Next met: an object key, a value, or the end of an
// array or object.
type Step uint8

// The steps of a Walker.
const (
	// StepDone: the walk is over.
	StepDone Step = iota
	// StepKey: an object key (Walker.Text is its text).
	StepKey
	// StepValue: a value (Walker.Value is it); the walk then goes into
	// an array's elements or an object's members, and meets StepEnd
	// after the last one.
	StepValue
	// StepEnd: the end of the array or object whose StepValue came last
	// among those not yet ended.
	StepEnd
)

// Walker visits a value and everything inside it in document order, one
// step at a time and without recursion: each value (StepValue), before
// each member's value its key (StepKey), and after the elements or
// members of an array or object its end (StepEnd). Members are met as
// Value.Members yields them: a repeated key only where it last occurs,
// with its last value (the earlier members holding it are skipped whole).
// A walk takes time linear in the number of values; the zero Walker is
// done. A Walker is not for concurrent use; Reset starts another walk and
// keeps the Walker's memory.
type Walker struct {
	d *Doc
	// j is the node the next step meets, end the node after the walked
	// subtree.
	j, end uint32
	// cur is the node of the last StepKey or StepValue.
	cur uint32
	// open are the arrays and objects entered and not yet ended,
	// innermost last.
	open []walkFrame
}

// walkFrame is an open array or object.
type walkFrame struct {
	// node is the container's node, end the node after its subtree.
	node, end uint32
	// obj: an object; dup: an object with a repeated key; value: the
	// next node of an object is a member's value (else its key).
	obj, dup, value bool
}

// Reset starts a walk over v (nothing for the zero Value).
func (w *Walker) Reset(v Value) {
	w.d, w.j, w.end, w.cur = v.d, v.i, v.i, v.i
	w.open = w.open[:0]
	if v.d != nil {
		w.end = v.d.next(v.i)
	}
}

// Next takes the next step.
func (w *Walker) Next() Step {
	d := w.d
	for {
		if n := len(w.open); n > 0 {
			f := &w.open[n-1]
			if w.j == f.end {
				w.open = w.open[:n-1]
				return StepEnd
			}
			if f.obj {
				if !f.value {
					if f.dup && d.keyLater(d.text(w.j), d.next(w.j+1), Value{d: d, i: f.node}) {
						w.j = d.next(w.j + 1) // a member whose key comes again: skipped
						continue
					}
					f.value = true
					w.cur = w.j
					w.j++
					return StepKey
				}
				f.value = false
			}
		} else if w.j >= w.end {
			return StepDone
		}
		w.cur = w.j
		nd := &d.nodes[w.j]
		w.j++
		if nd.kind >= Array {
			w.open = append(w.open, walkFrame{node: w.cur, end: nd.end, obj: nd.kind == Object, dup: nd.flag&flagDup != 0})
		}
		return StepValue
	}
}

// Kind returns the kind of the last value met (String for a key).
func (w *Walker) Kind() Kind { return w.d.nodes[w.cur].kind }

// Text returns the text of the last key or string value met, or the
// literal of the last number met ("" for any other value).
func (w *Walker) Text() string {
	if k := w.d.nodes[w.cur].kind; k != String && k != Number {
		return ""
	}
	return w.d.text(w.cur)
}

// Value returns the last value met (or, after StepKey, the key as a
// string Value of its own).
func (w *Walker) Value() Value { return Value{d: w.d, i: w.cur} }

// Text is a string of a document met by AppendTexts: its text, and
// whether it is an object key.
type Text struct {
	Text string
	Key  bool
}

// AppendTexts appends to dst the strings of v and of everything inside
// it, in document order, each with whether it is an object key: every
// key, and the other strings of at least minLen bytes. Members are met as
// Members yields them (a repeated key only where it last occurs). It is
// one pass over v's nodes, which follows their structure only where a
// key repeats: a quick look at every text of a value.
func (v Value) AppendTexts(dst []Text, minLen int) []Text {
	if v.d == nil {
		return dst
	}
	return v.d.appendTexts(dst, v.i, v.d.next(v.i), minLen)
}

// appendTexts is AppendTexts over nodes [j, end).
func (d *Doc) appendTexts(dst []Text, j, end uint32, minLen int) []Text {
	nodes := d.nodes[:end]
	for j < end {
		nd := &nodes[j]
		switch {
		case nd.kind == String:
			if key := d.isKey(nd); key || int(nd.n) >= minLen {
				dst = append(dst, Text{d.text(j), key})
			}
		case nd.kind == Object && nd.flag&flagDup != 0:
			// Member by member, leaving out those a repeated key hides.
			obj := Value{d: d, i: j}
			k := j + 1
			for range nd.n {
				next := d.next(k + 1)
				if !d.keyLater(d.text(k), next, obj) {
					dst = append(dst, Text{d.text(k), true})
					dst = d.appendTexts(dst, k+1, next, minLen)
				}
				k = next
			}
			j = nd.end
			continue
		}
		j++
	}
	return dst
}

// isKey reports whether the string node j is an object key: in JSON text
// exactly a key's closing quote is followed (after white space) by ':'.
func (d *Doc) isKey(nd *node) bool {
	if i := int(nd.rend); i < len(d.src) && d.src[i] == ':' {
		return true
	}
	for i := int(nd.rend); i < len(d.src); i++ {
		switch d.src[i] {
		case ':':
			return true
		case ' ', '\t', '\n', '\r':
			continue
		}
		return false
	}
	return false
}
