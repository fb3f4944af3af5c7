// Package regradetest seeds stored results for regrade tests and
// benchmarks: contract versions in the registry and many original results
// copied inside Postgres from a few templates (one INSERT ... SELECT, not
// one request per result).
package regradetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/secrets"
)

// Store is what seeding needs: *store.DB.
type Store interface {
	Pool() *pgxpool.Pool
	CreateContractVersion(ctx context.Context, cv record.ContractVersion) (record.ContractVersion, bool, error)
	InsertResults(ctx context.Context, batch record.ResultBatch) error
}

// MustContract registers body as the next version of contract name and
// returns its identity and parsed form.
func MustContract(tb testing.TB, st Store, name, body string) (record.ContractRef, *engine.Contract) {
	tb.Helper()
	c, err := engine.ParseContract([]byte(body))
	if err != nil {
		tb.Fatalf("contract %s: %v", name, err)
	}
	canon, sum, err := jsondoc.Canonical([]byte(body))
	if err != nil {
		tb.Fatal(err)
	}
	kind := record.KindContract
	if c.Gold {
		kind = record.KindGold
	}
	cv, _, err := st.CreateContractVersion(context.Background(), record.ContractVersion{
		ProjectID: record.DefaultProject, Name: name, SHA256: sum, Kind: kind,
		Description: c.Description, Combinations: c.Combinations(), Body: canon,
	})
	if err != nil {
		tb.Fatalf("create contract %s: %v", name, err)
	}
	return record.ContractRef{Name: cv.Name, Version: cv.Version, SHA256: cv.SHA256, Kind: kind}, c
}

// Options are stored evaluation options, as the API stores them.
type Options struct {
	Strict     bool               `json:"strict"`
	SafetyGate bool               `json:"safety_gate"`
	Forbidden  json.RawMessage    `json:"forbidden,omitempty"`
	Weights    map[string]float64 `json:"weights,omitempty"`
	MinScore   *float64           `json:"min_score,omitempty"`
}

// scanner is the default secret scanner, as the API uses one.
var scanner = secrets.New()

// Result grades trace against c as the API does and returns the stored
// row it would write (created at t, agent "agent-a").
func Result(tb testing.TB, ref record.ContractRef, c *engine.Contract, trace engine.Trace, opts Options, t time.Time) record.Result {
	tb.Helper()
	var forbidden []engine.ForbiddenCall
	if len(opts.Forbidden) > 0 {
		fc, err := engine.ParseForbidden(opts.Forbidden)
		if err != nil {
			tb.Fatal(err)
		}
		forbidden = fc
	}
	res, err := engine.Evaluate(context.Background(), c, trace, engine.Options{
		Strict: opts.Strict, Weights: opts.Weights, MinScore: opts.MinScore, Forbidden: forbidden, NoSafetyGate: !opts.SafetyGate,
		SecretScanner: scanner,
	})
	if err != nil {
		tb.Fatal(err)
	}
	o, _ := json.Marshal(opts)
	id, _ := uuid.NewV7()
	r := record.Result{
		ResultSummary: record.ResultSummary{
			ID: id, ProjectID: record.DefaultProject, CreatedAt: t.UTC().Truncate(time.Microsecond), Contract: ref,
			Agent: "agent-a", Format: "plain",
			Score: res.Score, Grade: string(res.Grade), Passed: res.Passed, MinScore: res.MinScore, SafetyGate: res.SafetyGate,
		},
		Options:     o,
		FinalAnswer: res.FinalAnswer,
	}
	for _, p := range []struct {
		dst *json.RawMessage
		v   any
	}{
		{&r.ExpectedCalls, nonNil(res.ExpectedCalls)}, {&r.TraceCalls, nonNil(res.TraceCalls)},
		{&r.ScoredIndexes, nonNil(res.ScoredIndexes)},
		{&r.Metrics, res.Metrics}, {&r.Checks, res.Checks}, {&r.Issues, nonNil(res.Issues)},
	} {
		b, err := json.Marshal(p.v)
		if err != nil {
			tb.Fatal(err)
		}
		*p.dst = b
	}
	return r
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Seed stores template and n-1 copies of it, the copies with fresh ids and
// created_at template.CreatedAt + i*step (i = 1..n-1), and returns the
// template's id; nothing for n < 1. The copies are made by one INSERT ...
// SELECT inside Postgres.
func Seed(tb testing.TB, st Store, template record.Result, n int, step time.Duration) uuid.UUID {
	tb.Helper()
	ctx := context.Background()
	if n < 1 {
		return template.ID
	}
	if err := st.InsertResults(ctx, record.ResultBatch{Results: []record.Result{template}}); err != nil {
		tb.Fatalf("insert template: %v", err)
	}
	if n <= 1 {
		return template.ID
	}
	// Every column but id and created_at is copied.
	_, err := st.Pool().Exec(ctx, `INSERT INTO results (id, project_id, created_at, contract_name, contract_version,
			contract_sha256, contract_kind, task_id, run_id, agent, labels, trace_format, score, grade, passed, min_score,
			safety_gate, options, expected_calls, trace_calls, scored_indexes, final_answer, metrics, checks, issues)
		SELECT gen_random_uuid(), project_id, created_at + i * $3::interval, contract_name, contract_version,
			contract_sha256, contract_kind, task_id, run_id, agent, labels, trace_format, score, grade, passed, min_score,
			safety_gate, options, expected_calls, trace_calls, scored_indexes, final_answer, metrics, checks, issues
		FROM results, generate_series(1, $2::int) AS i WHERE id = $1`, template.ID, n-1, step)
	if err != nil {
		tb.Fatalf("seed %d copies: %v", n-1, err)
	}
	return template.ID
}
