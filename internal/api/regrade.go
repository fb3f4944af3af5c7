package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
)

// Regrades is what the regrade routes need (issue 6); cmd/server passes in
// *regrade.Service, whose methods of the same names document the exact
// behaviour. Methods return the engine's sentinels (ErrNotFound,
// ErrUnavailable) and, for a target whose body no longer validates, a
// *engine.ValidationError.
type Regrades interface {
	// Create starts a regrade of sel (its ContractName defaulting to name)
	// against version of contract name (0: latest).
	Create(ctx context.Context, projectID int64, name string, version int, sel record.RegradeSelection) (record.Regrade, error)
	// DryRun resolves the target and counts what Create would regrade.
	DryRun(ctx context.Context, projectID int64, name string, version int, sel record.RegradeSelection) (record.ContractRef, int64, error)
	Get(ctx context.Context, projectID int64, id uuid.UUID) (record.Regrade, error)
	Changes(ctx context.Context, projectID int64, id, after uuid.UUID, limit int) ([]record.RegradeChange, error)
	Failures(ctx context.Context, projectID int64, id, after uuid.UUID, limit int) ([]record.RegradeFailure, error)
	Cancel(ctx context.Context, projectID int64, id uuid.UUID) (record.Regrade, error)
	// LatestResults lists originals with their latest verdict.
	LatestResults(ctx context.Context, projectID int64, f record.ResultFilter, after *record.Cursor, limit int) ([]record.LatestResult, error)
	// CompareVersions compares two versions of a contract on the same
	// originals.
	CompareVersions(ctx context.Context, projectID int64, name string, a, b int, f record.ResultFilter) (record.VersionComparison, error)
}

func (s *Server) regradeRoutes(r chi.Router) {
	r.Post("/regrades", s.handle(s.createRegrade))
	r.Get("/regrades/{id}", s.handle(s.getRegrade))
	r.Delete("/regrades/{id}", s.handle(s.cancelRegrade))
	r.Post("/regrades/{id}/cancel", s.handle(s.cancelRegrade))
	r.Get("/regrades/{id}/changes", s.handle(s.listRegradeChanges))
	r.Get("/regrades/{id}/failures", s.handle(s.listRegradeFailures))
	r.Get("/stats/compare", s.handle(s.compareVersions))
}

// regrades returns the configured service, or a 503 problem when the
// server runs without one.
func (s *Server) regrades() (Regrades, error) {
	if s.cfg.Regrades == nil {
		return nil, newError(probUnavailable, "regrades are not enabled on this server")
	}
	return s.cfg.Regrades, nil
}

// regradeRequest is the body of POST /v1/regrades.
type regradeRequest struct {
	// Contract is the target: "name", "name@latest" or "name@N".
	Contract string `json:"contract"`
	// FromContract names the contract whose results are regraded; default
	// the target's name.
	FromContract string `json:"from_contract"`
	// FromVersions selects the versions regraded; default every version
	// but the target.
	FromVersions []int             `json:"from_versions"`
	TaskID       string            `json:"task_id"`
	RunID        string            `json:"run_id"`
	Agent        string            `json:"agent"`
	Labels       map[string]string `json:"labels"`
	// Since and Until are RFC 3339 times, parsed by selection so that a
	// bad one is reported at its pointer.
	Since  *string `json:"since"`
	Until  *string `json:"until"`
	DryRun bool    `json:"dry_run"`
}

