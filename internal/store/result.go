package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/toolscore/toolscore/internal/record"
)

// resultColumns are the results table's columns in the order of
// resultRow: the columns an original is written with (COPY and INSERT),
// without the regrade link (regradeColumns appends it for regrade
// results).
var resultColumns = []string{
	"id", "project_id", "created_at",
	"contract_name", "contract_version", "contract_sha256", "contract_kind",
	"task_id", "run_id", "agent", "labels", "trace_format",
	"score", "grade", "passed", "min_score", "safety_gate",
	"options", "expected_calls", "trace_calls", "scored_indexes",
	"final_answer", "metrics", "checks", "issues", "format_warning",
}

// nSummaryWritten is the number of leading resultColumns that belong to a
// ResultSummary.
const nSummaryWritten = 17

// summaryColumns are the columns that make a ResultSummary, in the order
// of summaryScan.dest: resultColumns' leading ones, then the regrade link
// (NULL for an original) and the format's warning (resultColumns' last).
// A new slice: appending must not write into
// resultColumns.
var summaryColumns = slices.Concat(resultColumns[:nSummaryWritten], []string{"regrade_of", "regrade_id", "format_warning"})

var (
	// resultSelect reads a Result in the order of scanResult, from
	// resultFrom: the row's columns, with the trace calls of a regrade
	// result that stores none taken from its original (migration 00011)
	// and its expected calls, when it stores none, from its regrade's
	// copy (migration 00016).
	resultSelect  = qualifiedResultColumns()
	summarySelect = strings.Join(summaryColumns, ", ")
)

// resultFrom is the FROM clause of resultSelect: the result as r, joined
// to its original as o only when r stores no trace calls of its own, and
// to its regrade's copy of its expected calls as e only when r stores
// none. Conditions on the result must name r's columns (r.id).
const resultFrom = `results r LEFT JOIN results o
	ON r.trace_calls IS NULL AND o.id = r.regrade_of AND o.project_id = r.project_id
	LEFT JOIN regrade_expected_calls e
	ON r.expected_calls IS NULL AND e.regrade_id = r.regrade_id AND e.combination = r.expected_combination`

func qualifiedResultColumns() string {
	cols := slices.Concat(summaryColumns, resultColumns[nSummaryWritten:len(resultColumns)-1])
	for i, c := range cols {
		switch c {
		case "trace_calls":
			cols[i] = "coalesce(r.trace_calls, o.trace_calls)"
		case "expected_calls":
			cols[i] = "coalesce(r.expected_calls, e.expected_calls)"
		default:
			cols[i] = "r." + c
		}
	}
	return strings.Join(cols, ", ")
}

func resultRow(r *record.Result) []any {
	labels := labelsJSON(r)
	var version any
	if r.Contract.Version > 0 {
		version = int32(r.Contract.Version)
	}
	return []any{
		[16]byte(r.ID), r.ProjectID, r.CreatedAt,
		nullString(r.Contract.Name), version, r.Contract.SHA256, string(r.Contract.Kind),
		nullString(r.TaskID), nullString(r.RunID), nullString(r.Agent), labels, r.Format,
		r.Score, r.Grade, r.Passed, r.MinScore, r.SafetyGate,
		text(r.Options), text(r.ExpectedCalls), text(r.TraceCalls), text(r.ScoredIndexes),
		r.FinalAnswer, text(r.Metrics), text(r.Checks), text(r.Issues), nullString(r.FormatWarning),
	}
}

// labelsJSON returns r's labels as the JSON the labels column takes:
// r.LabelsJSON when the server encoded them, {} for none.
func labelsJSON(r *record.Result) []byte {
	switch {
	case len(r.Labels) == 0:
		return []byte("{}")
	case len(r.LabelsJSON) > 0:
		return r.LabelsJSON
	}
	b, _ := json.Marshal(r.Labels) // a map[string]string always marshals
	return b
}

