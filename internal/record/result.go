package record

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// ContractRef identifies the contract a result was graded against. Name is
// "" and Version 0 for an inline contract or gold list; SHA256 is always
// set (the canonical body's hex sha256).
type ContractRef struct {
	Name    string
	Version int
	SHA256  string
	Kind    ContractKind
}

// ResultSummary holds the small, filterable columns of a stored result.
type ResultSummary struct {
	// ID is a UUIDv7, so ids sort by creation time.
	ID uuid.UUID
	// ProjectID scopes the result.
	ProjectID int64
	// CreatedAt is when the result was created (UTC, microseconds).
	CreatedAt time.Time
	// Contract is the contract's identity.
	Contract ContractRef
	// TaskID, RunID and Agent are the caller's identifiers ("" for none).
	TaskID string
	RunID  string
	Agent  string
	// Labels are the caller's key/value labels (nil or empty for none).
	Labels map[string]string
	// Format is the trace format the trace was read as.
	Format string
	// Score is the composite score in [0,1].
	Score float64
	// Grade is the letter A-F.
	Grade string
	// Passed is the verdict.
	Passed bool
	// MinScore is the passing score applied, in [0,1].
	MinScore float64
	// SafetyGate reports whether the safety gate was applied.
	SafetyGate bool
	// FormatWarning is the trace format's warning when the trace was read
	// (format.Parsed.Warning, redacted like the caller's identifiers);
	// "" when there was none and for a regrade result, which reads the
	// stored calls and no document (column format_warning, migration
	// 00018).
	FormatWarning string
	// RegradeOf is the original result a regrade result re-evaluates, and
	// RegradeID the regrade that wrote it (columns regrade_of and
	// regrade_id). Both are uuid.Nil for an original (POST
	// /v1/evaluations, a batch, a harness run), both set for a regrade
	// result; the store reads both on every summary and result.
	RegradeOf uuid.UUID
	RegradeID uuid.UUID
}

// IsRegrade reports whether r is a regrade result (RegradeID is set).
func (r *ResultSummary) IsRegrade() bool { return r.RegradeID != uuid.Nil }

// Result is one stored evaluation: the summary plus every part of the
// engine's EvaluationResult as JSON text, exactly as it was returned to
// the caller, and the options needed to grade the trace again.
type Result struct {
	ResultSummary
	// Options are the request's evaluation options as JSON: {"strict",
	// "safety_gate", "forbidden"?, "weights"?, "min_score"?}.
	Options json.RawMessage
	// ExpectedCalls, TraceCalls, ScoredCalls, ScoredIndexes, Metrics,
	// Checks and Issues are the EvaluationResult fields of the same JSON
	// names. ScoredCalls is not stored: the store rebuilds it on read from
	// TraceCalls and ScoredIndexes (ScoredCalls), and writers may leave it
	// nil.
	ExpectedCalls json.RawMessage
	TraceCalls    json.RawMessage
	ScoredCalls   json.RawMessage
	ScoredIndexes json.RawMessage
	Metrics       json.RawMessage
	Checks        json.RawMessage
	Issues        json.RawMessage
	// FinalAnswer is the trace's final answer (nil when absent).
	FinalAnswer *string
	// LabelsJSON is Labels as JSON (json.Marshal's bytes), encoded once
	// by the server for both the row and the answer; nil when Labels is
	// empty or the writer leaves it to the store.
	LabelsJSON json.RawMessage
	// SharesTrace, set only on a regrade result being written, says that
	// TraceCalls are byte for byte those of its original (RegradeOf): the
	// store then keeps no copy and reads return the original's
	// (migration 00011). Results read back leave it false.
	SharesTrace bool
	// SharesExpected, set only on a regrade result being written, says
	// that ExpectedCalls are byte for byte those of every other result of
	// its regrade (RegradeID) with the same ExpectedKey (the chosen
	// combination of the target contract's alternatives,
	// resultjson.ExpectedCache.ExpectedCallsKey): the store then keeps one
	// copy per regrade and key, and reads return it (migration 00016).
	// Results read back leave both zero.
	SharesExpected bool
	ExpectedKey    string
}

// LabelFilter selects results whose labels hold Key, and when HasValue
// also the exact Value.
type LabelFilter struct {
	Key      string
	Value    string
	HasValue bool
}

// ResultFilter selects stored results. Zero fields select everything.
type ResultFilter struct {
	// ContractName selects results graded against this registry contract.
	ContractName string
	// ContractVersion selects one version (0: any); needs ContractName.
	ContractVersion int
	TaskID          string
	RunID           string
	Agent           string
	// Labels must all match.
	Labels []LabelFilter
	// Passed selects the verdict when non-nil.
	Passed *bool
	// Grades selects any of these grades when non-empty.
	Grades []string
	// Since and Until bound CreatedAt: Since <= created_at < Until; zero
	// means unbounded.
	Since time.Time
	Until time.Time
	// Regrades selects originals, regrade results or both ("" is
	// RegradesInclude: both). ListLatestResults lists originals only and
	// takes "" or RegradesInclude.
	Regrades RegradesFilter
}

// RegradesFilter selects stored results by whether they are regrade
// results (ResultSummary.IsRegrade).
type RegradesFilter string

// The values of ResultFilter.Regrades.
const (
	// RegradesInclude selects originals and regrade results alike (the
	// zero value "" means the same).
	RegradesInclude RegradesFilter = "include"
	// RegradesExclude selects originals only (regrade_id IS NULL).
	RegradesExclude RegradesFilter = "exclude"
	// RegradesOnly selects regrade results only (regrade_id IS NOT NULL).
	RegradesOnly RegradesFilter = "only"
)

// Valid reports whether f is "" or one of the RegradesFilter constants.
func (f RegradesFilter) Valid() bool {
	switch f {
	case "", RegradesInclude, RegradesExclude, RegradesOnly:
		return true
	}
	return false
}

// Cursor is a position in the (created_at DESC, id DESC) order of results:
// a page continues with the rows strictly after it.
type Cursor struct {
	CreatedAt time.Time
	ID        uuid.UUID
}

// StatsGroupBy names a grouping of GET /v1/stats.
type StatsGroupBy string

// The groupings of statistics.
const (
	GroupByContractVersion StatsGroupBy = "contract_version"
	GroupByAgent           StatsGroupBy = "agent"
	GroupByTask            StatsGroupBy = "task"
	GroupByDay             StatsGroupBy = "day"
)

// StatsGroup aggregates the results of one group.
type StatsGroup struct {
	// Key is the group's value: "name@version" (or "" for inline
	// contracts), the agent, the task id ("" when none), or the UTC day as
	// YYYY-MM-DD.
	Key string
	// Count is the number of results.
	Count int64
	// Passed is the number of passing results.
	Passed int64
	// MeanScore is the mean composite score.
	MeanScore float64
	// Grades counts results per grade letter.
	Grades map[string]int64
}

// ResultBatch is a set of results written atomically: all of them and the
// idempotency record, or nothing.
type ResultBatch struct {
	// Results are the rows to insert (may be empty when only the
	// idempotency record is written).
	Results []Result
	// Idempotency, when non-nil, is inserted in the same transaction; the
	// write fails with engine.ErrConflict when its key already exists.
	Idempotency *Idempotency
}
