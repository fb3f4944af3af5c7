package api

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/auth"
	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"github.com/toolscore/toolscore/internal/otlp"
	"github.com/toolscore/toolscore/internal/record"
)

// OTLP is the OpenTelemetry ingest the API serves (internal/otlp.Service):
// POST /v1/traces, the trace states and the grading rule registry.
type OTLP interface {
	// Export serves one OTLP/HTTP export request for a project, writing
	// its own OTLP response.
	Export(w http.ResponseWriter, r *http.Request, projectID int64)
	GetTrace(ctx context.Context, projectID int64, id otlp.TraceID) (record.OTLPTrace, error)
	CreateRule(ctx context.Context, r record.GradingRule) (record.GradingRule, bool, error)
	GetRule(ctx context.Context, projectID int64, name string, version int) (record.GradingRule, error)
	ListRuleVersions(ctx context.Context, projectID int64, name string, after, limit int) ([]record.GradingRule, error)
	ListRules(ctx context.Context, projectID int64, after string, limit int) ([]record.GradingRule, error)
	RegradeTraces(ctx context.Context, q record.TraceRequeue) ([]record.ClosedTrace, error)
}

// probInvalidRule is a grading rule document that does not validate.
var probInvalidRule = problemKind{"invalid-rule", "Invalid grading rule", http.StatusUnprocessableEntity}

// errNoOTLP answers the ingest routes of a server built without it.
var errNoOTLP = &apiError{kind: probBusy, detail: "OpenTelemetry ingest is not configured on this server"}

func (s *Server) otlpRoutes(r chi.Router) {
	r.Post("/traces", s.exportTraces)
	r.Post("/traces/regrade", s.handle(s.regradeTraces))
	r.Get("/traces/{trace_id}", s.handle(s.getTrace))
	r.Get("/rules", s.handle(s.listRules))
	r.Post("/rules/{name}/versions", s.handle(s.createRule))
	r.Get("/rules/{name}/versions", s.handle(s.listRuleVersions))
	r.Get("/rules/{name}/versions/{version}", s.handle(s.getRule))
}

// exportTraces is POST /v1/traces, the OTLP/HTTP trace receiver, for an
// ingest key (Authorization: Bearer, as OTEL_EXPORTER_OTLP_HEADERS sends
// it). Past authentication its answers follow the OTLP specification
// (internal/otlp.Service.Export), not problem+json.
func (s *Server) exportTraces(w http.ResponseWriter, r *http.Request) {
	if err := s.authorize(r); err != nil {
		s.writeError(w, r, err) // 401 and 403 are problem+json, as on every route
		return
	}
	if s.cfg.OTLP == nil {
		s.writeError(w, r, errNoOTLP)
		return
	}
	s.cfg.OTLP.Export(w, r, ProjectFrom(r.Context()))
}

// Grade grades one evaluation request body (the JSON of POST
// /v1/evaluations) for a project exactly as that route does with
// store=true (the same decoding, registry contract resolution, worker
// pool and result encoding), waiting for room in the pool, and returns
// the result to store under id and its metrics counted. It stores
// nothing. internal/otlp grades assembled traces with it, so that their
// results equal POSTed ones.
//
// Errors: otlp.ErrRejected (wrapped, with the problem's detail) for what
// the API answers 4xx other than 429 (an unknown contract, an unreadable
// trace, invalid options); any other error is transient (the database
// unavailable, the evaluation timeout, shutdown, ctx ending).
func (s *Server) Grade(ctx context.Context, projectID int64, body []byte, id uuid.UUID) (*record.Result, error) {
	ctx = auth.NewContext(ctx, auth.Principal{ProjectID: projectID}) // for the registry lookups
	var res *record.Result
	in, err := decodeEvaluation(body)
	if err == nil {
		err = s.resolveContract(ctx, in)
	}
	if err == nil {
		err = s.pool.DoWait(ctx, func(ctx context.Context) error {
			var err error
			res, err = s.evaluate(ctx, in, projectID, id)
			return err
		})
	}
	if err != nil {
		s.countError(err)
		ae := problemFor(err)
		if st := ae.kind.status; st >= 400 && st < 500 && st != http.StatusTooManyRequests {
			detail := ae.detail
			if len(ae.errors) > 0 && ae.errors[0].Message != detail {
				detail = fmt.Sprintf("%s (%s: %s)", detail, ptrOrRoot(ae.errors[0].Pointer), ae.errors[0].Message)
			}
			return nil, fmt.Errorf("%w: %s: %s", otlp.ErrRejected, ae.kind.slug, detail)
		}
		return nil, err
	}
	return res, nil
}

