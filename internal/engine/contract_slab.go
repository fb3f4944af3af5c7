package engine

import (
	"encoding/json"
	"unsafe"
)

// valueSlab hands out the pieces of one contract's expected values from
// chunks shared by the contract instead of one allocation each: the
// strings, numbers and arrays of its arguments as interface values, the
// elements of those arrays, and its expected calls. A contract is
// read-only once built, so nothing handed out is written again.
type valueSlab struct {
	strs  []string
	nums  []json.Number
	lists [][]any
	elems []any
	calls []ExpectedCall
	// the sizes of the last chunks, as for cbuilder.
	strChunk, numChunk, listChunk, elemChunk, callChunk int
}

// The type words of the interface values valueSlab makes.
var (
	stringType = typeWord("")
	numberType = typeWord(json.Number(""))
	listType   = typeWord([]any(nil))
)

// typeWord returns the type word of an interface value.
func typeWord(v any) unsafe.Pointer { return (*[2]unsafe.Pointer)(unsafe.Pointer(&v))[0] }

// boxAt returns the interface value of type typ (a type word from
// typeWord) whose data is *p, as the conversion of *p to any would give
// but referring to *p rather than to a copy of it: *p must never be
// written again.
func boxAt(typ, p unsafe.Pointer) any {
	var v any
	w := (*[2]unsafe.Pointer)(unsafe.Pointer(&v))
	w[0], w[1] = typ, p
	return v
}

// slot returns a pointer to a new zero item of *chunk, allocating a new
// chunk (the old one stays with what was handed out from it) when it is
// full.
func slot[T any](chunk *[]T, last *int) *T {
	if len(*chunk) == cap(*chunk) {
		*chunk = make([]T, 0, nextChunk(last, 1))
	}
	*chunk = (*chunk)[:len(*chunk)+1]
	return &(*chunk)[len(*chunk)-1]
}

// str returns s as an interface value (a string).
func (sl *valueSlab) str(s string) any {
	if s == "" {
		return ""
	}
	p := slot(&sl.strs, &sl.strChunk)
	*p = s
	return boxAt(stringType, unsafe.Pointer(p))
}

// num returns n as an interface value (a json.Number).
func (sl *valueSlab) num(n json.Number) any {
	p := slot(&sl.nums, &sl.numChunk)
	*p = n
	return boxAt(numberType, unsafe.Pointer(p))
}

// list returns an array of n elements to fill, and the interface value
// (a []any) that holds it.
func (sl *valueSlab) list(n int) ([]any, any) {
	if n > cap(sl.elems)-len(sl.elems) || sl.elems == nil {
		sl.elems = make([]any, 0, nextChunk(&sl.elemChunk, n))
	}
	at := len(sl.elems)
	sl.elems = sl.elems[:at+n]
	out := sl.elems[at : at+n : at+n]
	p := slot(&sl.lists, &sl.listChunk)
	*p = out
	return out, boxAt(listType, unsafe.Pointer(p))
}

// call returns a new expected call holding ec.
func (sl *valueSlab) call(ec ExpectedCall) *ExpectedCall {
	p := slot(&sl.calls, &sl.callChunk)
	*p = ec
	return p
}
