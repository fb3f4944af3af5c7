package api

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/record"
)

var (
	linkOriginal = uuid.MustParse("0193c6a0-5b1e-7c3a-9d2f-3e1f2a4b5c6d")
	linkRegrade  = uuid.MustParse("0193c6a1-0000-7000-8000-000000000001")
	linkResult   = uuid.MustParse("0193c6a2-0000-7000-8000-0000000000aa")
)

// TestAppendEvaluationRegradeLinkExact pins the bytes of a regrade
// result's view: the link right after created_at, byte-identical to
// encoding/json, and absent from an original's view.
func TestAppendEvaluationRegradeLinkExact(t *testing.T) {
	created := time.Date(2026, 11, 20, 10, 0, 0, 123456000, time.UTC)
	v := evaluationView{
		ID: linkResult.String(), CreatedAt: &created, Stored: true,
		RegradeOf: linkOriginal.String(), RegradeID: linkRegrade.String(),
		Contract: contractRefView{Name: "flights", Version: 2, SHA256: "ab", Kind: "contract"},
		Format:   "plain", Score: 1, Grade: "A", Passed: true, MinScore: 0.95, SafetyGate: true,
		Options: json.RawMessage(`{}`), Metrics: json.RawMessage(`{}`), ExpectedCalls: json.RawMessage(`[]`),
		TraceCalls: json.RawMessage(`[]`), ScoredCalls: json.RawMessage(`[]`), ScoredIndexes: json.RawMessage(`[]`),
		Checks: json.RawMessage(`{}`), Issues: json.RawMessage(`[]`),
	}
	const want = `{"id":"0193c6a2-0000-7000-8000-0000000000aa","created_at":"2026-11-20T10:00:00.123456Z",` +
		`"regrade_of":"0193c6a0-5b1e-7c3a-9d2f-3e1f2a4b5c6d","regrade_id":"0193c6a1-0000-7000-8000-000000000001",` +
		`"stored":true,"contract":{"name":"flights","version":2,"sha256":"ab","kind":"contract"},"format":"plain",` +
		`"score":1,"grade":"A","passed":true,"min_score":0.95,"safety_gate":true,"options":{},"metrics":{},` +
		`"expected_calls":[],"trace_calls":[],"scored_calls":[],"scored_indexes":[],"final_answer":null,"checks":{},"issues":[]}`
	if got := string(v.appendJSON(nil)); got != want {
		t.Errorf("appendJSON =\n%s\nwant\n%s", got, want)
	}
	if std, err := json.Marshal(plainView(v)); err != nil || string(std) != want {
		t.Errorf("json.Marshal = %s, %v; want the same bytes", std, err)
	}
	v.RegradeOf, v.RegradeID = "", ""
	got := string(v.appendJSON(nil))
	if strings.Contains(got, "regrade_") {
		t.Errorf("an original's view holds a regrade link: %s", got)
	}
	if std, _ := json.Marshal(plainView(v)); string(std) != got {
		t.Errorf("original: appendJSON = %s, json.Marshal = %s", got, std)
	}
}