// traceView is the JSON form of an OpenTelemetry trace's assembly state
// (GET /v1/traces/{trace_id}).
type traceView struct {
	TraceID     string     `json:"trace_id"`
	State       string     `json:"state"`
	Revision    int        `json:"revision"`
	Spans       int        `json:"spans"`
	LateSpans   int        `json:"late_spans"`
	RootEnded   bool       `json:"root_ended"`
	Incomplete  bool       `json:"incomplete"`
	FirstSeen   time.Time  `json:"first_seen"`
	LastSeen    time.Time  `json:"last_seen"`
	ClosedAt    *time.Time `json:"closed_at,omitempty"`
	FinishedAt  *time.Time `json:"finished_at,omitempty"`
	Rule        string     `json:"rule,omitempty"`
	RuleVersion int        `json:"rule_version,omitempty"`
	ResultID    string     `json:"result_id,omitempty"`
	Reason      string     `json:"reason,omitempty"`
}

func (s *Server) getTrace(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.OTLP == nil {
		return errNoOTLP
	}
	raw := chi.URLParam(r, "trace_id")
	id, err := otlp.ParseTraceID(raw)
	if err != nil {
		return paramError("trace_id", "%v", err)
	}
	t, err := s.cfg.OTLP.GetTrace(r.Context(), ProjectFrom(r.Context()), id)
	if errors.Is(err, engine.ErrNotFound) {
		return newError(probNotFound, "no trace %s", raw)
	}
	if err != nil {
		return err
	}
	v := traceView{TraceID: hex.EncodeToString(t.TraceID[:]), State: string(t.State), Revision: t.Revision, Spans: t.Spans,
		LateSpans: t.LateSpans, RootEnded: t.RootEnded, Incomplete: t.Incomplete, FirstSeen: t.FirstSeen, LastSeen: t.LastSeen,
		ClosedAt: utc(t.ClosedAt), FinishedAt: utc(t.FinishedAt), Rule: t.RuleName, RuleVersion: t.RuleVersion, Reason: t.Reason}
	if t.ResultID != uuid.Nil {
		v.ResultID = t.ResultID.String()
	}
	writeJSON(w, mediaJSON, http.StatusOK, v)
	return nil
}

// traceRegradeRequest is the body of POST /v1/traces/regrade.
type traceRegradeRequest struct {
	States   []string `json:"states"`
	TraceIDs []string `json:"trace_ids"`
	Before   string   `json:"before"`
	Limit    *int     `json:"limit"`
}

// traceRegradeView is the answer of POST /v1/traces/regrade.
type traceRegradeView struct {
	Queued   int       `json:"queued"`
	More     bool      `json:"more"`
	Before   time.Time `json:"before"`
	TraceIDs []string  `json:"trace_ids"`
}

// Limits of POST /v1/traces/regrade.
const (
	regradeTracesDefault = 1000
	regradeTracesMax     = 10000
)

