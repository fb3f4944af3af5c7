package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
)

// fakeRegrades is an in-memory Regrades: one known contract "flights"
// (versions 1 and 2; "broken" no longer validates), regrades by id. It
// records the arguments of the last call.
type fakeRegrades struct {
	regrades map[uuid.UUID]record.Regrade
	changes  []record.RegradeChange
	failures []record.RegradeFailure
	latest   []record.LatestResult
	compare  record.VersionComparison

	lastName    string
	lastVersion int
	lastSel     record.RegradeSelection
	lastAfter   uuid.UUID
	lastLimit   int
	lastFilter  record.ResultFilter
	lastCursor  *record.Cursor
}

var _ Regrades = (*fakeRegrades)(nil)

func newFakeRegrades() *fakeRegrades {
	return &fakeRegrades{regrades: map[uuid.UUID]record.Regrade{}}
}

var flightsV2 = record.ContractRef{Name: "flights", Version: 2, SHA256: strings.Repeat("2", 64), Kind: record.KindContract}

func (f *fakeRegrades) target(name string, version int, sel record.RegradeSelection) (record.ContractRef, error) {
	f.lastName, f.lastVersion, f.lastSel = name, version, sel
	switch {
	case name == "broken":
		return record.ContractRef{}, &engine.ValidationError{Kind: "contract", Errors: []engine.FieldError{{Pointer: "/required", Message: "required must be an array"}}}
	case name != "flights" || version > 2:
		return record.ContractRef{}, fmt.Errorf("contract %s@%d does not exist: %w", name, version, engine.ErrNotFound)
	}
	return flightsV2, nil
}

func (f *fakeRegrades) Create(_ context.Context, projectID int64, name string, version int, sel record.RegradeSelection) (record.Regrade, error) {
	ref, err := f.target(name, version, sel)
	if err != nil {
		return record.Regrade{}, err
	}
	if sel.ContractName == "" {
		sel.ContractName = name
	}
	rg := record.Regrade{ID: uuid.Must(uuid.NewV7()), ProjectID: projectID, State: record.RegradePending, Target: ref,
		Selection: sel, SnapshotAt: t0, ChunkSize: 1000, CreatedAt: t0}
	f.regrades[rg.ID] = rg
	return rg, nil
}

func (f *fakeRegrades) DryRun(_ context.Context, _ int64, name string, version int, sel record.RegradeSelection) (record.ContractRef, int64, error) {
	ref, err := f.target(name, version, sel)
	return ref, 42, err
}

func (f *fakeRegrades) Get(_ context.Context, _ int64, id uuid.UUID) (record.Regrade, error) {
	rg, ok := f.regrades[id]
	if !ok {
		return rg, fmt.Errorf("get regrade: %w", engine.ErrNotFound)
	}
	return rg, nil
}

func (f *fakeRegrades) Changes(_ context.Context, _ int64, id, after uuid.UUID, limit int) ([]record.RegradeChange, error) {
	f.lastAfter, f.lastLimit = after, limit
	if _, ok := f.regrades[id]; !ok {
		return nil, engine.ErrNotFound
	}
	return f.changes[:min(limit, len(f.changes))], nil
}

func (f *fakeRegrades) Failures(_ context.Context, _ int64, id, after uuid.UUID, limit int) ([]record.RegradeFailure, error) {
	f.lastAfter, f.lastLimit = after, limit
	if _, ok := f.regrades[id]; !ok {
		return nil, engine.ErrNotFound
	}
	return f.failures[:min(limit, len(f.failures))], nil
}

func (f *fakeRegrades) Cancel(_ context.Context, _ int64, id uuid.UUID) (record.Regrade, error) {
	rg, ok := f.regrades[id]
	if !ok {
		return rg, engine.ErrNotFound
	}
	if !rg.State.Final() {
		end := t0.Add(time.Minute)
		rg.State, rg.FinishedAt = record.RegradeCancelled, &end
		f.regrades[id] = rg
	}
	return rg, nil
}

