package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/toolscore/toolscore/internal/record"
)

// The console's reads (internal/ui): the overview's aggregates, kept in
// the rollup tables of migration 00009 so that the overview costs the same
// however many results are stored, and the listings the API has no route
// for (regrades, the regrade results of one original).

// RollupMargin is how long after its created_at a result is assumed to be
// committed: Rollup counts only results created before now minus it, so
// that a result still being written (created_at is when it was graded) is
// never missed. A regrade chunk or a batch commits within seconds; the
// margin leaves room for a slow database.
const RollupMargin = 30 * time.Minute

// rollupLock is the advisory lock key that lets one server at a time move
// the rollup forward.
const rollupLock = `hashtextextended('toolscore.rollup', 0)`

// dims are the rollup tables' grouping columns, as read from results.
const rollupDims = `coalesce(contract_name, ''), coalesce(contract_version, 0), coalesce(agent, ''), regrade_id IS NOT NULL`

// Rollup moves the overview's aggregates forward: it counts the results of
// every project created from rollup_state.upto up to the hour before
// now minus RollupMargin, at most maxStep of time at once (a whole UTC day
// becomes one row per contract version, agent and kind; the current day's
// hours one row each until the day closes), and returns the new upto and
// whether more remains. One server at a time does the work (an advisory
// lock); the others return at once with more false. On a database never
// rolled up it starts at the day of the oldest result.
//
// Errors: engine.ErrUnavailable.
func (db *DB) Rollup(ctx context.Context, now time.Time, maxStep time.Duration) (upto time.Time, more bool, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("rollup: %w", translate(err))
		}
	}()
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return upto, false, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	var locked bool
	if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(`+rollupLock+`)`).Scan(&locked); err != nil {
		return upto, false, err
	}
	var cur *time.Time
	if err := tx.QueryRow(ctx, `SELECT upto FROM rollup_state`).Scan(&cur); err != nil {
		return upto, false, err
	}
	if !locked {
		if cur != nil {
			upto = cur.UTC()
		}
		return upto, false, nil
	}
	projects, err := projectIDs(ctx, tx)
	if err != nil {
		return upto, false, err
	}
	limit := now.UTC().Add(-RollupMargin).Truncate(time.Hour)
	initial := cur == nil
	if initial {
		start, ok, err := oldestResult(ctx, tx, projects)
		if err != nil {
			return upto, false, err
		}
		if !ok || start.After(limit) {
			start = limit
		}
		cur = &start
	}
	from := cur.UTC()
	end := limit
	if e := from.Add(maxStep).Truncate(time.Hour); maxStep > 0 && e.Before(end) {
		end = e
	}
	if end.Before(from) {
		end = from // the clock went back
	}
	for c := from; c.Before(end); {
		day := c.Truncate(24 * time.Hour)
		next := day.Add(24 * time.Hour)
		if c.Equal(day) && !next.After(end) {
			if err := rollupRange(ctx, tx, projects, "day", c, next); err != nil {
				return upto, false, err
			}
			c = next
			continue
		}
		segEnd := next
		if end.Before(next) {
			segEnd = end
		}
		if err := rollupRange(ctx, tx, projects, "hour", c, segEnd); err != nil {
			return upto, false, err
		}
		if segEnd.Equal(next) {
			if err := compactDay(ctx, tx, day); err != nil {
				return upto, false, err
			}
		}
		c = segEnd
	}
	if initial || end.After(from) {
		if _, err := tx.Exec(ctx, `UPDATE rollup_state SET upto = $1`, end); err != nil {
			return upto, false, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return upto, false, err
	}
	if end.Sub(from) >= 24*time.Hour {
		// After counting history, give the planner the tables' statistics
		// at once rather than at autovacuum's next visit (without them it
		// sorts the issue counts on disk: 150 ms instead of 30).
		if _, err := db.pool.Exec(ctx, `ANALYZE result_rollup, result_rollup_issues, result_rollup_labels,
			result_rollup_label_issues, result_rollup_label_overflow`); err != nil {
			return end, false, err
		}
	}
	return end, end.Before(limit), nil
}

func projectIDs(ctx context.Context, tx pgx.Tx) ([]int64, error) {
	rows, err := tx.Query(ctx, `SELECT id FROM projects ORDER BY id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// oldestResult returns the UTC midnight of the day of the oldest result
