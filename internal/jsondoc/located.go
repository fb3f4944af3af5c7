package jsondoc

import (
	"encoding/json"
	"reflect"
	"strconv"
)

// At returns the innermost value of v's subtree whose text holds byte
// off of the document (an object's key is held by the object), or v
// itself when no value inside v holds it. It walks down from v, skipping
// the subtrees that end before off: use it for error messages.
func (v Value) At(off int) Value {
	if v.d == nil {
		return v
	}
	d := v.d
	j := v.i
	for {
		nd := &d.nodes[j]
		if nd.kind < Array {
			return Value{d: d, i: j}
		}
		found := false
		for k := j + 1; k < nd.end; k = d.next(k) {
			if nd.kind == Object {
				k++ // the key
			}
			if c := (Value{d: d, i: k}); c.Offset() <= off && off < c.Offset()+len(c.Raw()) {
				j, found = k, true
				break
			}
		}
		if !found {
			return Value{d: d, i: j}
		}
	}
}

// TypeError places te, encoding/json's error for a value of the document
// of root of another JSON type than the Go value it decoded it into, at
// that value: at is the value and msg says what is wrong ("must be a
// number, got string"). base is the byte offset in the document where
// the text encoding/json decoded starts, from which it counts te.Offset
// (root.Offset() for json.Unmarshal of root.Raw(), 0 for a json.Decoder
// over the whole document).
func TypeError(root Value, base int, te *json.UnmarshalTypeError) (at Value, msg string) {
	at = root.At(base + int(te.Offset) - 1)
	return at, "must be " + typeName(te.Type) + ", got " + at.Kind().String()
}

// typeName names what a Go type decodes from: "a number", "an object".
func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an unsigned " + strconv.Itoa(t.Bits()) + "-bit integer"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	case reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return typeName(t.Elem())
	}
	return "a JSON value of type " + t.String()
}