// selection checks the request and returns the target and selection.
//
// Errors: 422 invalid-request naming every bad field.
func (req *regradeRequest) selection() (name string, version int, sel record.RegradeSelection, err error) {
	var probs []FieldProblem
	bad := func(ptr, format string, args ...any) {
		probs = append(probs, FieldProblem{Pointer: ptr, Message: fmt.Sprintf(format, args...)})
	}
	if req.Contract == "" {
		bad("/contract", "is required: the target contract, as name or name@version")
	} else if name, version, err = parseRef(req.Contract); err != nil {
		bad("/contract", "%v", err)
	}
	sel = record.RegradeSelection{ContractName: req.FromContract, FromVersions: req.FromVersions,
		TaskID: req.TaskID, RunID: req.RunID, Agent: req.Agent}
	if req.FromContract != "" && !namePattern.MatchString(req.FromContract) {
		bad("/from_contract", "%q is not a contract name (want %s)", req.FromContract, namePattern)
	}
	for _, f := range []struct{ ptr, v string }{{"/task_id", req.TaskID}, {"/run_id", req.RunID}, {"/agent", req.Agent}} {
		if p := textProblem(f.v); p != "" {
			bad(f.ptr, "%s", p)
		}
	}
	for i, v := range req.FromVersions {
		if v < 1 {
			bad(fmt.Sprintf("/from_versions/%d", i), "must be a version number from 1, got %d", v)
		}
	}
	for k, v := range req.Labels {
		if k == "" {
			bad("/labels", "label keys must not be empty")
			continue
		}
		if p := textProblem(k + v); p != "" {
			bad("/labels/"+escapePointer(k), "a label key and value %s", p)
			continue
		}
		sel.Labels = append(sel.Labels, record.LabelFilter{Key: k, Value: v, HasValue: true})
	}
	times := []struct {
		ptr string
		v   *string
		dst *time.Time
	}{{"/since", req.Since, &sel.Since}, {"/until", req.Until, &sel.Until}}
	for _, t := range times {
		if t.v == nil {
			continue
		}
		tm, err := time.Parse(time.RFC3339Nano, *t.v)
		if err != nil {
			bad(t.ptr, "must be an RFC 3339 time such as 2026-11-20T10:00:00Z, got %q", *t.v)
			continue
		}
		*t.dst = tm.UTC()
	}
	if !sel.Since.IsZero() && !sel.Until.IsZero() && !sel.Since.Before(sel.Until) {
		bad("/until", "must be after since")
	}
	if len(probs) > 0 {
		return "", 0, sel, &apiError{kind: probInvalidRequest, detail: "the regrade request has invalid fields", errors: probs}
	}
	return name, version, sel, nil
}

// regradeTargetError gives a target lookup error its problem: 404 naming
// the contract when it does not exist, 422 with pointers when its body no
// longer validates.
func regradeTargetError(err error) error {
	var ve *engine.ValidationError
	switch {
	case errors.Is(err, engine.ErrNotFound):
		return &apiError{kind: probNotFound, detail: err.Error(), errors: []FieldProblem{{Pointer: "/contract", Message: err.Error()}}, cause: err}
	case errors.As(err, &ve) && errors.Is(err, engine.ErrInvalidContract):
		return &apiError{kind: probInvalidContract, detail: "the target contract version no longer validates; register a fixed version",
			errors: fieldErrors("", ve.Errors), cause: err}
	}
	return err
}

// regradeView is the JSON form of a regrade.
type regradeView struct {
	ID             string           `json:"id"`
	State          string           `json:"state"`
	Target         contractRefView  `json:"target"`
	Selection      regradeSelection `json:"selection"`
	Total          int64            `json:"total"`
	Done           int64            `json:"done"`
	Failed         int64            `json:"failed"`
	Progress       float64          `json:"progress"`
	Flips          regradeFlips     `json:"flips"`
	Changed        int64            `json:"changed"`
	MeanScoreDelta float64          `json:"mean_score_delta"`
	Chunks         int              `json:"chunks"`
	ChunksDone     int              `json:"chunks_done"`
	Error          string           `json:"error,omitempty"`
	CreatedAt      time.Time        `json:"created_at"`
	StartedAt      *time.Time       `json:"started_at,omitempty"`
	FinishedAt     *time.Time       `json:"finished_at,omitempty"`
}

type regradeFlips struct {
	PassToFail int64 `json:"pass_to_fail"`
	FailToPass int64 `json:"fail_to_pass"`
}