// of any project (one index lookup per project).
func oldestResult(ctx context.Context, tx pgx.Tx, projects []int64) (time.Time, bool, error) {
	var oldest time.Time
	found := false
	for _, p := range projects {
		var t *time.Time
		if err := tx.QueryRow(ctx, `SELECT min(created_at) FROM results WHERE project_id = $1`, p).Scan(&t); err != nil {
			return oldest, false, err
		}
		if t != nil && (!found || t.Before(oldest)) {
			oldest, found = *t, true
		}
	}
	return oldest.UTC().Truncate(24 * time.Hour), found, nil
}

// rollupRange counts the results of each project created in [from, to)
// into rows of the given span (bucketed by UTC hour or day).
func rollupRange(ctx context.Context, tx pgx.Tx, projects []int64, span string, from, to time.Time) error {
	bucket := `date_trunc('` + span + `', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`
	for _, p := range projects {
		if _, err := tx.Exec(ctx, `INSERT INTO result_rollup (project_id, span, bucket, contract_name, contract_version, agent, regrade,
				n, passed, score_sum, grade_a, grade_b, grade_c, grade_d, grade_f)
			SELECT $1, $2, `+bucket+`, `+rollupDims+`,
				count(*), count(*) FILTER (WHERE passed), sum(score),
				count(*) FILTER (WHERE grade = 'A'), count(*) FILTER (WHERE grade = 'B'), count(*) FILTER (WHERE grade = 'C'),
				count(*) FILTER (WHERE grade = 'D'), count(*) FILTER (WHERE grade = 'F')
			FROM results WHERE project_id = $1 AND created_at >= $3 AND created_at < $4
			GROUP BY 3, 4, 5, 6, 7`, p, span, from, to); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO result_rollup_issues (project_id, span, bucket, contract_name, contract_version, agent, regrade,
				kind, severity, tool, n, problem)
			SELECT $1, $2, b, cn, cv, ag, rg, coalesce(first ->> 'kind', ''), coalesce(first ->> 'severity', ''), coalesce(first ->> 'tool', ''),
				count(*), min(coalesce(first ->> 'problem', ''))
			FROM (SELECT `+bucket+` AS b, coalesce(contract_name, '') AS cn, coalesce(contract_version, 0) AS cv,
					coalesce(agent, '') AS ag, regrade_id IS NOT NULL AS rg, issues::json -> 0 AS first
				FROM results WHERE project_id = $1 AND created_at >= $3 AND created_at < $4 AND issues <> '[]') r
			WHERE first IS NOT NULL
			GROUP BY 3, 4, 5, 6, 7, 8, 9, 10`, p, span, from, to); err != nil {
			return err
		}
		if err := rollupLabels(ctx, tx, p, span, bucket, from, to); err != nil {
			return err
		}
	}
	return nil
}

// maxLabelValues is the most distinct values a label key may have in a
// bucket to be split by in the label rollup; a key with more (an id put
// in a label) is recorded in result_rollup_label_overflow instead.
const maxLabelValues = 100

// rollupLabels counts the results of project p created in [from, to)
// per label key and value (result_rollup_labels, ..._label_issues),
// except for the keys with more than maxLabelValues values in a bucket.
func rollupLabels(ctx context.Context, tx pgx.Tx, p int64, span, bucket string, from, to time.Time) error {
	rows := `(SELECT ` + bucket + ` AS b, ` + rollupDims + `, passed, score, grade, issues, labels
		FROM results WHERE project_id = $1 AND created_at >= $3 AND created_at < $4 AND labels <> '{}') AS r(b, cn, cv, ag, rg, passed, score, grade, issues, labels)
		CROSS JOIN LATERAL jsonb_each_text(r.labels) AS l(key, value)`
	if _, err := tx.Exec(ctx, `INSERT INTO result_rollup_label_overflow (project_id, span, bucket, label_key)
		SELECT $1, $2, b, l.key FROM `+rows+` GROUP BY b, l.key HAVING count(DISTINCT l.value) > $5`,
		p, span, from, to, maxLabelValues); err != nil {
		return err
	}
	split := `NOT EXISTS (SELECT 1 FROM result_rollup_label_overflow o
		WHERE o.project_id = $1 AND o.label_key = l.key AND o.bucket = r.b AND o.span = $2)`
	if _, err := tx.Exec(ctx, `INSERT INTO result_rollup_labels (project_id, span, bucket, label_key, label_value,
			contract_name, contract_version, agent, regrade, n, passed, score_sum, grade_a, grade_b, grade_c, grade_d, grade_f)
		SELECT $1, $2, b, l.key, l.value, cn, cv, ag, rg, count(*), count(*) FILTER (WHERE passed), sum(score),
			count(*) FILTER (WHERE grade = 'A'), count(*) FILTER (WHERE grade = 'B'), count(*) FILTER (WHERE grade = 'C'),
			count(*) FILTER (WHERE grade = 'D'), count(*) FILTER (WHERE grade = 'F')
		FROM `+rows+` WHERE `+split+`
		GROUP BY b, l.key, l.value, cn, cv, ag, rg`, p, span, from, to); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO result_rollup_label_issues (project_id, span, bucket, label_key, label_value,
			contract_name, contract_version, agent, regrade, kind, severity, tool, n, problem)
		SELECT $1, $2, b, key, value, cn, cv, ag, rg, coalesce(first ->> 'kind', ''), coalesce(first ->> 'severity', ''),
			coalesce(first ->> 'tool', ''), count(*), min(coalesce(first ->> 'problem', ''))
		FROM (SELECT r.b, l.key, l.value, r.cn, r.cv, r.ag, r.rg, r.issues::json -> 0 AS first FROM `+rows+`
			WHERE r.issues <> '[]' AND `+split+`) x
		WHERE first IS NOT NULL
		GROUP BY b, key, value, cn, cv, ag, rg, 10, 11, 12`, p, span, from, to)
	return err
}