func (f *fakeRegrades) LatestResults(_ context.Context, _ int64, fl record.ResultFilter, after *record.Cursor, limit int) ([]record.LatestResult, error) {
	f.lastFilter, f.lastCursor, f.lastLimit = fl, after, limit
	return f.latest[:min(limit, len(f.latest))], nil
}

func (f *fakeRegrades) CompareVersions(_ context.Context, _ int64, name string, a, b int, fl record.ResultFilter) (record.VersionComparison, error) {
	f.lastName, f.lastFilter = name, fl
	vc := f.compare
	vc.ContractName, vc.VersionA, vc.VersionB = name, a, b
	return vc, nil
}

var t0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

func setupRegrades(t *testing.T) (*testBundle, *fakeRegrades) {
	t.Helper()
	fr := newFakeRegrades()
	b := setup(t, func(c *Config) { c.Regrades = fr })
	return b, fr
}

func TestCreateRegrade(t *testing.T) {
	b, fr := setupRegrades(t)
	rec := b.do(t, "POST", "/v1/regrades", `{"contract": "flights@2", "from_versions": [1], "agent": "a",
		"labels": {"env": "prod"}, "since": "2026-11-01T00:00:00Z", "until": "2026-11-02T00:00:00+01:00"}`)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	v := decode[regradeView](t, rec)
	if got := rec.Header().Get("Location"); got != "/v1/regrades/"+v.ID {
		t.Errorf("Location = %q, want /v1/regrades/%s", got, v.ID)
	}
	wantSel := record.RegradeSelection{FromVersions: []int{1}, Agent: "a",
		Labels: []record.LabelFilter{{Key: "env", Value: "prod", HasValue: true}},
		Since:  time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Until: time.Date(2026, 11, 1, 23, 0, 0, 0, time.UTC)}
	if diff := cmp.Diff(wantSel, fr.lastSel); diff != "" || fr.lastName != "flights" || fr.lastVersion != 2 {
		t.Errorf("Create(%s@%d) selection (-want +got):\n%s", fr.lastName, fr.lastVersion, diff)
	}
	if v.State != "pending" || v.Target.Version != 2 || v.Selection.Contract != "flights" || v.Selection.Labels["env"] != "prod" {
		t.Errorf("view = %+v", v)
	}

	// Dry run: counted, nothing created; the target defaults to the latest.
	rec = b.do(t, "POST", "/v1/regrades", `{"contract": "flights", "dry_run": true}`)
	if rec.Code != http.StatusOK || fr.lastVersion != 0 {
		t.Fatalf("dry run: status %d, version %d: %s", rec.Code, fr.lastVersion, rec.Body)
	}
	if got := decode[regradeDryRunView](t, rec); got.Total != 42 || !got.DryRun || got.Target.Version != 2 {
		t.Errorf("dry run = %+v", got)
	}
	if len(fr.regrades) != 1 {
		t.Errorf("regrades after a dry run = %d, want 1", len(fr.regrades))
	}
}

