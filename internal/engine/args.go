package engine

import (
	"bytes"
	"encoding/json"
	"sync/atomic"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// Args are the arguments of an expected call or a forbidden rule: either
// not checked (the zero Args, JSON null) or an object of expected values,
// which may be empty ("expect zero arguments"). As a map (Map), values
// are JSON values (numbers as json.Number, objects map[string]any, arrays
// []any) or Matcher values, at any depth.
//
// Arguments read from a contract document are kept compiled and become a
// map only when Map is first called; arguments built in Go (NewArgs) keep
// their map. Args are read-only and safe for concurrent use; copies share
// one set of arguments.
type Args struct{ a *args }

// args holds one set of arguments: the compiled form (an object node) and
// the map, each made from the other on first use when it was not given.
type args struct {
	cv atomic.Pointer[cval]
	m  atomic.Pointer[map[string]any]
	// doc is the document's object the arguments were read from when
	// they hold no matcher (the zero Value otherwise): its JSON is the
	// map's.
	doc jsondoc.Value
}

// NewArgs returns m as Args: the zero Args (not checked) for a nil map.
// m must not be modified afterwards.
func NewArgs(m map[string]any) Args {
	if m == nil {
		return Args{}
	}
	a := &args{}
	a.m.Store(&m)
	return Args{a: a}
}

// docArgs returns the Args of arguments compiled from a document (cv, an
// object node whose values are those of the document), held in *a; doc
// is the document's object when it holds no matcher, else the zero
// Value.
func docArgs(a *args, cv *cval, doc jsondoc.Value) Args {
	a.cv.Store(cv)
	a.doc = doc
	return Args{a: a}
}

// Checked reports whether the arguments are checked (a is not the zero
// Args).
func (a Args) Checked() bool { return a.a != nil }

// IsZero reports whether a holds no argument: not checked, or an empty
// object (so that a field tagged omitzero is left out as omitempty leaves
// out a nil or empty map).
func (a Args) IsZero() bool { return a.Len() == 0 }

// Len returns the number of arguments (0 when not checked).
func (a Args) Len() int {
	if a.a == nil {
		return 0
	}
	if m := a.a.m.Load(); m != nil {
		return len(*m)
	}
	return len(a.a.cv.Load().keys)
}

// Map returns the arguments as a map, nil when they are not checked. The
// map is made on the first call and shared by every later one and every
// copy of a: it must not be modified.
func (a Args) Map() map[string]any {
	if a.a == nil {
		return nil
	}
	if m := a.a.m.Load(); m != nil {
		return *m
	}
	m := a.a.cv.Load().value().(map[string]any)
	a.a.m.CompareAndSwap(nil, &m)
	return *a.a.m.Load()
}

// Document returns the JSON object the arguments were read from when
// they were read from a document and hold no matcher: its JSON (as
// jsondoc writes it) is exactly Map's, without building the map. It is
// the zero Value otherwise (not checked, built in Go, or holding a
// matcher).
func (a Args) Document() jsondoc.Value {
	if a.a == nil {
		return jsondoc.Value{}
	}
	return a.a.doc
}

// shown returns the arguments as textArena.value renders them: the
// document's object when there is one (rendered without building the
// map), else the map.
func (a Args) shown() any {
	if d := a.Document(); d.Exists() {
		return d
	}
	return a.Map()
}

// compiled returns the arguments compiled, nil when they are not checked;
// arguments built in Go are compiled on the first call.
func (a Args) compiled() *cval {
	if a.a == nil {
		return nil
	}
	if cv := a.a.cv.Load(); cv != nil {
		return cv
	}
	a.a.cv.CompareAndSwap(nil, compileArgs(*a.a.m.Load()))
	return a.a.cv.Load()
}

// same reports whether a and b are the same set of arguments (copies of
// one Args), or both not checked.
func (a Args) same(b Args) bool { return a.a == b.a }

// Equal reports whether a and b hold the same arguments: both not
// checked, or maps that encode to the same JSON.
func (a Args) Equal(b Args) bool {
	if a.a == b.a {
		return true
	}
	if a.a == nil || b.a == nil {
		return false
	}
	x, errX := json.Marshal(a.Map())
	y, errY := json.Marshal(b.Map())
	return errX == nil && errY == nil && string(x) == string(y)
}

// MarshalJSON writes the arguments as an Encoder with SetEscapeHTML(false)
// writes Map() (null when they are not checked): encoding/json escapes
// the text of a Marshaler as its own settings say, so json.Marshal and
// every Encoder write Args as they write the map.
func (a Args) MarshalJSON() ([]byte, error) {
	if d := a.Document(); d.Exists() {
		return d.AppendJSONNoHTML(nil), nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(a.Map()); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads a as json.Unmarshal reads a map[string]any (numbers
// as float64, no matchers): null gives the zero Args.
func (a *Args) UnmarshalJSON(data []byte) error {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*a = NewArgs(m)
	return nil
}

// value returns the expected value a node compiled from a document
// (compileExpected) stands for, as ParseContract's expected values are:
// objects as map[string]any, arrays []any (non-nil), strings, numbers as
// json.Number, booleans, nil, and matchers as their Matcher.
func (e *cval) value() any {
	switch e.op {
	case copObject:
		m := make(map[string]any, len(e.keys))
		for i, k := range e.keys {
			m[k] = e.kids[i].value()
		}
		return m
	case copArray:
		out := make([]any, len(e.kids))
		for i := range e.kids {
			out[i] = e.kids[i].value()
		}
		return out
	case copString:
		return e.s
	case copNumber, copNever:
		return json.Number(e.s)
	case copBool:
		return e.flag
	case copNull:
		return nil
	}
	return e.x.m
}