// compactDay replaces the hour rows of a closed UTC day with one row per
// contract version, agent and kind (and issue) for the day.
func compactDay(ctx context.Context, tx pgx.Tx, day time.Time) error {
	next := day.Add(24 * time.Hour)
	if _, err := tx.Exec(ctx, `INSERT INTO result_rollup (project_id, span, bucket, contract_name, contract_version, agent, regrade,
			n, passed, score_sum, grade_a, grade_b, grade_c, grade_d, grade_f)
		SELECT project_id, 'day', $1, contract_name, contract_version, agent, regrade,
			sum(n), sum(passed), sum(score_sum), sum(grade_a), sum(grade_b), sum(grade_c), sum(grade_d), sum(grade_f)
		FROM result_rollup WHERE span = 'hour' AND bucket >= $1 AND bucket < $2
		GROUP BY project_id, contract_name, contract_version, agent, regrade`, day, next); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO result_rollup_issues (project_id, span, bucket, contract_name, contract_version, agent, regrade,
			kind, severity, tool, n, problem)
		SELECT project_id, 'day', $1, contract_name, contract_version, agent, regrade, kind, severity, tool, sum(n), min(problem)
		FROM result_rollup_issues WHERE span = 'hour' AND bucket >= $1 AND bucket < $2
		GROUP BY project_id, contract_name, contract_version, agent, regrade, kind, severity, tool`, day, next); err != nil {
		return err
	}
	// A key that overflowed in an hour of the day, or has too many values
	// over the day, overflows the day.
	if _, err := tx.Exec(ctx, `INSERT INTO result_rollup_label_overflow (project_id, span, bucket, label_key)
		SELECT DISTINCT project_id, 'day', $1::timestamptz, label_key FROM result_rollup_label_overflow
			WHERE span = 'hour' AND bucket >= $1 AND bucket < $2
		UNION
		SELECT project_id, 'day', $1::timestamptz, label_key FROM result_rollup_labels
			WHERE span = 'hour' AND bucket >= $1 AND bucket < $2
			GROUP BY project_id, label_key HAVING count(DISTINCT label_value) > $3`, day, next, maxLabelValues); err != nil {
		return err
	}
	split := `NOT EXISTS (SELECT 1 FROM result_rollup_label_overflow o
		WHERE o.project_id = h.project_id AND o.label_key = h.label_key AND o.bucket = $1 AND o.span = 'day')`
	if _, err := tx.Exec(ctx, `INSERT INTO result_rollup_labels (project_id, span, bucket, label_key, label_value,
			contract_name, contract_version, agent, regrade, n, passed, score_sum, grade_a, grade_b, grade_c, grade_d, grade_f)
		SELECT project_id, 'day', $1, label_key, label_value, contract_name, contract_version, agent, regrade,
			sum(n), sum(passed), sum(score_sum), sum(grade_a), sum(grade_b), sum(grade_c), sum(grade_d), sum(grade_f)
		FROM result_rollup_labels h WHERE span = 'hour' AND bucket >= $1 AND bucket < $2 AND `+split+`
		GROUP BY project_id, label_key, label_value, contract_name, contract_version, agent, regrade`, day, next); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO result_rollup_label_issues (project_id, span, bucket, label_key, label_value,
			contract_name, contract_version, agent, regrade, kind, severity, tool, n, problem)
		SELECT project_id, 'day', $1, label_key, label_value, contract_name, contract_version, agent, regrade,
			kind, severity, tool, sum(n), min(problem)
		FROM result_rollup_label_issues h WHERE span = 'hour' AND bucket >= $1 AND bucket < $2 AND `+split+`
		GROUP BY project_id, label_key, label_value, contract_name, contract_version, agent, regrade, kind, severity, tool`, day, next); err != nil {
		return err
	}
	for _, t := range []string{"result_rollup", "result_rollup_issues", "result_rollup_labels", "result_rollup_label_issues", "result_rollup_label_overflow"} {
		if _, err := tx.Exec(ctx, `DELETE FROM `+t+` WHERE span = 'hour' AND bucket >= $1 AND bucket < $2`, day, next); err != nil {
			return err
		}
	}
	return nil
}

