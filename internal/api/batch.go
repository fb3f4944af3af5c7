package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
)

func (s *Server) batchRoutes(r chi.Router) {
	r.Post("/evaluations/batch", s.handle(s.createBatch))
}

// batchItemView is the answer for one item of a batch: Status is the
// status the item would have had as a single request (201 stored, 200 dry
// run, 4xx/5xx with Problem).
type batchItemView struct {
	Index      int             `json:"index"`
	Line       int             `json:"line,omitempty"`
	Status     int             `json:"status"`
	Evaluation *evaluationView `json:"evaluation,omitempty"`
	Problem    *Problem        `json:"problem,omitempty"`
}

// batchView is the answer of POST /v1/evaluations/batch.
type batchView struct {
	Items     []batchItemView `json:"items"`
	Succeeded int             `json:"succeeded"`
	Failed    int             `json:"failed"`
	Stored    bool            `json:"stored"`
}

// batchItem is one item while a batch is processed.
type batchItem struct {
	raw  []byte
	line int // 1-based NDJSON line; 0 for a JSON array
	in   *evalInput
	res  *record.Result
	err  error
}

// splitBatch cuts a batch body into items: a JSON array of requests, or
// NDJSON (one request per non-blank line).
func splitBatch(body []byte, media string) ([]*batchItem, error) {
	var items []*batchItem
	if media == mediaNDJSON {
		for i, line := range bytes.Split(body, []byte("\n")) {
			if len(bytes.TrimSpace(line)) > 0 {
				items = append(items, &batchItem{raw: line, line: i + 1})
			}
		}
		return items, nil
	}
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] != '[' {
		return nil, &apiError{kind: probInvalidRequest, detail: "a batch is a JSON array of evaluation requests (or NDJSON with Content-Type application/x-ndjson)",
			errors: []FieldProblem{{Pointer: "", Message: "must be an array"}}}
	}
	var raws []json.RawMessage
	if err := decodeStrict(body, &raws, ""); err != nil {
		return nil, err
	}
	for _, raw := range raws {
		items = append(items, &batchItem{raw: raw})
	}
	return items, nil
}

// transient reports whether an item's error says nothing about the item
// itself (the request ended, the server is stopping, the database is
// down): the whole batch then fails and nothing is stored.
func transient(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, errPoolClosed) || errors.Is(err, engine.ErrUnavailable)
}