type regradeSelection struct {
	Contract     string            `json:"contract"`
	FromVersions []int             `json:"from_versions,omitempty"`
	TaskID       string            `json:"task_id,omitempty"`
	RunID        string            `json:"run_id,omitempty"`
	Agent        string            `json:"agent,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Since        *time.Time        `json:"since,omitempty"`
	Until        *time.Time        `json:"until,omitempty"`
	// Before is the snapshot: only results created before it.
	Before time.Time `json:"before"`
}

func viewRegrade(rg record.Regrade) regradeView {
	v := regradeView{
		ID: rg.ID.String(), State: string(rg.State), Target: contractRef(rg.Target),
		Total: rg.Total, Done: rg.Done, Failed: rg.Failed,
		Flips:   regradeFlips{PassToFail: rg.PassToFail, FailToPass: rg.FailToPass},
		Changed: rg.Changed, Chunks: rg.Chunks, ChunksDone: rg.ChunksDone, Error: rg.Error,
		CreatedAt: rg.CreatedAt, StartedAt: rg.StartedAt, FinishedAt: rg.FinishedAt,
	}
	switch {
	case rg.State == record.RegradeCompleted:
		v.Progress = 1
	case rg.Total > 0:
		v.Progress = min(1, float64(rg.Done+rg.Failed)/float64(rg.Total))
	}
	if rg.Done > 0 {
		v.MeanScoreDelta = rg.ScoreDeltaSum / float64(rg.Done)
	}
	sel := rg.Selection
	v.Selection = regradeSelection{Contract: sel.ContractName, FromVersions: sel.FromVersions, TaskID: sel.TaskID,
		RunID: sel.RunID, Agent: sel.Agent, Before: rg.SnapshotAt}
	if len(sel.Labels) > 0 {
		v.Selection.Labels = map[string]string{}
		for _, l := range sel.Labels {
			v.Selection.Labels[l.Key] = l.Value
		}
	}
	if !sel.Since.IsZero() {
		v.Selection.Since = &sel.Since
	}
	if !sel.Until.IsZero() {
		v.Selection.Until = &sel.Until
	}
	return v
}

// regradeDryRunView answers POST /v1/regrades with dry_run.
type regradeDryRunView struct {
	DryRun bool            `json:"dry_run"`
	Target contractRefView `json:"target"`
	Total  int64           `json:"total"`
}

// createRegrade starts a regrade (202 with its state and Location), or
// with dry_run counts what it would regrade (200).
func (s *Server) createRegrade(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.regrades()
	if err != nil {
		return err
	}
	if _, err := mediaType(r, mediaJSON); err != nil {
		return err
	}
	body, err := s.readBody(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		return err
	}
	var req regradeRequest
	if err := decodeStrict(body, &req, ""); err != nil {
		return err
	}
	name, version, sel, err := req.selection()
	if err != nil {
		return err
	}
	// The selection matches stored identifiers as they were redacted, and
	// is stored so itself.
	if err := redactFilter(r.Context(), s.cfg.SecretScanner, &sel.TaskID, &sel.RunID, &sel.Agent, &sel.Labels); err != nil {
		return err
	}
	project := ProjectFrom(r.Context())
	if req.DryRun {
		ref, n, err := svc.DryRun(r.Context(), project, name, version, sel)
		if err != nil {
			return regradeTargetError(err)
		}
		writeJSON(w, mediaJSON, http.StatusOK, regradeDryRunView{DryRun: true, Target: contractRef(ref), Total: n})
		return nil
	}
	rg, err := svc.Create(r.Context(), project, name, version, sel)
	if err != nil {
		return regradeTargetError(err)
	}
	w.Header().Set("Location", "/v1/regrades/"+rg.ID.String())
	writeJSON(w, mediaJSON, http.StatusAccepted, viewRegrade(rg))
	return nil
}

// pathID reads the {id} path parameter of the regrade and run routes.
func pathID(r *http.Request) (uuid.UUID, error) {
	v := chi.URLParam(r, "id")
	id, err := uuid.Parse(v)
	if err != nil {
		return id, paramError("id", "must be a UUID, got %q", v)
	}
	return id, nil
}

// notFoundID turns engine.ErrNotFound into a 404 naming the noun ("regrade",
// "run") and its id; other errors pass through.
func notFoundID(noun string, id uuid.UUID, err error) error {
	if errors.Is(err, engine.ErrNotFound) {
		return &apiError{kind: probNotFound, detail: fmt.Sprintf("no %s %s", noun, id), cause: err}
	}
	return err
}

func (s *Server) getRegrade(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.regrades()
	if err != nil {
		return err
	}
	id, err := pathID(r)
	if err != nil {
		return err
	}
	rg, err := svc.Get(r.Context(), ProjectFrom(r.Context()), id)
	if err != nil {
		return notFoundID("regrade", id, err)
	}
	writeJSON(w, mediaJSON, http.StatusOK, viewRegrade(rg))
	return nil
}

// cancelRegrade serves DELETE /v1/regrades/{id} and POST
// /v1/regrades/{id}/cancel: the regrade stops (results already written
// stay) and is answered in its state after the call.
func (s *Server) cancelRegrade(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.regrades()
	if err != nil {
		return err
	}
	id, err := pathID(r)
	if err != nil {
		return err
	}
	rg, err := svc.Cancel(r.Context(), ProjectFrom(r.Context()), id)
	if err != nil {
		return notFoundID("regrade", id, err)
	}
	writeJSON(w, mediaJSON, http.StatusOK, viewRegrade(rg))
	return nil
}

// regradeCursor is the cursor of the changes and failures pages.
type regradeCursor struct {
	After uuid.UUID `json:"after"`
}

// pageParams reads ?limit= and ?cursor= of the changes and failures pages.
func pageParams(r *http.Request) (after uuid.UUID, limit int, err error) {
	if limit, err = parseLimit(r); err != nil {
		return after, 0, err
	}
	var c regradeCursor
	if err := decodeCursor(r, &c); err != nil {
		return after, 0, err
	}
	return c.After, limit, nil
}

// regradeChangeView is one original whose verdict or grade changed.
type regradeChangeView struct {
	OriginalID string             `json:"original_id"`
	ResultID   string             `json:"result_id"`
	Old        regradeVerdictView `json:"old"`
	New        regradeVerdictView `json:"new"`
	// Flip is pass_to_fail or fail_to_pass; absent when only the grade
	// changed.
	Flip string `json:"flip,omitempty"`
}

type regradeVerdictView struct {
	Version  int            `json:"version,omitempty"`
	Score    float64        `json:"score"`
	Grade    string         `json:"grade"`
	Passed   bool           `json:"passed"`
	TopIssue *rawJSONObject `json:"top_issue"`
}

// rawJSONObject is a stored JSON object passed through as is.
type rawJSONObject []byte

// MarshalJSON implements json.Marshaler.
func (o rawJSONObject) MarshalJSON() ([]byte, error) { return o, nil }

func rawObject(b []byte) *rawJSONObject {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	o := rawJSONObject(b)
	return &o
}

func (s *Server) listRegradeChanges(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.regrades()
	if err != nil {
		return err
	}
	id, err := pathID(r)
	if err != nil {
		return err
	}
	after, limit, err := pageParams(r)
	if err != nil {
		return err
	}
	project := ProjectFrom(r.Context())
	rg, err := svc.Get(r.Context(), project, id)
	if err != nil {
		return notFoundID("regrade", id, err)
	}
	changes, err := svc.Changes(r.Context(), project, id, after, limit+1)
	if err != nil {
		return notFoundID("regrade", id, err)
	}
	out := page[regradeChangeView]{Items: []regradeChangeView{}}
	for i, c := range changes {
		if i == limit {
			out.NextCursor = encodeCursor(regradeCursor{After: changes[i-1].OriginalID})
			break
		}
		v := regradeChangeView{
			OriginalID: c.OriginalID.String(), ResultID: c.ResultID.String(),
			Old: regradeVerdictView{Version: c.OldVersion, Score: c.OldScore, Grade: c.OldGrade, Passed: c.OldPassed, TopIssue: rawObject(c.OldIssue)},
			New: regradeVerdictView{Version: rg.Target.Version, Score: c.NewScore, Grade: c.NewGrade, Passed: c.NewPassed, TopIssue: rawObject(c.NewIssue)},
		}
		switch {
		case c.OldPassed && !c.NewPassed:
			v.Flip = "pass_to_fail"
		case !c.OldPassed && c.NewPassed:
			v.Flip = "fail_to_pass"
		}
		out.Items = append(out.Items, v)
	}
	writeJSON(w, mediaJSON, http.StatusOK, out)
	return nil
}

// regradeFailureView is one original a regrade could not re-evaluate.
type regradeFailureView struct {
	OriginalID string `json:"original_id"`
	Reason     string `json:"reason"`
}

func (s *Server) listRegradeFailures(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.regrades()
	if err != nil {
		return err
	}
	id, err := pathID(r)
	if err != nil {
		return err
	}
	after, limit, err := pageParams(r)
	if err != nil {
		return err
	}
	fails, err := svc.Failures(r.Context(), ProjectFrom(r.Context()), id, after, limit+1)
	if err != nil {
		return notFoundID("regrade", id, err)
	}
	out := page[regradeFailureView]{Items: []regradeFailureView{}}
	for i, f := range fails {
		if i == limit {
			out.NextCursor = encodeCursor(regradeCursor{After: fails[i-1].OriginalID})
			break
		}
		out.Items = append(out.Items, regradeFailureView{OriginalID: f.OriginalID.String(), Reason: f.Reason})
	}
	writeJSON(w, mediaJSON, http.StatusOK, out)
	return nil
}

// latestSummaryView is an evaluation summary of the latest verdict of an
// original (GET /v1/evaluations?latest=true).
type latestSummaryView struct {
	evaluationSummaryView
	// OriginalID is the original result; equal to ID when it was never
	// regraded.
	OriginalID string `json:"original_id"`
}

// listLatestEvaluations serves GET /v1/evaluations?latest=true: original
// results (never regrade results) newest first, each shown by its latest
// verdict. passed and grade filter the latest verdict; the other filters
// the originals; regrades must be include (or absent). An item whose
// latest verdict is a regrade result carries its regrade_of and
// regrade_id.
func (s *Server) listLatestEvaluations(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.regrades()
	if err != nil {
		return err
	}
	if v := r.URL.Query().Get("latest"); v != "true" {
		return paramError("latest", "must be true (or absent), got %q", v)
	}
	f, err := s.filter(r)
	if err != nil {
		return err
	}
	// The listing is of originals, each shown by its latest verdict:
	// excluding regrade results or only them has no meaning here.
	if f.Regrades != "" && f.Regrades != record.RegradesInclude {
		return paramError("regrades", "must be include (or absent) with latest=true, which lists originals each by its latest verdict, got %q", f.Regrades)
	}
	limit, err := parseLimit(r)
	if err != nil {
		return err
	}
	var after *record.Cursor
	if r.URL.Query().Get("cursor") != "" {
		var c resultCursor
		if err := decodeCursor(r, &c); err != nil {
			return err
		}
		after = &record.Cursor{CreatedAt: c.T, ID: c.ID}
	}
	rs, err := svc.LatestResults(r.Context(), ProjectFrom(r.Context()), f, after, limit+1)
	if err != nil {
		return err
	}
	out := page[latestSummaryView]{Items: []latestSummaryView{}}
	for i, lr := range rs {
		if i == limit {
			last := rs[i-1].Original
			out.NextCursor = encodeCursor(resultCursor{T: last.CreatedAt, ID: last.ID})
			break
		}
		out.Items = append(out.Items, latestSummaryView{
			evaluationSummaryView: viewSummary(&lr.Result),
			OriginalID:            lr.Original.ID.String(),
		})
	}
	writeJSON(w, mediaJSON, http.StatusOK, out)
	return nil
}

// compareView answers GET /v1/stats/compare.
type compareView struct {
	Contract   string          `json:"contract"`
	A          compareSideView `json:"a"`
	B          compareSideView `json:"b"`
	Originals  int64           `json:"originals"`
	Flips      regradeFlips    `json:"flips"`
	ScoreDelta float64         `json:"mean_score_delta"`
}

type compareSideView struct {
	Version   int              `json:"version"`
	Passed    int64            `json:"passed"`
	PassRate  float64          `json:"pass_rate"`
	MeanScore float64          `json:"mean_score"`
	Grades    map[string]int64 `json:"grades"`
}

// compareVersions serves GET /v1/stats/compare?contract=name&a=N&b=M: two
// versions of a contract on the same originals (those with a result at
// both, by grading or regrading).
func (s *Server) compareVersions(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.regrades()
	if err != nil {
		return err
	}
	q := r.URL.Query()
	name := q.Get("contract")
	if !namePattern.MatchString(name) {
		return paramError("contract", "must be a contract name (%s), got %q", namePattern, name)
	}
	var versions [2]int
	for i, p := range []string{"a", "b"} {
		v := q.Get(p)
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return paramError(p, "must be a version number from 1, got %q", v)
		}
		versions[i] = n
	}
	f, err := s.filter(r)
	if err != nil {
		return err
	}
	vc, err := svc.CompareVersions(r.Context(), ProjectFrom(r.Context()), name, versions[0], versions[1], f)
	if err != nil {
		return err
	}
	side := func(v int, passed int64, mean float64, grades map[string]int64) compareSideView {
		sv := compareSideView{Version: v, Passed: passed, MeanScore: mean, Grades: grades}
		if vc.Originals > 0 {
			sv.PassRate = float64(passed) / float64(vc.Originals)
		}
		return sv
	}
	writeJSON(w, mediaJSON, http.StatusOK, compareView{
		Contract: name, Originals: vc.Originals,
		A:          side(vc.VersionA, vc.PassedA, vc.MeanScoreA, vc.GradesA),
		B:          side(vc.VersionB, vc.PassedB, vc.MeanScoreB, vc.GradesB),
		Flips:      regradeFlips{PassToFail: vc.PassToFail, FailToPass: vc.FailToPass},
		ScoreDelta: vc.MeanScoreB - vc.MeanScoreA,
	})
	return nil
}