// keysOf returns the top-level keys of a JSON object, sorted.
func keysOf(t *testing.T, b []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// storeRegradeResult puts a regrade result of original into the fake
// store, as the regrade service writes it.
func storeRegradeResult(b *testBundle, original record.Result) record.Result {
	r := original
	r.ID, r.CreatedAt = linkResult, original.CreatedAt.Add(time.Hour)
	r.Contract = record.ContractRef{Name: "flights", Version: 2, SHA256: strings.Repeat("2", 64), Kind: record.KindContract}
	r.RegradeOf, r.RegradeID = original.ID, linkRegrade
	b.store.mu.Lock()
	defer b.store.mu.Unlock()
	b.store.results[r.ID] = r
	b.store.order = append(b.store.order, r.ID)
	return r
}

func TestRegradeLinkInViews(t *testing.T) {
	b := setup(t, nil)
	// POST answers are unchanged: no link.
	rec := b.do(t, "POST", "/v1/evaluations", body(`"gold":`+goldList, `"trace":`+traceHalf, `"agent":"hammer"`))
	if rec.Code != 201 {
		t.Fatalf("POST = %d %s", rec.Code, rec.Body)
	}
	postKeys := keysOf(t, rec.Body.Bytes())
	if slices.Contains(postKeys, "regrade_of") || slices.Contains(postKeys, "regrade_id") {
		t.Errorf("POST answer keys = %v, want no regrade link", postKeys)
	}
	origID := uuid.MustParse(decode[evaluationView](t, rec).ID)
	orig, err := b.store.GetResult(t.Context(), record.DefaultProject, origID)
	if err != nil {
		t.Fatal(err)
	}
	rec = b.do(t, "POST", "/v1/evaluations/batch", "["+body(`"gold":`+goldList, `"trace":`+traceHalf)+"]")
	if rec.Code != 200 || strings.Contains(rec.Body.String(), "regrade_") {
		t.Errorf("batch = %d %s; want 200 without a regrade link", rec.Code, rec.Body)
	}
	regraded := storeRegradeResult(b, orig)

	// GET of the regrade result carries the link; of the original not.
	rec = b.do(t, "GET", "/v1/evaluations/"+regraded.ID.String(), "")
	got := decode[evaluationView](t, rec)
	if rec.Code != 200 || got.RegradeOf != origID.String() || got.RegradeID != linkRegrade.String() || got.ID != linkResult.String() {
		t.Errorf("GET regrade result = %d: regrade_of %q, regrade_id %q, id %q; want %s, %s, %s",
			rec.Code, got.RegradeOf, got.RegradeID, got.ID, origID, linkRegrade, linkResult)
	}
	rec = b.do(t, "GET", "/v1/evaluations/"+origID.String(), "")
	if diff := cmp.Diff(postKeys, keysOf(t, rec.Body.Bytes())); rec.Code != 200 || diff != "" {
		t.Errorf("GET original = %d, keys (-POST +GET):\n%s", rec.Code, diff)
	}

	// The list: newest (the regrade result) first, with its link; the
	// originals without.
	rec = b.do(t, "GET", "/v1/evaluations", "")
	var pg struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &pg); err != nil || len(pg.Items) != 3 {
		t.Fatalf("list = %s, %v; want 3 items", rec.Body, err)
	}
	var first evaluationSummaryView
	if err := json.Unmarshal(pg.Items[0], &first); err != nil {
		t.Fatal(err)
	}
	want := evaluationSummaryView{ID: linkResult.String(), CreatedAt: regraded.CreatedAt,
		RegradeOf: origID.String(), RegradeID: linkRegrade.String(),
		Contract: contractRefView{Name: "flights", Version: 2, SHA256: strings.Repeat("2", 64), Kind: "contract"},
		Agent:    "hammer", Format: orig.Format, Score: orig.Score, Grade: orig.Grade, Passed: orig.Passed,
		MinScore: orig.MinScore, SafetyGate: orig.SafetyGate}
	if diff := cmp.Diff(want, first); diff != "" {
		t.Errorf("regrade result's list item (-want +got):\n%s", diff)
	}
	for i, item := range pg.Items[1:] {
		if k := keysOf(t, item); slices.Contains(k, "regrade_of") || slices.Contains(k, "regrade_id") {
			t.Errorf("original item %d keys = %v, want no regrade link", i+1, k)
		}
	}
}