// text returns b for a NOT NULL text or json column: pgx writes a []byte
// to such a column as is, without the copy a string conversion makes, and
// writes nil as NULL, so nil becomes empty.
func text(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// pgUUID returns id as the [16]byte pgx encodes directly. (uuid.UUID is a
// driver.Valuer, which pgx encodes through its 36-character string form
// and parses back.)
func pgUUID(id uuid.UUID) [16]byte { return id }

// pgUUIDs is pgUUID for a slice (a uuid[] parameter).
func pgUUIDs(ids []uuid.UUID) [][16]byte {
	out := make([][16]byte, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// summaryDest returns scan destinations for the summary columns; call fill
// after Scan.
type summaryScan struct {
	name, task, run, agent *string
	version                *int32
	labels                 []byte
	kind                   string
	regradeOf, regradeID   pgtype.UUID
	warning                *string
}

func (s *summaryScan) dest(r *record.ResultSummary) []any {
	return []any{
		(*[16]byte)(&r.ID), &r.ProjectID, &r.CreatedAt,
		&s.name, &s.version, &r.Contract.SHA256, &s.kind,
		&s.task, &s.run, &s.agent, &s.labels, &r.Format,
		&r.Score, &r.Grade, &r.Passed, &r.MinScore, &r.SafetyGate,
		&s.regradeOf, &s.regradeID, &s.warning,
	}
}

func (s *summaryScan) fill(r *record.ResultSummary) error {
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	r.Contract.Name = deref(s.name)
	if s.version != nil {
		r.Contract.Version = int(*s.version)
	}
	r.Contract.Kind = record.ContractKind(s.kind)
	r.TaskID, r.RunID, r.Agent = deref(s.task), deref(s.run), deref(s.agent)
	r.FormatWarning = deref(s.warning)
	// NULL (an original) leaves uuid.Nil.
	r.RegradeOf, r.RegradeID = s.regradeOf.Bytes, s.regradeID.Bytes
	r.Labels = nil
	if len(s.labels) > 0 && string(s.labels) != "{}" {
		if err := json.Unmarshal(s.labels, &r.Labels); err != nil {
			return fmt.Errorf("result %s: labels: %w", r.ID, err)
		}
	}
	r.CreatedAt = r.CreatedAt.UTC()
	return nil
}

func scanResult(row pgx.Row) (record.Result, error) {
	var r record.Result
	var s summaryScan
	dest := append(s.dest(&r.ResultSummary),
		&r.Options, &r.ExpectedCalls, &r.TraceCalls, &r.ScoredIndexes,
		&r.FinalAnswer, &r.Metrics, &r.Checks, &r.Issues)
	if err := row.Scan(dest...); err != nil {
		return r, err
	}
	if r.TraceCalls == nil {
		// A regrade result that shares its original's trace calls, whose
		// original is gone (see migration 00011).
		return r, fmt.Errorf("result %s: trace_calls: stored with its original %s, which no longer exists", r.ID, uuid.UUID(s.regradeOf.Bytes))
	}
	if r.ExpectedCalls == nil {
		// A regrade result that shares its regrade's copy of its expected
		// calls, which is gone (see migration 00016).
		return r, fmt.Errorf("result %s: expected_calls: stored with its regrade %s, which no longer holds them", r.ID, uuid.UUID(s.regradeID.Bytes))
	}
	// scored_calls is not stored (migration 00007): it is the trace calls
	// at scored_indexes.
	sc, err := record.ScoredCalls(r.TraceCalls, r.ScoredIndexes)
	if err != nil {
		return r, fmt.Errorf("result %s: %w", r.ID, err)
	}
	r.ScoredCalls = sc
	return r, s.fill(&r.ResultSummary)
}

// GetResult returns the stored result id of a project.
//
// Errors: engine.ErrNotFound; engine.ErrUnavailable.
func (db *DB) GetResult(ctx context.Context, projectID int64, id uuid.UUID) (record.Result, error) {
	row := db.pool.QueryRow(ctx, `SELECT `+resultSelect+` FROM `+resultFrom+` WHERE r.project_id = $1 AND r.id = $2`, projectID, id)
	r, err := scanResult(row)
	if err != nil {
		return r, fmt.Errorf("get result %s: %w", id, translate(err))
	}
	return r, nil
}

// GetResults returns the stored results with the given ids, in the order
// of ids (a missing id is left out).
//
// Errors: engine.ErrUnavailable.
func (db *DB) GetResults(ctx context.Context, projectID int64, ids []uuid.UUID) ([]record.Result, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+resultSelect+` FROM `+resultFrom+` WHERE r.project_id = $1 AND r.id = ANY($2)`, projectID, ids)
	if err != nil {
		return nil, fmt.Errorf("get results: %w", translate(err))
	}
	byID := make(map[uuid.UUID]record.Result, len(ids))
	for rows.Next() {
		r, err := scanResult(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("get results: %w", translate(err))
		}
		byID[r.ID] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("get results: %w", translate(err))
	}
	out := make([]record.Result, 0, len(ids))
	for _, id := range ids {
		if r, ok := byID[id]; ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// where builds the SQL conditions of a filter, numbering parameters after
// the ones already in args.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	for _, a := range args {
		w.args = append(w.args, a)
		cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(w.args)), 1)
	}
	w.conds = append(w.conds, cond)
}

func (w *where) sql() string { return strings.Join(w.conds, " AND ") }