// regradeTraces is POST /v1/traces/regrade: finished traces whose spans
// are still stored (unmatched ones kept with TOOLSCORE_OTLP_UNMATCHED=keep,
// any while spans are kept after grading) are graded again by the rules
// in force, as their next revision. The body selects them: states
// (default ["unmatched"]; also no_tool_calls, failed, graded), trace_ids
// (at most 1,000), before (RFC 3339: finished before it; default now) and
// limit (1 to 10,000, default 1,000), oldest finished first. The answer
// lists the traces queued; more is true when limit of them were, and the
// same request with the answer's before queues the next ones (traces
// graded again meanwhile finish after it).
func (s *Server) regradeTraces(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.OTLP == nil {
		return errNoOTLP
	}
	if _, err := mediaType(r, mediaJSON); err != nil {
		return err
	}
	body, err := s.readBody(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		return err
	}
	var req traceRegradeRequest
	if err := decodeStrict(body, &req, ""); err != nil {
		return err
	}
	q := record.TraceRequeue{ProjectID: ProjectFrom(r.Context()), Before: time.Now().UTC(), Limit: regradeTracesDefault}
	var probs []FieldProblem
	bad := func(ptr, format string, args ...any) {
		probs = append(probs, FieldProblem{Pointer: ptr, Message: fmt.Sprintf(format, args...)})
	}
	if req.States == nil {
		q.States = []record.TraceState{record.TraceUnmatched}
	}
	for i, st := range req.States {
		switch ts := record.TraceState(st); ts {
		case record.TraceUnmatched, record.TraceNoToolCalls, record.TraceFailed, record.TraceGraded:
			q.States = append(q.States, ts)
		default:
			bad(fmt.Sprintf("/states/%d", i), "must be unmatched, no_tool_calls, failed or graded, got %q", st)
		}
	}
	if req.States != nil && len(req.States) == 0 {
		bad("/states", "must not be empty (leave it out for [\"unmatched\"])")
	}
	if len(req.TraceIDs) > 1000 {
		bad("/trace_ids", "at most 1000 trace ids, got %d", len(req.TraceIDs))
	} else {
		for i, v := range req.TraceIDs {
			id, err := otlp.ParseTraceID(v)
			if err != nil {
				bad(fmt.Sprintf("/trace_ids/%d", i), "%v", err)
				continue
			}
			q.TraceIDs = append(q.TraceIDs, id)
		}
	}
	if req.Before != "" {
		t, err := time.Parse(time.RFC3339Nano, req.Before)
		if err != nil {
			bad("/before", "must be an RFC 3339 time, got %q", req.Before)
		}
		q.Before = t.UTC()
	}
	if req.Limit != nil {
		if *req.Limit < 1 || *req.Limit > regradeTracesMax {
			bad("/limit", "must be from 1 to %d, got %d", regradeTracesMax, *req.Limit)
		}
		q.Limit = *req.Limit
	}
	if len(probs) > 0 {
		return &apiError{kind: probInvalidRequest, detail: probs[0].Pointer + ": " + probs[0].Message, errors: probs}
	}
	closed, err := s.cfg.OTLP.RegradeTraces(r.Context(), q)
	if err != nil {
		return err
	}
	out := traceRegradeView{Queued: len(closed), More: len(closed) == q.Limit, Before: q.Before, TraceIDs: make([]string, len(closed))}
	for i, c := range closed {
		out.TraceIDs[i] = hex.EncodeToString(c.TraceID[:])
	}
	writeJSON(w, mediaJSON, http.StatusOK, out)
	return nil
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// ruleView is the JSON form of a grading rule version.
type ruleView struct {
	Name      string    `json:"name"`
	Version   int       `json:"version"`
	SHA256    string    `json:"sha256"`
	CreatedAt time.Time `json:"created_at"`
	Rule      rawJSON   `json:"rule"`
}

// rawJSON is stored JSON text written as it is.
type rawJSON []byte

// MarshalJSON implements json.Marshaler.
func (b rawJSON) MarshalJSON() ([]byte, error) { return b, nil }

// viewRule is the JSON form of gr, its body shown with the secrets
// written in it hidden (engine.RedactDocument; sha256 stays the stored
// body's).
//
// Errors: the scan is incomplete (the request ended).
func (s *Server) viewRule(ctx context.Context, gr record.GradingRule) (ruleView, error) {
	body, err := engine.RedactDocument(ctx, gr.Body, s.cfg.SecretScanner)
	return ruleView{Name: gr.Name, Version: gr.Version, SHA256: gr.SHA256, CreatedAt: gr.CreatedAt, Rule: rawJSON(body)}, err
}

// createRule stores a new version of a named grading rule: 201 with it,
// or 200 with the existing version whose canonical body is identical.
// The rule is checked with otlp.ParseRule and its options as POST
// /v1/evaluations checks them.
func (s *Server) createRule(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.OTLP == nil {
		return errNoOTLP
	}
	name := chi.URLParam(r, "name")
	if !namePattern.MatchString(name) {
		return &apiError{kind: probInvalidParameter, detail: fmt.Sprintf("rule name %q must match %s", name, namePattern),
			errors: []FieldProblem{{Parameter: "name", Message: "must match " + namePattern.String()}}}
	}
	if _, err := mediaType(r, mediaJSON); err != nil {
		return err
	}
	body, err := s.readBody(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		return err
	}
	if err := decodeStrict(body, new(any), ""); err != nil {
		return err // not JSON: 400 with its place
	}
	rule, err := otlp.ParseRule(body)
	if err != nil {
		var re *otlp.RuleError
		if errors.As(err, &re) {
			return &apiError{kind: probInvalidRule, detail: re.Error(), errors: fieldErrors("", re.Errors), cause: err}
		}
		return err
	}
	if err := checkRuleOptions(rule); err != nil {
		return err
	}
	if err := nulError("", body); err != nil {
		return err
	}
	canon, sum, err := jsondoc.Canonical(body)
	if err != nil {
		return err
	}
	gr, created, err := s.cfg.OTLP.CreateRule(r.Context(), record.GradingRule{ProjectID: ProjectFrom(r.Context()), Name: name, SHA256: sum, Body: canon})
	if err != nil {
		return err
	}
	w.Header().Set("Location", fmt.Sprintf("/v1/rules/%s/versions/%d", name, gr.Version))
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	v, err := s.viewRule(r.Context(), gr)
	if err != nil {
		return err
	}
	writeJSON(w, mediaJSON, status, v)
	return nil
}

// checkRuleOptions checks a rule's evaluation options as POST
// /v1/evaluations checks a request's, with pointers under /options.
func checkRuleOptions(rule *otlp.Rule) error {
	if len(rule.Options) == 0 {
		return nil
	}
	doc := append([]byte(`{"contract":"x","trace":[],`), rule.Options[1:]...) // the options' members after the two required fields
	in, err := decodeEvaluation(doc)
	if err == nil {
		_, err = parseForbidden(in.req.forbidden)
	}
	if err == nil {
		return nil
	}
	ae := problemFor(err)
	fps := make([]FieldProblem, len(ae.errors))
	for i, fp := range ae.errors {
		fps[i] = FieldProblem{Pointer: "/options" + fp.Pointer, Message: fp.Message}
	}
	if len(fps) == 0 {
		fps = []FieldProblem{{Pointer: "/options", Message: ae.detail}}
	}
	return &apiError{kind: probInvalidRule, detail: fps[0].Pointer + ": " + fps[0].Message, errors: fps, cause: err}
}

func (s *Server) getRule(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.OTLP == nil {
		return errNoOTLP
	}
	name, v := chi.URLParam(r, "name"), chi.URLParam(r, "version")
	if !namePattern.MatchString(name) {
		return newError(probNotFound, "no rule named %q", name)
	}
	version := 0
	if v != "latest" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return paramError("version", "must be a number from 1, or latest; got %q", v)
		}
		version = n
	}
	gr, err := s.cfg.OTLP.GetRule(r.Context(), ProjectFrom(r.Context()), name, version)
	if errors.Is(err, engine.ErrNotFound) {
		return newError(probNotFound, "rule %s has no version %s", name, v)
	}
	if err != nil {
		return err
	}
	view, err := s.viewRule(r.Context(), gr)
	if err != nil {
		return err
	}
	writeJSON(w, mediaJSON, http.StatusOK, view)
	return nil
}

