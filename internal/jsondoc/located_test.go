package jsondoc

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestAt checks the value At finds for every byte of a document: the
// innermost value whose text holds it, the object for a key, the root
// for white space around it.
func TestAt(t *testing.T) {
	const doc = ` {"a": [1, "xy", {"b": null}], "c": true} `
	root, err := ParseString(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{0: "", 1: "", 2: "", 6: "", 7: "/a", 8: "/a/0", 9: "/a", 11: "/a/1", 14: "/a/1", 15: "/a", 17: "/a/2", 18: "/a/2", 23: "/a/2/b", 26: "/a/2/b", 27: "/a/2", 28: "/a", 36: "/c", 39: "/c", 40: "", 41: ""}
	for off, ptr := range want {
		if got := root.At(off).Pointer(); got != ptr {
			t.Errorf("At(%d) (%q) = %q, want %q", off, doc[off:], got, ptr)
		}
	}
	if got := (Value{}).At(3); got.Exists() {
		t.Errorf("the zero Value's At = %v", got)
	}
}

// TestTypeError checks the value and the words TypeError gives for
// encoding/json's type errors, decoded from the value's text and from
// the whole document.
func TestTypeError(t *testing.T) {
	type doc struct {
		N     float64            `json:"n"`
		Items []struct{ ID int } `json:"items"`
		U     uint32             `json:"u"`
		B     []byte             `json:"b"`
		M     map[string]string  `json:"m"`
		P     *struct{ X bool }  `json:"p"`
	}
	for _, tc := range []struct{ text, ptr, msg string }{
		{`{"n": "1"}`, "/n", "must be a number, got string"},
		{"{\n  \"items\": [{\"ID\": 1}, {\"ID\": [2]}]\n}", "/items/1/ID", "must be an integer, got array"},
		{`{"items": {}}`, "/items", "must be an array, got object"},
		{`{"u": -1}`, "/u", "must be an unsigned 32-bit integer, got number"},
		{`{"b": 5}`, "/b", "must be a base64 string, got number"},
		{`{"m": {"k": 1}}`, "/m/k", "must be a string, got number"},
		{`{"p": {"X": "yes"}}`, "/p/X", "must be true or false, got string"},
		{`[]`, "", "must be an object, got array"},
	} {
		root, err := ParseString("  " + tc.text)
		if err != nil {
			t.Fatal(err)
		}
		var te *json.UnmarshalTypeError
		if err := json.Unmarshal([]byte(root.Raw()), new(doc)); !errors.As(err, &te) {
			t.Fatalf("%s: %v", tc.text, err)
		}
		if at, msg := TypeError(root, root.Offset(), te); at.Pointer() != tc.ptr || msg != tc.msg {
			t.Errorf("%s: %q %q, want %q %q", tc.text, at.Pointer(), msg, tc.ptr, tc.msg)
		}
		err = json.NewDecoder(strings.NewReader(root.Doc().Source())).Decode(new(doc))
		if !errors.As(err, &te) {
			t.Fatalf("%s: %v", tc.text, err)
		}
		if at, msg := TypeError(root, 0, te); at.Pointer() != tc.ptr || msg != tc.msg {
			t.Errorf("%s, decoder: %q %q, want %q %q", tc.text, at.Pointer(), msg, tc.ptr, tc.msg)
		}
	}
}
