package api

import (
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// requestCorpus are evaluation request bodies, good and bad, on which
// readRequest must decode what decodeStrict (encoding/json) decodes.
var requestCorpus = []string{
	`{}`,
	`{"contract": {"contract_version": 2, "required": [{"tool": "a"}]}, "trace": {"calls": []}}`,
	`{"gold": [{"tool": "a"}], "trace": "{\"calls\": []}", "format": "plain"}`,
	`{"contract": "flights@2", "trace": [], "task_id": "t-1", "run_id": "r", "agent": "bot", "labels": {"env": "prod", "k": ""}}`,
	`{"contract": "flights", "trace": [], "strict": true, "safety_gate": false, "min_score": 0.75, "weights": {"argument_f1": 2, "selection_accuracy": 0.5}}`,
	`{"contract": "x", "trace": [], "final_answer": "done \u00e9\ud83d\ude00", "forbidden": [{"tool": "rm"}]}`,
	`{"contract": "x", "trace": [], "final_answer": null, "safety_gate": null, "min_score": null, "labels": null, "weights": null, "task_id": null, "strict": null}`,
	`{"contract": "x", "trace": [], "labels": {"a": null}, "weights": {"a": null}}`,
	`{"contract": "x", "task_id": "a", "task_id": "b", "labels": {"a": "1", "a": "2"}}`,
	`{"contract": null, "gold": null, "trace": null, "forbidden": null}`,
	`{"contract": "x", "trace": [], "strict": "yes"}`,
	`{"contract": "x", "trace": [], "task_id": 7}`,
	`{"contract": "x", "trace": [], "final_answer": ["a"]}`,
	`{"contract": "x", "trace": [], "safety_gate": 1}`,
	`{"contract": "x", "trace": [], "labels": []}`,
	`{"contract": "x", "trace": [], "labels": {"a": 1}}`,
	`{"contract": "x", "trace": [], "labels": {"a/b~c": true}}`,
	`{"contract": "x", "trace": [], "weights": {"argument_f1": "high"}}`,
	`{"contract": "x", "trace": [], "weights": 3}`,
	`{"contract": "x", "trace": [], "min_score": "0.5"}`,
	`{"contract": "x", "trace": [], "min_score": 1e999}`,
	`{"contract": "x", "trace": [], "weights": {"a": -1e400}}`,
	`{"contract": "x", "trace": [], "trcae": 1}`,
	`{"contract": "x", "tr\u0061ce": [], "agent": "\u0000"}`,
	`{"contract": "x", "strict": true, "extra": {"deep": [1, 2]}}`,
	`[]`,
	`"x"`,
	`null`,
	`7`,
}

// decodeBoth decodes data with decodeStrict and with parseRequest and
// readRequest.
func decodeBoth(data []byte) (want, got evaluationRequest, werr, gerr error) {
	werr = decodeStrict(data, &want, "")
	v, gerr := parseRequest(data)
	if gerr == nil {
		gerr = readRequest(v, &got)
	}
	return want, got, werr, gerr
}

// sameRequest compares the two decodings: the same fields, or the same
// problem (kind, detail, field problems).
func sameRequest(t *testing.T, data []byte) {
	t.Helper()
	want, got, werr, gerr := decodeBoth(data)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%s: decodeStrict error %v, readRequest error %v", data, werr, gerr)
	}
	if werr != nil {
		w, g := problemFor(werr), problemFor(gerr)
		if w.kind != g.kind {
			t.Fatalf("%s: decodeStrict %s (%s), readRequest %s (%s)", data, w.kind.slug, w.detail, g.kind.slug, g.detail)
		}
		if w.kind == probInvalidJSON {
			return // syntax errors: jsondoc's wording (TestParseRequestSyntax)
		}
		if w.detail != g.detail || !cmp.Equal(w.errors, g.errors) {
			t.Fatalf("%s: decodeStrict %q %v, readRequest %q %v", data, w.detail, w.errors, g.detail, g.errors)
		}
		return
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(evaluationRequest{})); diff != "" {
		t.Fatalf("%s: (-decodeStrict +readRequest):\n%s", data, diff)
	}
}