// createBatch grades up to MaxBatchItems evaluations and answers per item.
// Stored results of one batch are committed together, with the
// Idempotency-Key when given; an item that fails (4xx, timeout) is
// answered with its problem and does not stop the others.
func (s *Server) createBatch(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	store, err := storeParam(r)
	if err != nil {
		return err
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	media, err := mediaType(r, mediaJSON, mediaNDJSON)
	if err != nil {
		return err
	}
	body, err := s.readBody(w, r, s.cfg.MaxBatchBytes)
	if err != nil {
		return err
	}
	// A batch's slot is taken once its body is here (see readBody).
	select {
	case s.batches <- struct{}{}:
		defer func() { <-s.batches }()
	default:
		s.metrics.poolRejected.Inc()
		return &apiError{kind: probQueueFull, detail: fmt.Sprintf("%d batches are already running; retry later", cap(s.batches)), retryAfter: 1}
	}
	project := ProjectFrom(ctx)
	var hash string
	if store && key != "" {
		hash = requestHash(r, body, media)
		if done, err := s.replayBatch(w, r, project, key, hash); done || err != nil {
			return err
		}
	}
	items, err := splitBatch(body, media)
	if err != nil {
		return err
	}
	if len(items) == 0 || len(items) > s.cfg.MaxBatchItems {
		return &apiError{kind: probInvalidRequest, detail: fmt.Sprintf("a batch holds 1 to %d evaluations, got %d", s.cfg.MaxBatchItems, len(items)),
			errors: []FieldProblem{{Pointer: "", Message: fmt.Sprintf("must hold 1 to %d evaluations", s.cfg.MaxBatchItems)}}}
	}
	for _, it := range items {
		if it.in, it.err = s.decodeOwned(it.raw); it.err == nil {
			it.err = s.resolveContract(ctx, it.in)
		}
		if it.err != nil && transient(it.err) {
			return it.err
		}
	}
	// Evaluate on the pool, at most a few items of this batch in flight at
	// once so that single requests still get queue room; results are
	// written by index.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(2 * s.cfg.Workers)
	for _, it := range items {
		if it.err != nil {
			continue
		}
		var id uuid.UUID
		if store {
			if id, err = newResultID(); err != nil {
				return err
			}
		}
		g.Go(func() error {
			err := s.pool.DoWait(gctx, func(ctx context.Context) error {
				var err error
				it.res, it.err = s.evaluate(ctx, it.in, project, id)
				return err
			})
			if err != nil && it.err == nil {
				it.err = err
			}
			if it.err != nil {
				s.countError(it.err)
			}
			if transient(it.err) {
				return it.err // stop the batch
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}

	out := batchView{Items: make([]batchItemView, len(items)), Stored: store}
	var batch record.ResultBatch
	ids := make([]uuid.UUID, len(items))
	itemErrors := make([]*batchItemView, len(items))
	now := s.now()
	for i, it := range items {
		out.Items[i] = batchItemView{Index: i, Line: it.line}
		if it.err != nil {
			p := problemFor(it.err).problem(r)
			out.Items[i].Status, out.Items[i].Problem = p.Status, &p
			itemErrors[i] = &out.Items[i]
			out.Failed++
			continue
		}
		out.Succeeded++
		out.Items[i].Status = http.StatusOK
		if store {
			it.res.CreatedAt = now
			ids[i] = it.res.ID
			batch.Results = append(batch.Results, *it.res)
			out.Items[i].Status = http.StatusCreated
		}
		v := viewEvaluation(it.res)
		out.Items[i].Evaluation = &v
	}
	if store && (len(batch.Results) > 0 || key != "") {
		if key != "" {
			errs, _ := json.Marshal(itemErrors)
			errs = replaceNUL(errs) // an item's pointer may name a key with a NUL; jsonb cannot hold it
			batch.Idempotency = &record.Idempotency{ProjectID: project, Key: key, RequestSHA256: hash, ResultIDs: ids, ItemErrors: errs}
		}
		if err := s.store.InsertResults(ctx, batch); err != nil {
			if key != "" && errors.Is(err, engine.ErrConflict) {
				if done, err := s.replayBatch(w, r, project, key, hash); done || err != nil {
					return err
				}
			}
			return err
		}
	}
	writeJSON(w, mediaJSON, http.StatusOK, out)
	return nil
}

// replayBatch answers a batch whose Idempotency-Key was already used: the
// stored answer when the request is the same, else 409. done is false
// when the key is unused.
func (s *Server) replayBatch(w http.ResponseWriter, r *http.Request, project int64, key, hash string) (done bool, err error) {
	k, err := s.store.GetIdempotency(r.Context(), project, key)
	if errors.Is(err, engine.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	var itemErrors []*batchItemView
	if k.RequestSHA256 != hash || json.Unmarshal(k.ItemErrors, &itemErrors) != nil || len(itemErrors) != len(k.ResultIDs) {
		return true, newError(probIdempotency, "the Idempotency-Key was used with another request")
	}
	var want []uuid.UUID
	for _, id := range k.ResultIDs {
		if id != uuid.Nil {
			want = append(want, id)
		}
	}
	rs, err := s.store.GetResults(r.Context(), project, want)
	if err != nil {
		return true, err
	}
	if len(rs) != len(want) {
		return true, fmt.Errorf("idempotency record: stored results are missing")
	}
	out := batchView{Items: make([]batchItemView, len(k.ResultIDs)), Stored: true}
	next := 0
	for i, id := range k.ResultIDs {
		if id == uuid.Nil {
			out.Items[i] = *itemErrors[i]
			out.Failed++
			continue
		}
		v := viewEvaluation(&rs[next])
		out.Items[i] = batchItemView{Index: i, Status: http.StatusCreated, Evaluation: &v}
		next++
		out.Succeeded++
	}
	s.metrics.idempotentReplay.Inc()
	w.Header().Set("Idempotent-Replayed", "true")
	writeJSON(w, mediaJSON, http.StatusOK, out)
	return true, nil
}

// replaceNUL replaces every \u0000 escape of JSON text with \ufffd (the
// replacement character), leaving escaped backslashes followed by "u0000"
// alone.
func replaceNUL(b []byte) []byte {
	if !hasNUL(b) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			out = append(out, b[i])
			continue
		}
		if bytes.HasPrefix(b[i:], []byte(`\u0000`)) {
			out = append(out, `\ufffd`...)
			i += 5
			continue
		}
		out = append(out, b[i], b[i+1]) // any other escape, \\ included
		i++
	}
	return out
}