func filterWhere(projectID int64, f record.ResultFilter) *where {
	w := &where{}
	w.add("project_id = ?", projectID)
	if f.ContractName != "" {
		w.add("contract_name = ?", f.ContractName)
		if f.ContractVersion > 0 {
			w.add("contract_version = ?", int32(f.ContractVersion))
		}
	}
	if f.TaskID != "" {
		w.add("task_id = ?", f.TaskID)
	}
	if f.RunID != "" {
		w.add("run_id = ?", f.RunID)
	}
	if f.Agent != "" {
		w.add("agent = ?", f.Agent)
	}
	for _, l := range f.Labels {
		if l.HasValue {
			b, _ := json.Marshal(map[string]string{l.Key: l.Value})
			w.add("labels @> ?::jsonb", string(b))
		} else {
			w.add("jsonb_exists(labels, ?)", l.Key)
		}
	}
	if f.Passed != nil {
		w.add("passed = ?", *f.Passed)
	}
	if len(f.Grades) > 0 {
		w.add("grade = ANY(?)", f.Grades)
	}
	if !f.Since.IsZero() {
		w.add("created_at >= ?", f.Since)
	}
	if !f.Until.IsZero() {
		w.add("created_at < ?", f.Until)
	}
	switch f.Regrades {
	case record.RegradesExclude:
		w.add("regrade_id IS NULL")
	case record.RegradesOnly:
		w.add("regrade_id IS NOT NULL")
	}
	return w
}

// checkFilter refuses a filter filterWhere cannot apply exactly.
func checkFilter(f record.ResultFilter) error {
	if !f.Regrades.Valid() {
		return fmt.Errorf("unknown regrades filter %q (want include, exclude or only)", f.Regrades)
	}
	return nil
}

// ListResults returns up to limit result summaries of a project that match
// f, newest first (created_at DESC, id DESC), continuing strictly after
// the cursor when it is non-nil.
//
// Errors: an error for an unknown f.Regrades; engine.ErrUnavailable.
func (db *DB) ListResults(ctx context.Context, projectID int64, f record.ResultFilter, after *record.Cursor, limit int) ([]record.ResultSummary, error) {
	if err := checkFilter(f); err != nil {
		return nil, fmt.Errorf("list results: %w", err)
	}
	w := filterWhere(projectID, f)
	if after != nil {
		w.add("(created_at, id) < (?, ?)", after.CreatedAt, after.ID)
	}
	w.args = append(w.args, limit)
	q := `SELECT ` + summarySelect + ` FROM results WHERE ` + w.sql() +
		` ORDER BY created_at DESC, id DESC LIMIT $` + strconv.Itoa(len(w.args))
	rows, err := db.pool.Query(ctx, q, w.args...)
	if err != nil {
		return nil, fmt.Errorf("list results: %w", translate(err))
	}
	defer rows.Close()
	var out []record.ResultSummary
	for rows.Next() {
		var r record.ResultSummary
		var s summaryScan
		if err := rows.Scan(s.dest(&r)...); err != nil {
			return nil, fmt.Errorf("list results: %w", translate(err))
		}
		if err := s.fill(&r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list results: %w", translate(err))
	}
	return out, nil
}

// maxStatsGroups caps the groups Stats returns.
const maxStatsGroups = 1000

// Stats aggregates the results of a project that match f, grouped by g,
// ordered by group key; at most 1,000 groups.
//
// Errors: an error for an unknown grouping or f.Regrades;
// engine.ErrUnavailable.
func (db *DB) Stats(ctx context.Context, projectID int64, f record.ResultFilter, g record.StatsGroupBy) ([]record.StatsGroup, error) {
	if err := checkFilter(f); err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	var key string
	switch g {
	case record.GroupByContractVersion:
		key = `coalesce(contract_name || '@' || contract_version, '')`
	case record.GroupByAgent:
		key = `coalesce(agent, '')`
	case record.GroupByTask:
		key = `coalesce(task_id, '')`
	case record.GroupByDay:
		key = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`
	default:
		return nil, fmt.Errorf("stats: unknown grouping %q", g)
	}
	w := filterWhere(projectID, f)
	q := `SELECT ` + key + ` AS k, count(*), count(*) FILTER (WHERE passed), avg(score),
		count(*) FILTER (WHERE grade = 'A'), count(*) FILTER (WHERE grade = 'B'),
		count(*) FILTER (WHERE grade = 'C'), count(*) FILTER (WHERE grade = 'D'),
		count(*) FILTER (WHERE grade = 'F')
		FROM results WHERE ` + w.sql() + ` GROUP BY k ORDER BY k LIMIT ` + strconv.Itoa(maxStatsGroups)
	rows, err := db.pool.Query(ctx, q, w.args...)
	if err != nil {
		return nil, fmt.Errorf("stats: %w", translate(err))
	}
	defer rows.Close()
	out := []record.StatsGroup{}
	for rows.Next() {
		var s record.StatsGroup
		var a, b, c, d, f int64
		if err := rows.Scan(&s.Key, &s.Count, &s.Passed, &s.MeanScore, &a, &b, &c, &d, &f); err != nil {
			return nil, fmt.Errorf("stats: %w", translate(err))
		}
		s.Grades = map[string]int64{"A": a, "B": b, "C": c, "D": d, "F": f}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("stats: %w", translate(err))
	}
	return out, nil
}