func TestReadRequest(t *testing.T) {
	for _, doc := range requestCorpus {
		sameRequest(t, []byte(doc))
	}
	// The members read as values are the request's own.
	v, err := parseRequest([]byte(`{"contract": {"required": []}, "trace": [1, 2], "forbidden": [{"tool": "rm"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var req evaluationRequest
	if err := readRequest(v, &req); err != nil {
		t.Fatal(err)
	}
	if req.contract.Pointer() != "/contract" || req.trace.Len() != 2 || req.forbidden.Index(0).Get("tool").Text() != "rm" || req.gold.Exists() {
		t.Errorf("values: contract %q, trace %d elements, forbidden %q, gold %v", req.contract.Pointer(), req.trace.Len(), req.forbidden.Raw(), req.gold.Exists())
	}
}

// TestParseRequestSyntax pins the 400s of bad JSON (the API's detail
// format, jsondoc's place and wording) and the 422s of the JSON layer's
// limits.
func TestParseRequestSyntax(t *testing.T) {
	long := strings.Repeat("1", jsondoc.MaxNumberLen+1)
	deep := strings.Repeat("[", jsondoc.MaxDepth+1) + strings.Repeat("]", jsondoc.MaxDepth+1)
	deeper := strings.Repeat(`{"a":`, 10_500) + "1" + strings.Repeat("}", 10_500)
	deepish := strings.Repeat(`{"a":`, 5_000) + "1" + strings.Repeat("}", 5_000)
	deeperPtr := "/trace" + strings.Repeat("/a", 999)
	for _, tc := range []struct {
		doc, slug, detail string
		errors            []FieldProblem
	}{
		{"{\n  \"trace\": [1,\n  ]}", "invalid-json", "line 3:3 (byte 19): invalid character ']' looking for beginning of value (at /trace/1)", nil},
		{`{"trace": [`, "invalid-json", "line 1:12 (byte 11): unexpected end of JSON input (at /trace)", nil},
		{`{"trace": []} {}`, "invalid-json", "line 1:15 (byte 14): unexpected data after the JSON document", nil},
		{`{"trace": [` + long + `]}`, "invalid-trace", "/trace/0: numeric literal longer than 500 bytes",
			[]FieldProblem{{Pointer: "/trace/0", Message: "numeric literal longer than 500 bytes"}}},
		{`{"min_score": ` + long + `}`, "invalid-request", "/min_score: numeric literal longer than 500 bytes",
			[]FieldProblem{{Pointer: "/min_score", Message: "numeric literal longer than 500 bytes"}}},
		{`{"contract": ` + deep + `}`, "invalid-contract", "", nil},
		// Deeper than encoding/json's own cap (10,000) too: the same 422.
		{`{"trace": ` + deeper + `}`, "invalid-trace", deeperPtr + ": exceeded max depth of 1000 nested arrays and objects",
			[]FieldProblem{{Pointer: deeperPtr, Message: "exceeded max depth of 1000 nested arrays and objects"}}},
		{`{"trace": ` + deepish + `}`, "invalid-trace", deeperPtr + ": exceeded max depth of 1000 nested arrays and objects",
			[]FieldProblem{{Pointer: deeperPtr, Message: "exceeded max depth of 1000 nested arrays and objects"}}},
		// Not JSON past the depth: a 400, located at the depth error.
		{`{"trace": ` + deeper + `} {}`, "invalid-json", "", nil},
		{`{"trace": ` + deeper[:len(deeper)-1] + `}`, "invalid-json", "", nil},
	} {
		_, err := parseRequest([]byte(tc.doc))
		p := problemFor(err)
		if p.kind.slug != tc.slug {
			t.Errorf("%.60s: %s %q, want %s", tc.doc, p.kind.slug, p.detail, tc.slug)
			continue
		}
		if tc.detail != "" && p.detail != tc.detail {
			t.Errorf("%.60s: detail %q, want %q", tc.doc, p.detail, tc.detail)
		}
		if tc.errors != nil && !cmp.Equal(p.errors, tc.errors) {
			t.Errorf("%.60s: errors %v, want %v", tc.doc, p.errors, tc.errors)
		}
	}
}

// FuzzReadRequest compares readRequest with decodeStrict on any document
// both JSON readers accept alike. Three differences are by design and
// skipped: encoding/json matches member names without regard to case
// (readRequest refuses "Trace" as unknown), a member given twice is
// refused by both (TestReadRequest's corpus) but, with another problem
// in the request too, each may report a different one first (jsondoc's
// members are each key's last), and jsondoc's limits refuse some
// documents encoding/json reads (TestParseRequestSyntax).
func FuzzReadRequest(f *testing.F) {
	for _, doc := range requestCorpus {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			// json.Valid also refuses nesting past its cap of 10,000, which
			// parseRequest reads as JSON past jsondoc.MaxDepth: a 422.
			_, err := parseRequest(data)
			if p := problemFor(err); p.kind != probInvalidJSON && !strings.HasSuffix(p.detail, ": exceeded max depth of 1000 nested arrays and objects") {
				t.Fatalf("%q is not JSON; parseRequest = %v, want invalid-json", data, err)
			}
			return
		}
		if !jsondoc.Valid(string(data)) {
			return
		}
		if v, err := jsondoc.Parse(data); err == nil && v.Kind() == jsondoc.Object && (v.Len() != countMembers(v) || foldedName(v)) {
			return // a repeated member, or a name encoding/json matches without regard to case
		}
		sameRequest(t, data)
	})
}

// countMembers counts v's members, repeated names included.
func countMembers(v jsondoc.Value) int {
	n := 0
	jsondoc.ObjectMembers(v.Raw(), func(string, string) bool { n++; return true })
	return n
}

// requestFields are the member names of an evaluation request.
var requestFields = []string{"contract", "gold", "trace", "format", "final_answer", "task_id", "run_id", "agent",
	"labels", "strict", "forbidden", "safety_gate", "weights", "min_score"}

// foldedName reports whether a member name of v is a request field in
// other case, or one that encoding/json's unknown-field error quotes with
// escapes (decodeStrict then reports the escaped text).
func foldedName(v jsondoc.Value) bool {
	for k := range v.Members() {
		if strconv.Quote(k) != `"`+k+`"` {
			return true
		}
		for _, f := range requestFields {
			if k != f && strings.EqualFold(k, f) {
				return true
			}
		}
	}
	return false
}

// TestRequestHashDoc checks that hashing a request from its tape gives
// requestHash's value (stored idempotency keys keep matching).
func TestRequestHashDoc(t *testing.T) {
	r := httptest.NewRequest("POST", "/v1/evaluations", nil)
	for _, doc := range requestCorpus {
		v, err := parseRequest([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := requestHashDoc(r, v), requestHash(r, []byte(doc), mediaJSON); got != want {
			t.Errorf("%s: requestHashDoc %s, requestHash %s", doc, got, want)
		}
	}
}

// TestNumberOutOfRange pins the 422 of a number outside float64's range
// where one is read: both JSON readers say it is not finite.
func TestNumberOutOfRange(t *testing.T) {
	for _, tc := range []struct{ doc, ptr, lit string }{
		{`{"min_score": 1e400}`, "/min_score", "1e400"},
		{`{"weights": {"argument_f1": -1e400}}`, "/weights/argument_f1", "-1e400"},
	} {
		want := []FieldProblem{{Pointer: tc.ptr, Message: "must be a finite number, got " + tc.lit + " (out of float64's range)"}}
		_, _, werr, gerr := decodeBoth([]byte(tc.doc))
		for name, err := range map[string]error{"decodeStrict": werr, "readRequest": gerr} {
			p := problemFor(err)
			if p.kind != probInvalidRequest || p.detail != tc.ptr+": "+want[0].Message || !cmp.Equal(p.errors, want) {
				t.Errorf("%s %s: %s %q %v, want invalid-request %v", name, tc.doc, p.kind.slug, p.detail, p.errors, want)
			}
		}
	}
	b := setup(t, nil)
	p := problemOf(t, b.do(t, "POST", "/v1/evaluations?store=false", `{"contract": `+contractA+`, "trace": [], "min_score": 1e400}`), 422, "invalid-request")
	if p.Detail != "/min_score: must be a finite number, got 1e400 (out of float64's range)" {
		t.Errorf("detail %q", p.Detail)
	}
}
