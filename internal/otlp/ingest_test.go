package otlp_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"

	"github.com/toolscore/toolscore/internal/otlp"
)

// formatTestdata is the trace formats' testdata, whose OpenTelemetry
// traces (hand-written and produced by the real libraries) the
// equality test sends through the receiver.
const formatTestdata = "../engine/format/testdata"

// otelTrace is one trace of a testdata file: the OTLP/JSON exports to
// send (each a JSON object with resourceSpans) and the document to POST
// to /v1/evaluations for comparison.
type otelTrace struct {
	name    string
	traceID string
	exports [][]byte
	doc     []byte
}

// otelTraces finds the OTLP/JSON documents under the format testdata: a
// JSON export, JSON Lines of exports (as a file exporter writes them),
// an array of exports, or spans (one, a list, or JSON Lines). A file of
// one trace is sent as it is (each export record, or its spans wrapped
// in one export) and compared with POSTing the file itself; a file of
// several traces is sent per trace and compared with POSTing that
// trace's spans. Files with a span lacking a valid trace or span id are
// left out (the receiver rejects such spans), and so are documents of
// other shapes.
func otelTraces(t *testing.T) []otelTrace {
	t.Helper()
	var out []otelTrace
	err := filepath.WalkDir(formatTestdata, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "node_modules" || d.Name() == "fuzz" || d.Name() == "errors" {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		if strings.HasSuffix(name, ".expect.json") || (!strings.HasSuffix(name, ".json") && !strings.HasSuffix(name, ".jsonl")) ||
			name == "package.json" || name == "package-lock.json" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(formatTestdata, path)
		out = append(out, splitOTel(rel, data)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// records reads a document as JSON (an array is its elements) or JSON
// Lines.
func records(data []byte) []any {
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err == nil && !dec.More() {
		if arr, ok := v.([]any); ok {
			return arr
		}
		return []any{v}
	}
	var recs []any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		d := json.NewDecoder(bytes.NewReader(line))
		d.UseNumber()
		var r any
		if d.Decode(&r) != nil {
			return nil
		}
		recs = append(recs, r)
	}
	return recs
}

func isHex(v any, n int) bool {
	s, ok := v.(string)
	if !ok || len(s) != 2*n || strings.Trim(s, "0") == "" {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

// splitOTel turns a testdata document into its traces; nil when it is
// not OpenTelemetry in OTLP/JSON (or has spans the receiver rejects).
func splitOTel(name string, data []byte) []otelTrace {
	recs := records(data)
	if len(recs) == 0 {
		return nil
	}
	type span struct {
		rs, ss map[string]any // the span's resource spans and scope spans, without their lists
		s      map[string]any
	}
	var spans []span
	var exportRecs []any
	for _, r := range recs {
		m, ok := r.(map[string]any)
		if !ok {
			return nil
		}
		if rss, ok := m["resourceSpans"].([]any); ok {
			exportRecs = append(exportRecs, m)
			for _, rsv := range rss {
				rs, _ := rsv.(map[string]any)
				sss, _ := rs["scopeSpans"].([]any)
				for _, ssv := range sss {
					ss, _ := ssv.(map[string]any)
					list, _ := ss["spans"].([]any)
					for _, sv := range list {
						s, ok := sv.(map[string]any)
						if !ok {
							return nil
						}
						spans = append(spans, span{rs: rs, ss: ss, s: s})
					}
				}
			}
			continue
		}
		if _, ok := m["spanId"]; ok {
			if _, ok := m["attributes"].([]any); ok {
				spans = append(spans, span{s: m})
				continue
			}
		}
		return nil
	}
	if len(spans) == 0 {
		return nil
	}
	// Hand-written traces may have short ids ("aa", "01"), which OTLP
	// does not allow: they get valid ones derived from them (the same for
	// the same id, so parents stay linked), and the exports as sent are
	// then the document to compare with.
	rewritten := false
	fix := func(m map[string]any, key string, n int) {
		v, ok := m[key]
		if !ok || v == "" || isHex(v, n) {
			return
		}
		sum := sha256.Sum256([]byte(fmt.Sprint(v)))
		m[key] = hex.EncodeToString(sum[:n])
		rewritten = true
	}
	for _, s := range spans {
		fix(s.s, "traceId", 16)
		fix(s.s, "spanId", 8)
		fix(s.s, "parentSpanId", 8)
	}
	var exports [][]byte
	for _, x := range exportRecs {
		b, _ := json.Marshal(x)
		exports = append(exports, b)
	}
	byTrace := map[string][]span{}
	var order []string
	for _, s := range spans {
		if !isHex(s.s["traceId"], 16) || !isHex(s.s["spanId"], 8) {
			return nil
		}
		id := strings.ToLower(s.s["traceId"].(string))
		if byTrace[id] == nil {
			order = append(order, id)
		}
		byTrace[id] = append(byTrace[id], s)
	}
	// wrap builds one export of spans, each in its own resource and
	// scope (the spans' own, without their other spans).
	wrap := func(spans []span) []byte {
		var rss []any
		for _, s := range spans {
			rs := map[string]any{}
			for k, v := range s.rs {
				if k != "scopeSpans" {
					rs[k] = v
				}
			}
			ss := map[string]any{}
			for k, v := range s.ss {
				if k != "spans" {
					ss[k] = v
				}
			}
			ss["spans"] = []any{s.s}
			rs["scopeSpans"] = []any{ss}
			rss = append(rss, rs)
		}
		b, _ := json.Marshal(map[string]any{"resourceSpans": rss})
		return b
	}
	if len(order) == 1 {
		if exports == nil {
			exports = [][]byte{wrap(spans)}
		}
		doc := data
		if rewritten {
			doc = bytes.Join(exports, []byte("\n"))
		}
		return []otelTrace{{name: name, traceID: order[0], exports: exports, doc: doc}}
	}
	var out []otelTrace
	for _, id := range order {
		doc := wrap(byTrace[id])
		out = append(out, otelTrace{name: name + "#" + id, traceID: id, exports: [][]byte{doc}, doc: doc})
	}
	return out
}

// withoutIdentity drops what differs between a stored result and a dry
// run of the same evaluation: id, created_at, stored.
func withoutIdentity(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	delete(m, "id")
	delete(m, "created_at")
	delete(m, "stored")
	return m
}

// TestGradesEqualEvaluations sends every OpenTelemetry trace of the
// format testdata to POST /v1/traces as OTLP/JSON and as protobuf (each
// export request as the file has it, or the spans in one export), waits
// for it to be graded, and checks that the stored result equals POST
// /v1/evaluations of the same OTLP/JSON with the rule's contract:
// everything but the id, the time and "stored". The assembler starts once
// every export is in: some files end their root span before their last
// export, so a pause longer than the quiet period between two exports (a
// loaded machine) would otherwise grade the trace without its last
// spans.
func TestGradesEqualEvaluations(t *testing.T) {
	traces := otelTraces(t)
	// The hand-written traces and the real libraries' must both be there.
	var hand, real int
	for _, tr := range traces {
		if strings.HasPrefix(tr.name, "real"+string(filepath.Separator)) {
			real++
		} else {
			hand++
		}
	}
	if hand < 4 || real < 50 {
		t.Fatalf("found %d hand-written and %d real-library OTLP traces under %s, want at least 4 and 50", hand, real, formatTestdata)
	}
	t.Logf("%d traces (%d from the real libraries)", len(traces), real)
	// One database per encoding: a trace id is graded once.
	envs := map[string]*env{}
	for _, enc := range []string{"json", "protobuf"} {
		e := newHeldEnv(t, otlp.Config{})
		e.contract("flights", "../../examples/contracts/contract.json")
		e.rule("everything", `{"contract": "flights", "grade_without_tool_calls": true, "options": {"min_score": 0.5}}`)
		envs[enc] = e
	}
	for _, enc := range []string{"json", "protobuf"} {
		e, ct := envs[enc], "application/json"
		if enc == "protobuf" {
			ct = "application/x-protobuf"
		}
		// Send every trace, then check each: their quiet periods overlap.
		for _, tr := range traces {
			for i, x := range tr.exports {
				if enc == "protobuf" {
					req, err := otlp.DecodeRequest(x, otlp.JSON)
					if err != nil {
						t.Fatalf("%s: %v", tr.name, err)
					}
					if x, err = proto.Marshal(req); err != nil {
						t.Fatal(err)
					}
				}
				code, h, body := e.do("POST", "/v1/traces", ct, x)
				if code != 200 || h.Get("Content-Type") != ct {
					t.Fatalf("%s: export %d = %d %s: %s", tr.name, i, code, h.Get("Content-Type"), body)
				}
			}
		}
		e.svc.Start()
		for _, tr := range traces {
			t.Run(enc+"/"+tr.name, func(t *testing.T) { checkEqual(t, e, tr) })
		}
	}
}

func checkEqual(t *testing.T, e *env, tr otelTrace) {
	t.Helper()
	st := e.waitFinal(tr.traceID, 0)
	if st.State != "graded" || st.ResultID == "" || st.Rule != "everything" {
		t.Fatalf("trace = %+v, want graded by rule everything", st)
	}
	_, _, stored := e.do("GET", "/v1/evaluations/"+st.ResultID, "", nil)
	req := fmt.Sprintf(`{"contract": "flights", "trace": %s, "min_score": 0.5, "labels": {"otel.trace_id": %q}}`, traceField(tr.doc), tr.traceID)
	code, _, posted := e.do("POST", "/v1/evaluations?store=false", "application/json", []byte(req))
	if code != 200 {
		t.Fatalf("POST /v1/evaluations = %d: %s", code, posted)
	}
	if diff := cmp.Diff(withoutIdentity(t, posted), withoutIdentity(t, stored)); diff != "" {
		t.Errorf("stored result differs from POST /v1/evaluations (-posted +stored):\n%s", diff)
	}
}

// traceField is a document as the trace field of an evaluation request:
// JSON as it is, JSON Lines as a JSON string.
func traceField(doc []byte) string {
	if json.Valid(doc) {
		return string(doc)
	}
	b, _ := json.Marshal(string(doc))
	return string(b)
}