func (s *Server) listRuleVersions(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.OTLP == nil {
		return errNoOTLP
	}
	name := chi.URLParam(r, "name")
	if !namePattern.MatchString(name) {
		return newError(probNotFound, "no rule named %q", name)
	}
	limit, err := parseLimit(r)
	if err != nil {
		return err
	}
	var after int
	if err := decodeCursor(r, &after); err != nil {
		return err
	}
	vs, err := s.cfg.OTLP.ListRuleVersions(r.Context(), ProjectFrom(r.Context()), name, after, limit+1)
	if errors.Is(err, engine.ErrNotFound) {
		return newError(probNotFound, "no rule named %s", name)
	}
	if err != nil {
		return err
	}
	return writeVersionPage(r.Context(), w, vs, limit, func(gr record.GradingRule) int { return gr.Version }, s.viewRule)
}

// listRules lists the rules in force: the latest version of each name, by
// name.
func (s *Server) listRules(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.OTLP == nil {
		return errNoOTLP
	}
	limit, err := parseLimit(r)
	if err != nil {
		return err
	}
	var after string
	if err := decodeCursor(r, &after); err != nil {
		return err
	}
	rs, err := s.cfg.OTLP.ListRules(r.Context(), ProjectFrom(r.Context()), after, limit+1)
	if err != nil {
		return err
	}
	out := page[ruleView]{Items: []ruleView{}}
	for i, gr := range rs {
		if i == limit {
			out.NextCursor = encodeCursor(rs[i-1].Name)
			break
		}
		v, err := s.viewRule(r.Context(), gr)
		if err != nil {
			return err
		}
		out.Items = append(out.Items, v)
	}
	writeJSON(w, mediaJSON, http.StatusOK, out)
	return nil
}
