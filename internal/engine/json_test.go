package engine

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// decodeSame checks that DecodeJSON gives what decoding with encoding/json
// gives (decodeStd, the decoder DecodeJSON used alone before): an equal
// value, or an error with the same text and location.
func decodeSame(t *testing.T, data []byte) {
	t.Helper()
	got, err := DecodeJSON(data)
	want, wantErr := decodeStd(data)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("DecodeJSON(%q) error = %v, encoding/json error = %v", data, err, wantErr)
	}
	// reflect.DeepEqual first: cmp.Diff is slow on deeply nested values.
	if err != nil {
		if !reflect.DeepEqual(wantErr, err) {
			t.Fatalf("DecodeJSON(%q) error differs from encoding/json's (-std +got):\n%s", data, cmp.Diff(wantErr, err))
		}
		return
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("DecodeJSON(%q) value differs from encoding/json's (-std +got):\n%s", data, cmp.Diff(want, got))
	}
}

func TestDecodeJSONMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		`{"a":[1,-2.5e3,true,false,null],"b":{},"c":[]}`,
		` {"k": 1, "k": 2} `,
		`"\u00e9\ud83d\ude00\ud800x\n"`, "\"a\xffb\"",
		`12345678901234567890123`, `-0`, `[10, 10, "10", "10", 10.0]`,
		"\t\r\n[]\n",
		``, `   `, `{`, `{"a":}`, `{"a":1,}`, `[1 2]`, `01`, `1.`, `-`, `tru`, `nul1`,
		`{} {}`, `{}x`, `1 2`, `"abc`, "\"a\tb\"", `"\x"`, `"\u12G4"`,
		"\uFEFF{}", "{\n  \"a\": é\n}", "[\n1,\n2,\n]",
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
	} {
		decodeSame(t, []byte(s))
	}
}

// FuzzDecodeJSON checks DecodeJSON against encoding/json on arbitrary
// input: equal values, or equal errors.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{
		`{"contract_version":2,"required":[{"tool":"a","args":{"x":{"$regex":"^a"},"n":[1,1,"1"]}}]}`,
		`[{"tool":"a"}]`, `{"a":1}x`, `"\ud800\udc00\ud800"`, "\"\xed\xa0\x80\"", `1.e5`, ` [ ] `, "\uFEFF[]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		decodeSame(t, data)
	})
}