func TestRegradesFilterParam(t *testing.T) {
	b, fr := setupRegrades(t)
	for _, tc := range []struct {
		query string
		want  record.RegradesFilter
	}{
		{"", ""},
		{"regrades=include", record.RegradesInclude},
		{"regrades=exclude", record.RegradesExclude},
		{"regrades=only", record.RegradesOnly},
		{"regrades=", ""},
	} {
		for _, path := range []string{"/v1/evaluations", "/v1/stats"} {
			b.store.lastFilter = record.ResultFilter{Regrades: "unset"}
			rec := b.do(t, "GET", path+"?agent=hammer&"+tc.query, "")
			if rec.Code != 200 {
				t.Errorf("GET %s?%s = %d %s", path, tc.query, rec.Code, rec.Body)
				continue
			}
			if want := (record.ResultFilter{Agent: "hammer", Regrades: tc.want}); !cmp.Equal(want, b.store.lastFilter) {
				t.Errorf("GET %s?%s: filter %+v, want %+v", path, tc.query, b.store.lastFilter, want)
			}
		}
	}
	for _, target := range []string{
		"/v1/evaluations?regrades=none", "/v1/stats?regrades=none", "/v1/stats?group_by=agent&regrades=INCLUDE",
	} {
		p := problemOf(t, b.do(t, "GET", target, ""), 400, "invalid-parameter")
		v := target[strings.LastIndex(target, "=")+1:]
		want := []FieldProblem{{Parameter: "regrades", Message: `must be include, exclude or only, got "` + v + `"`}}
		if diff := cmp.Diff(want, p.Errors); diff != "" || p.Detail != "regrades: "+want[0].Message {
			t.Errorf("GET %s: detail %q, errors (-want +got):\n%s", target, p.Detail, diff)
		}
	}
	// /v1/stats/compare does not take it.
	p := problemOf(t, b.do(t, "GET", "/v1/stats/compare?contract=flights&a=1&b=2&regrades=exclude", ""), 400, "invalid-parameter")
	if len(p.Errors) != 1 || p.Errors[0].Parameter != "regrades" {
		t.Errorf("compare?regrades errors = %+v", p.Errors)
	}

	// latest=true lists originals by their latest verdict: only include
	// (or no regrades) is accepted, and a latest verdict that is a
	// regrade result shows its link.
	fr.latest = []record.LatestResult{
		{Original: record.Cursor{CreatedAt: t0, ID: linkOriginal}, Result: record.ResultSummary{ID: linkResult, CreatedAt: t0.Add(time.Hour),
			Contract: flightsV2, Format: "plain", Score: 0.9, Grade: "A", MinScore: 0.95, SafetyGate: true,
			RegradeOf: linkOriginal, RegradeID: linkRegrade}},
		{Original: record.Cursor{CreatedAt: t0.Add(-time.Hour), ID: linkRegrade}, Result: record.ResultSummary{ID: linkRegrade,
			CreatedAt: t0.Add(-time.Hour), Contract: flightsV2, Format: "plain", Score: 1, Grade: "A", Passed: true, MinScore: 0.95}},
	}
	for _, q := range []string{"latest=true", "latest=true&regrades=include"} {
		rec := b.do(t, "GET", "/v1/evaluations?"+q, "")
		if rec.Code != 200 {
			t.Fatalf("%s = %d %s", q, rec.Code, rec.Body)
		}
		got := decode[page[latestSummaryView]](t, rec)
		if len(got.Items) != 2 {
			t.Fatalf("%s: %d items, want 2", q, len(got.Items))
		}
		if it := got.Items[0]; it.OriginalID != linkOriginal.String() || it.RegradeOf != linkOriginal.String() || it.RegradeID != linkRegrade.String() {
			t.Errorf("%s: regraded item = %+v; want regrade_of = original_id = %s, regrade_id %s", q, it, linkOriginal, linkRegrade)
		}
		if it := got.Items[1]; it.RegradeOf != "" || it.RegradeID != "" || it.OriginalID != it.ID {
			t.Errorf("%s: never-regraded item = %+v; want no link, original_id = id", q, it)
		}
	}
	for _, v := range []string{"exclude", "only"} {
		p := problemOf(t, b.do(t, "GET", "/v1/evaluations?latest=true&regrades="+v, ""), 400, "invalid-parameter")
		want := []FieldProblem{{Parameter: "regrades",
			Message: `must be include (or absent) with latest=true, which lists originals each by its latest verdict, got "` + v + `"`}}
		if diff := cmp.Diff(want, p.Errors); diff != "" {
			t.Errorf("latest=true&regrades=%s errors (-want +got):\n%s", v, diff)
		}
	}
}