// Overview aggregates the results of a project that f selects: per UTC
// day and contract version, and the topIssues most frequent first issues.
// It reads the rollup tables for the time before rollup_state.upto (the
// label rollup for one label filter) and the results themselves after it;
// it reads the results throughout for two or more label filters, or one
// on a key with too many values to be split by. It makes six queries at
// most, each bounded by the rollup's size or by the results created since
// upto.
//
// Errors: an error for an invalid f (From not before Until, an unknown
// Regrades); engine.ErrUnavailable.
func (db *DB) Overview(ctx context.Context, projectID int64, f record.OverviewFilter, topIssues int) (record.Overview, error) {
	var out record.Overview
	if !f.From.Before(f.Until) {
		return out, errors.New("overview: From must be before Until")
	}
	if !f.Regrades.Valid() {
		return out, fmt.Errorf("overview: unknown regrades filter %q", f.Regrades)
	}
	var upto *time.Time
	if err := db.pool.QueryRow(ctx, `SELECT upto FROM rollup_state`).Scan(&upto); err != nil {
		return out, fmt.Errorf("overview: %w", translate(err))
	}
	liveFrom := f.From
	if upto != nil && len(f.Labels) <= 1 {
		liveFrom = upto.UTC()
		if liveFrom.Before(f.From) {
			liveFrom = f.From
		}
		if liveFrom.After(f.Until) {
			liveFrom = f.Until
		}
	}
	if len(f.Labels) == 1 && liveFrom.After(f.From) {
		// A key split by in no bucket of the range is read from the
		// results themselves.
		var overflow bool
		if err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM result_rollup_label_overflow
			WHERE project_id = $1 AND label_key = $2 AND bucket >= $3 AND bucket < $4)`,
			projectID, f.Labels[0].Key, f.From, liveFrom).Scan(&overflow); err != nil {
			return out, fmt.Errorf("overview: %w", translate(err))
		}
		if overflow {
			liveFrom = f.From
		}
	}
	series := map[seriesKey]*record.DayContractStats{}
	issues := map[issueKey]*record.IssueCount{}
	if liveFrom.After(f.From) {
		if err := db.overviewRollup(ctx, projectID, f, liveFrom, series, issues); err != nil {
			return out, fmt.Errorf("overview: %w", translate(err))
		}
	}
	if liveFrom.Before(f.Until) {
		if err := db.overviewLive(ctx, projectID, f, liveFrom, series, issues); err != nil {
			return out, fmt.Errorf("overview: %w", translate(err))
		}
	}
	for _, s := range series {
		out.Series = append(out.Series, *s)
	}
	slices.SortFunc(out.Series, func(a, b record.DayContractStats) int {
		return cmp.Or(a.Day.Compare(b.Day), cmp.Compare(a.ContractName, b.ContractName), cmp.Compare(a.ContractVersion, b.ContractVersion))
	})
	for _, is := range issues {
		out.TopIssues = append(out.TopIssues, *is)
	}
	slices.SortFunc(out.TopIssues, func(a, b record.IssueCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Severity, b.Severity))
	})
	if len(out.TopIssues) > topIssues {
		out.TopIssues = out.TopIssues[:topIssues]
	}
	return out, nil
}

type seriesKey struct {
	day     time.Time
	name    string
	version int
}

type issueKey struct{ kind, severity, tool string }

func addSeries(m map[seriesKey]*record.DayContractStats, s record.DayContractStats) {
	s.Day = s.Day.UTC()
	k := seriesKey{s.Day, s.ContractName, s.ContractVersion}
	if cur, ok := m[k]; ok {
		cur.Count += s.Count
		cur.Passed += s.Passed
		cur.ScoreSum += s.ScoreSum
		for i := range cur.Grades {
			cur.Grades[i] += s.Grades[i]
		}
		return
	}
	m[k] = &s
}

func addIssue(m map[issueKey]*record.IssueCount, is record.IssueCount) {
	k := issueKey{is.Kind, is.Severity, is.Tool}
	if cur, ok := m[k]; ok {
		cur.Count += is.Count
		cur.Problem = min(cur.Problem, is.Problem)
		return
	}
	m[k] = &is
}

// rollupWhere is the conditions of f on the rollup tables, for buckets in
// [f.From, until).
func rollupWhere(projectID int64, f record.OverviewFilter, until time.Time) *where {
	w := &where{}
	w.add("project_id = ?", projectID)
	w.add("bucket >= ?", f.From)
	w.add("bucket < ?", until)
	if f.ContractName != "" {
		w.add("contract_name = ?", f.ContractName)
		if f.ContractVersion > 0 {
			w.add("contract_version = ?", int32(f.ContractVersion))
		}
	}
	if f.Agent != "" {
		w.add("agent = ?", f.Agent)
	}
	if len(f.Labels) == 1 {
		l := f.Labels[0]
		w.add("label_key = ?", l.Key)
		if l.HasValue {
			w.add("label_value = ?", l.Value)
		}
	}
	switch f.Regrades {
	case record.RegradesExclude:
		w.add("NOT regrade")
	case record.RegradesOnly:
		w.add("regrade")
	}
	return w
}

func (db *DB) overviewRollup(ctx context.Context, projectID int64, f record.OverviewFilter, until time.Time,
	series map[seriesKey]*record.DayContractStats, issues map[issueKey]*record.IssueCount) error {
	w := rollupWhere(projectID, f, until)
	counts, issueCounts := "result_rollup", "result_rollup_issues"
	if len(f.Labels) == 1 {
		counts, issueCounts = "result_rollup_labels", "result_rollup_label_issues"
	}
	day := `date_trunc('day', bucket AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`
	rows, err := db.pool.Query(ctx, `SELECT `+day+`, contract_name, contract_version, sum(n), sum(passed), sum(score_sum),
			sum(grade_a), sum(grade_b), sum(grade_c), sum(grade_d), sum(grade_f)
		FROM `+counts+` WHERE `+w.sql()+` GROUP BY 1, 2, 3`, w.args...)
	if err != nil {
		return err
	}
	if err := scanSeries(rows, series); err != nil {
		return err
	}
	rows, err = db.pool.Query(ctx, `SELECT kind, severity, tool, min(problem), sum(n)
		FROM `+issueCounts+` WHERE `+w.sql()+` GROUP BY 1, 2, 3`, w.args...)
	if err != nil {
		return err
	}
	return scanIssues(rows, issues)
}

func (db *DB) overviewLive(ctx context.Context, projectID int64, f record.OverviewFilter, from time.Time,
	series map[seriesKey]*record.DayContractStats, issues map[issueKey]*record.IssueCount) error {
	w := filterWhere(projectID, record.ResultFilter{ContractName: f.ContractName, ContractVersion: f.ContractVersion,
		Agent: f.Agent, Labels: f.Labels, Since: from, Until: f.Until, Regrades: f.Regrades})
	day := `date_trunc('day', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`
	rows, err := db.pool.Query(ctx, `SELECT `+day+`, coalesce(contract_name, ''), coalesce(contract_version, 0),
			count(*), count(*) FILTER (WHERE passed), sum(score),
			count(*) FILTER (WHERE grade = 'A'), count(*) FILTER (WHERE grade = 'B'), count(*) FILTER (WHERE grade = 'C'),
			count(*) FILTER (WHERE grade = 'D'), count(*) FILTER (WHERE grade = 'F')
		FROM results WHERE `+w.sql()+` GROUP BY 1, 2, 3`, w.args...)
	if err != nil {
		return err
	}
	if err := scanSeries(rows, series); err != nil {
		return err
	}
	rows, err = db.pool.Query(ctx, `SELECT coalesce(first ->> 'kind', ''), coalesce(first ->> 'severity', ''), coalesce(first ->> 'tool', ''),
			min(coalesce(first ->> 'problem', '')), count(*)
		FROM (SELECT issues::json -> 0 AS first FROM results WHERE `+w.sql()+` AND issues <> '[]') r
		WHERE first IS NOT NULL GROUP BY 1, 2, 3`, w.args...)
	if err != nil {
		return err
	}
	return scanIssues(rows, issues)
}

func scanSeries(rows pgx.Rows, series map[seriesKey]*record.DayContractStats) error {
	defer rows.Close()
	for rows.Next() {
		var s record.DayContractStats
		var version int32
		g := &s.Grades
		if err := rows.Scan(&s.Day, &s.ContractName, &version, &s.Count, &s.Passed, &s.ScoreSum, &g[0], &g[1], &g[2], &g[3], &g[4]); err != nil {
			return err
		}
		s.ContractVersion = int(version)
		addSeries(series, s)
	}
	return rows.Err()
}

func scanIssues(rows pgx.Rows, issues map[issueKey]*record.IssueCount) error {
	defer rows.Close()
	for rows.Next() {
		var is record.IssueCount
		if err := rows.Scan(&is.Kind, &is.Severity, &is.Tool, &is.Problem, &is.Count); err != nil {
			return err
		}
		addIssue(issues, is)
	}
	return rows.Err()
}

// ListRegrades returns up to limit regrades of a project, newest first
// (created_at DESC, id DESC), continuing strictly after the cursor when it
// is non-nil.
//
// Errors: engine.ErrUnavailable.
func (db *DB) ListRegrades(ctx context.Context, projectID int64, after *record.Cursor, limit int) ([]record.Regrade, error) {
	w := &where{}
	w.add("project_id = ?", projectID)
	if after != nil {
		w.add("(created_at, id) < (?, ?)", after.CreatedAt, after.ID)
	}
	w.args = append(w.args, limit)
	rows, err := db.pool.Query(ctx, `SELECT `+regradeSelect+` FROM regrades WHERE `+w.sql()+
		` ORDER BY created_at DESC, id DESC LIMIT $`+strconv.Itoa(len(w.args)), w.args...)
	if err != nil {
		return nil, fmt.Errorf("list regrades: %w", translate(err))
	}
	defer rows.Close()
	out := []record.Regrade{}
	for rows.Next() {
		rg, err := scanRegrade(rows)
		if err != nil {
			return nil, fmt.Errorf("list regrades: %w", translate(err))
		}
		out = append(out, rg)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list regrades: %w", translate(err))
	}
	return out, nil
}

// regradeResultsQuery selects the regrade results of one original ($1) of
// a project ($2), newest first, at most $3: all of them by the index
// results_regrade (migration 00020), then sorted. OFFSET 0 keeps the
// order, the limit and the project test out of the scan, so that the plan
// does not depend on statistics: without it, Postgres may read the
// project's results in created_at order (results_project_created) until
// it has found $3, and with the project test inside it, a table without
// statistics may be scanned by any index on project_id, filtering on
// regrade_of (the costs tie). Regrade results are in their original's
// project; the outer test only guards that.
var regradeResultsQuery = `SELECT * FROM (SELECT ` + summarySelect + ` FROM results WHERE regrade_of = $1 OFFSET 0) r
	WHERE project_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3`

// ListRegradeResults returns up to limit summaries of the regrade results
// of one original result of a project, newest first (regradeResultsQuery).
//
// Errors: engine.ErrUnavailable.
func (db *DB) ListRegradeResults(ctx context.Context, projectID int64, originalID uuid.UUID, limit int) ([]record.ResultSummary, error) {
	rows, err := db.pool.Query(ctx, regradeResultsQuery, pgUUID(originalID), projectID, limit)
	if err != nil {
		return nil, fmt.Errorf("list regrade results: %w", translate(err))
	}
	defer rows.Close()
	out := []record.ResultSummary{}
	for rows.Next() {
		var r record.ResultSummary
		var s summaryScan
		if err := rows.Scan(s.dest(&r)...); err != nil {
			return nil, fmt.Errorf("list regrade results: %w", translate(err))
		}
		if err := s.fill(&r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list regrade results: %w", translate(err))
	}
	return out, nil
}

// CreateConsoleSession stores a console sign-in: the SHA-256 of its
// session token, the hash of the API key it signed in with, and when it
// expires. Sessions already expired are deleted first.
//
// Errors: engine.ErrNotFound when no key has keyHash; engine.ErrUnavailable.
func (db *DB) CreateConsoleSession(ctx context.Context, tokenHash, keyHash [32]byte, expires time.Time) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM console_sessions WHERE expires_at <= now()`); err != nil {
		return fmt.Errorf("create console session: %w", translate(err))
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO console_sessions (token_hash, key_hash, expires_at) VALUES ($1, $2, $3)`,
		tokenHash[:], keyHash[:], expires)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23503" { // foreign_key_violation
		return fmt.Errorf("create console session: the key: %w", translate(pgx.ErrNoRows))
	}
	if err != nil {
		return fmt.Errorf("create console session: %w", translate(err))
	}
	return nil
}

// ConsoleSessionKey returns the API key hash of a console session that
// has not expired.
//
// Errors: engine.ErrNotFound for an unknown or expired session;
// engine.ErrUnavailable.
func (db *DB) ConsoleSessionKey(ctx context.Context, tokenHash [32]byte) ([32]byte, error) {
	var key [32]byte
	var b []byte
	err := db.pool.QueryRow(ctx, `SELECT key_hash FROM console_sessions WHERE token_hash = $1 AND expires_at > now()`, tokenHash[:]).Scan(&b)
	if err != nil {
		return key, fmt.Errorf("console session: %w", translate(err))
	}
	copy(key[:], b)
	return key, nil
}

// DeleteConsoleSession ends a console session (signing out); an unknown
// one is no error.
//
// Errors: engine.ErrUnavailable.
func (db *DB) DeleteConsoleSession(ctx context.Context, tokenHash [32]byte) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM console_sessions WHERE token_hash = $1`, tokenHash[:]); err != nil {
		return fmt.Errorf("delete console session: %w", translate(err))
	}
	return nil
}
