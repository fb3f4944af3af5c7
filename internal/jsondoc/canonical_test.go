package jsondoc

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

func TestCanonical(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"white space and key order", "{ \"b\" : 1,\n \"a\": [ true , null ] }", `{"a":[true,null],"b":1}`},
		{"numbers as written", `[1.0, 1, 1e3, -0, 12345678901234567890123]`, `[1.0,1,1e3,-0,12345678901234567890123]`},
		{"escapes", `"\u0041\/\u00e9\n\u001f\"\\"`, "\"A/\u00e9\\n\\u001f\\\"\\\\\""},
		{"no html escaping", `"<a>&"`, `"<a>&"`},
		{"nested objects sorted", `{"z":{"y":1,"x":2},"a":{}}`, `{"a":{},"z":{"x":2,"y":1}}`},
		// U+10000 is D800 DC00 in UTF-16, which sorts before U+E000 although
		// its UTF-8 bytes sort after (RFC 8785 section 3.2.3).
		{"utf16 key order", "{\"\ue000\":1,\"\U00010000\":2}", "{\"\U00010000\":2,\"\ue000\":1}"},
		{"prefix key sorts first", `{"ab":1,"a":2}`, `{"a":2,"ab":1}`},
		{"duplicate keys: last wins", `{"a":1,"a":2}`, `{"a":2}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, sum, err := Canonical([]byte(tc.in))
			if err != nil {
				t.Fatalf("Canonical(%q) error: %v", tc.in, err)
			}
			if string(got) != tc.want {
				t.Errorf("Canonical(%q) = %s, want %s", tc.in, got, tc.want)
			}
			want := sha256.Sum256([]byte(tc.want))
			if sum != hex.EncodeToString(want[:]) {
				t.Errorf("Canonical(%q) sha256 = %s, want %x", tc.in, sum, want)
			}
		})
	}
}

func TestCanonicalErrors(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":1} {}`, `[1,]`} {
		if _, _, err := Canonical([]byte(in)); err == nil {
			t.Errorf("Canonical(%q) succeeded, want an error", in)
		}
	}
}