func TestCreateRegradeErrors(t *testing.T) {
	b, _ := setupRegrades(t)
	tests := []struct {
		name, body  string
		contentType string
		status      int
		slug        string
		pointers    []string
	}{
		{"no contract", `{}`, "", 422, "invalid-request", []string{"/contract"}},
		{"bad reference", `{"contract": "flights@x"}`, "", 422, "invalid-request", []string{"/contract"}},
		{"bad fields", `{"contract": "flights", "from_versions": [0, 2], "from_contract": "a b",
			"since": "2026-11-02T00:00:00Z", "until": "2026-11-01T00:00:00Z"}`, "", 422, "invalid-request",
			[]string{"/from_contract", "/from_versions/0", "/until"}},
		{"unknown field", `{"contract": "flights", "target": 2}`, "", 422, "invalid-request", []string{"/target"}},
		{"NUL in text", `{"contract": "flights", "agent": "a\u0000", "task_id": "t\u0000", "labels": {"k": "\u0000"}}`, "", 422, "invalid-request",
			[]string{"/task_id", "/agent", "/labels/k"}},
		{"wrong type", `{"contract": "flights", "from_versions": "1"}`, "", 422, "invalid-request", []string{"/from_versions"}},
		{"bad json", `{"contract": `, "", 400, "invalid-json", nil},
		{"media type", `{"contract": "flights"}`, "text/plain", 415, "unsupported-media-type", nil},
		{"unknown contract", `{"contract": "hotels"}`, "", 404, "not-found", []string{"/contract"}},
		{"unknown version", `{"contract": "flights@7", "dry_run": true}`, "", 404, "not-found", []string{"/contract"}},
		{"invalid target", `{"contract": "broken"}`, "", 422, "invalid-contract", []string{"/required"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var headers []string
			if tc.contentType != "" {
				headers = []string{"Content-Type", tc.contentType}
			}
			rec := b.do(t, "POST", "/v1/regrades", tc.body, headers...)
			if rec.Code != tc.status {
				t.Fatalf("status = %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			p := decode[Problem](t, rec)
			if p.Type != ProblemTypeBase+tc.slug {
				t.Errorf("type = %s, want %s", p.Type, tc.slug)
			}
			var ptrs []string
			for _, e := range p.Errors {
				if e.Pointer != "" {
					ptrs = append(ptrs, e.Pointer)
				}
			}
			if diff := cmp.Diff(tc.pointers, ptrs); diff != "" {
				t.Errorf("pointers (-want +got):\n%s\n%s", diff, rec.Body)
			}
		})
	}
}

func TestGetAndCancelRegrade(t *testing.T) {
	b, fr := setupRegrades(t)
	started, finished := t0.Add(time.Second), t0.Add(time.Minute)
	rg := record.Regrade{ID: uuid.Must(uuid.NewV7()), ProjectID: 1, State: record.RegradeCompleted, Target: flightsV2,
		Selection: record.RegradeSelection{ContractName: "flights"}, SnapshotAt: t0, ChunkSize: 1000,
		Total: 10, Chunks: 1, ChunksDone: 1, Done: 8, Failed: 2, PassToFail: 3, FailToPass: 1, Changed: 5,
		ScoreDeltaSum: -0.4, CreatedAt: t0, StartedAt: &started, FinishedAt: &finished}
	fr.regrades[rg.ID] = rg
	rec := b.do(t, "GET", "/v1/regrades/"+rg.ID.String(), "")
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	want := regradeView{ID: rg.ID.String(), State: "completed", Target: contractRef(flightsV2),
		Selection: regradeSelection{Contract: "flights", Before: t0}, Total: 10, Done: 8, Failed: 2, Progress: 1,
		Flips: regradeFlips{PassToFail: 3, FailToPass: 1}, Changed: 5, MeanScoreDelta: -0.05, Chunks: 1, ChunksDone: 1,
		CreatedAt: t0, StartedAt: &started, FinishedAt: &finished}
	if diff := cmp.Diff(want, decode[regradeView](t, rec)); diff != "" {
		t.Errorf("GET (-want +got):\n%s", diff)
	}

	running := record.Regrade{ID: uuid.Must(uuid.NewV7()), State: record.RegradeRunning, Target: flightsV2, Total: 4, Done: 1, CreatedAt: t0}
	fr.regrades[running.ID] = running
	if v := decode[regradeView](t, b.do(t, "GET", "/v1/regrades/"+running.ID.String(), "")); v.Progress != 0.25 {
		t.Errorf("progress = %v, want 0.25", v.Progress)
	}
	for _, tc := range []struct{ method, path string }{
		{"DELETE", "/v1/regrades/%s"}, {"POST", "/v1/regrades/%s/cancel"},
	} {
		rec := b.do(t, tc.method, fmt.Sprintf(tc.path, running.ID), "")
		if v := decode[regradeView](t, rec); rec.Code != 200 || v.State != "cancelled" || v.FinishedAt == nil {
			t.Errorf("%s: %d %+v", tc.method, rec.Code, v)
		}
	}
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/v1/regrades/nope", 400},
		{"GET", "/v1/regrades/" + uuid.NewString(), 404},
		{"DELETE", "/v1/regrades/" + uuid.NewString(), 404},
		{"POST", "/v1/regrades/" + uuid.NewString() + "/cancel", 404},
		{"GET", "/v1/regrades/" + uuid.NewString() + "/changes", 404},
		{"GET", "/v1/regrades/" + uuid.NewString() + "/failures", 404},
	} {
		if rec := b.do(t, tc.method, tc.path, ""); rec.Code != tc.status {
			t.Errorf("%s %s = %d, want %d: %s", tc.method, tc.path, rec.Code, tc.status, rec.Body)
		}
	}
}

func TestRegradeChangesAndFailures(t *testing.T) {
	b, fr := setupRegrades(t)
	rg := record.Regrade{ID: uuid.Must(uuid.NewV7()), State: record.RegradeCompleted, Target: flightsV2, CreatedAt: t0}
	fr.regrades[rg.ID] = rg
	ids := []uuid.UUID{uuid.MustParse("00000000-0000-0000-0000-000000000001"), uuid.MustParse("00000000-0000-0000-0000-000000000002")}
	res := uuid.MustParse("00000000-0000-0000-0000-0000000000aa")
	issue := json.RawMessage(`{"kind":"missing-call","severity":"high","tool":"book","problem":"p","fix":"f","calls":[]}`)
	fr.changes = []record.RegradeChange{
		{OriginalID: ids[0], ResultID: res, OldVersion: 1, OldScore: 1, NewScore: 0.5, OldGrade: "A", NewGrade: "F", OldPassed: true, NewIssue: issue},
		{OriginalID: ids[1], ResultID: res, OldVersion: 1, OldScore: 0.85, NewScore: 0.7, OldGrade: "B", NewGrade: "C"},
	}
	rec := b.do(t, "GET", "/v1/regrades/"+rg.ID.String()+"/changes?limit=1", "")
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	got := decode[map[string]any](t, rec)
	want := map[string]any{
		"items": []any{map[string]any{
			"original_id": ids[0].String(), "result_id": res.String(), "flip": "pass_to_fail",
			"old": map[string]any{"version": 1.0, "score": 1.0, "grade": "A", "passed": true, "top_issue": nil},
			"new": map[string]any{"version": 2.0, "score": 0.5, "grade": "F", "passed": false,
				"top_issue": map[string]any{"kind": "missing-call", "severity": "high", "tool": "book", "problem": "p", "fix": "f", "calls": []any{}}},
		}},
		"next_cursor": encodeCursor(regradeCursor{After: ids[0]}),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes page (-want +got):\n%s", diff)
	}
	if fr.lastLimit != 2 {
		t.Errorf("store asked for %d, want limit+1", fr.lastLimit)
	}
	next := got["next_cursor"].(string)
	rec = b.do(t, "GET", "/v1/regrades/"+rg.ID.String()+"/changes?cursor="+next, "")
	if rec.Code != 200 || fr.lastAfter != ids[0] {
		t.Errorf("second page: %d, after %s", rec.Code, fr.lastAfter)
	}
	if rec := b.do(t, "GET", "/v1/regrades/"+rg.ID.String()+"/changes?cursor=zz", ""); rec.Code != 400 {
		t.Errorf("bad cursor = %d, want 400", rec.Code)
	}

	fr.failures = []record.RegradeFailure{{OriginalID: ids[1], Reason: "trace_calls: not an array"}}
	rec = b.do(t, "GET", "/v1/regrades/"+rg.ID.String()+"/failures", "")
	wantF := page[regradeFailureView]{Items: []regradeFailureView{{OriginalID: ids[1].String(), Reason: "trace_calls: not an array"}}}
	if diff := cmp.Diff(wantF, decode[page[regradeFailureView]](t, rec)); rec.Code != 200 || diff != "" {
		t.Errorf("failures %d (-want +got):\n%s", rec.Code, diff)
	}
}

func TestLatestAndCompare(t *testing.T) {
	b, fr := setupRegrades(t)
	orig := uuid.MustParse("00000000-0000-0000-0000-000000000001")
	newer := uuid.MustParse("00000000-0000-0000-0000-000000000002")
	fr.latest = []record.LatestResult{
		{Original: record.Cursor{CreatedAt: t0, ID: orig}, Result: record.ResultSummary{ID: newer, CreatedAt: t0.Add(time.Hour),
			Contract: flightsV2, Format: "plain", Score: 0.5, Grade: "F", MinScore: 0.9, SafetyGate: true}},
		{Original: record.Cursor{CreatedAt: t0.Add(-time.Hour), ID: newer}},
	}
	rec := b.do(t, "GET", "/v1/evaluations?latest=true&passed=false&agent=a&limit=1", "")
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	got := decode[page[latestSummaryView]](t, rec)
	if len(got.Items) != 1 || got.Items[0].OriginalID != orig.String() || got.Items[0].ID != newer.String() || got.Items[0].Contract.Version != 2 {
		t.Errorf("latest page = %+v", got)
	}
	if got.NextCursor != encodeCursor(resultCursor{T: t0, ID: orig}) {
		t.Errorf("next cursor is not the original's position: %s", got.NextCursor)
	}
	if fr.lastFilter.Agent != "a" || fr.lastFilter.Passed == nil || *fr.lastFilter.Passed || fr.lastLimit != 2 {
		t.Errorf("filter = %+v, limit %d", fr.lastFilter, fr.lastLimit)
	}
	if rec := b.do(t, "GET", "/v1/evaluations?latest=false", ""); rec.Code != 400 {
		t.Errorf("latest=false = %d, want 400", rec.Code)
	}

	fr.compare = record.VersionComparison{Originals: 4, PassedA: 4, PassedB: 1, MeanScoreA: 1, MeanScoreB: 0.75, PassToFail: 3,
		GradesA: map[string]int64{"A": 4, "B": 0, "C": 0, "D": 0, "F": 0}, GradesB: map[string]int64{"A": 1, "B": 0, "C": 3, "D": 0, "F": 0}}
	rec = b.do(t, "GET", "/v1/stats/compare?contract=flights&a=1&b=2&agent=x", "")
	if rec.Code != 200 {
		t.Fatalf("compare status %d: %s", rec.Code, rec.Body)
	}
	want := compareView{Contract: "flights", Originals: 4, Flips: regradeFlips{PassToFail: 3}, ScoreDelta: -0.25,
		A: compareSideView{Version: 1, Passed: 4, PassRate: 1, MeanScore: 1, Grades: fr.compare.GradesA},
		B: compareSideView{Version: 2, Passed: 1, PassRate: 0.25, MeanScore: 0.75, Grades: fr.compare.GradesB}}
	if diff := cmp.Diff(want, decode[compareView](t, rec)); diff != "" || fr.lastFilter.Agent != "x" {
		t.Errorf("compare (-want +got):\n%s", diff)
	}
	for _, q := range []string{"contract=flights&a=1", "contract=a@b&a=1&b=2", "contract=flights&a=0&b=2", "contract=flights&a=1&b=x"} {
		if rec := b.do(t, "GET", "/v1/stats/compare?"+q, ""); rec.Code != 400 {
			t.Errorf("compare?%s = %d, want 400", q, rec.Code)
		}
	}
}

func TestRegradesDisabled(t *testing.T) {
	b := setup(t, nil)
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/v1/regrades", `{"contract": "flights"}`},
		{"GET", "/v1/regrades/" + uuid.NewString(), ""},
		{"GET", "/v1/evaluations?latest=true", ""},
		{"GET", "/v1/stats/compare?contract=flights&a=1&b=2", ""},
	} {
		rec := b.do(t, tc.method, tc.path, tc.body)
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("%s %s = %d, want 503", tc.method, tc.path, rec.Code)
		}
	}
}
