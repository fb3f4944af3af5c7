package store

import (
	"context"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/toolscore/toolscore/internal/record"
)

// generate fills db with the console benchmark's generated results
// (internal/ui/testdata/generate.sql): rows results over the days before
// now.
func generate(t testing.TB, db *DB, rows, days int) {
	t.Helper()
	b, err := os.ReadFile("../ui/testdata/generate.sql")
	if err != nil {
		t.Fatal(err)
	}
	sql := strings.NewReplacer(":rows", strconv.Itoa(rows), ":days", strconv.Itoa(days)).Replace(string(b))
	if _, err := db.Pool().Exec(context.Background(), sql); err != nil {
		t.Fatalf("generate: %v", err)
	}
}

// TestOverviewRollup checks that the overview gives the same aggregates
// whether it reads the results themselves (nothing rolled up yet) or the
// rollup, for every kind of filter, and that the totals are those of a
// plain count over results.
func TestOverviewRollup(t *testing.T) {
	db, _ := mustMigrated(t)
	ctx := context.Background()
	generate(t, db, 4000, 12)
	today := time.Now().UTC().Truncate(24 * time.Hour)
	base := record.OverviewFilter{From: today.AddDate(0, 0, -13), Until: today.AddDate(0, 0, 1)}
	filters := map[string]record.OverviewFilter{"all": base}
	add := func(name string, edit func(*record.OverviewFilter)) {
		f := base
		edit(&f)
		filters[name] = f
	}
	add("contract", func(f *record.OverviewFilter) { f.ContractName = "flights" })
	add("version", func(f *record.OverviewFilter) { f.ContractName, f.ContractVersion = "flights", 2 })
	add("agent", func(f *record.OverviewFilter) { f.Agent = "agent-3" })
	add("originals", func(f *record.OverviewFilter) { f.Regrades = record.RegradesExclude })
	add("regrade results", func(f *record.OverviewFilter) { f.Regrades = record.RegradesOnly })
	add("range", func(f *record.OverviewFilter) { f.From, f.Until = today.AddDate(0, 0, -5), today.AddDate(0, 0, -2) })
	add("label", func(f *record.OverviewFilter) {
		f.Labels = []record.LabelFilter{{Key: "env", Value: "prod", HasValue: true}}
	})
	add("label key", func(f *record.OverviewFilter) { f.Labels = []record.LabelFilter{{Key: "model"}} })
	add("label and agent", func(f *record.OverviewFilter) {
		f.Agent, f.Labels = "agent-3", []record.LabelFilter{{Key: "model", Value: "model-2", HasValue: true}}
	})
	add("two labels", func(f *record.OverviewFilter) {
		f.Labels = []record.LabelFilter{{Key: "env", Value: "staging", HasValue: true}, {Key: "model", Value: "model-3", HasValue: true}}
	})
	// trace holds one value per result: too many to be split by.
	add("overflowing label", func(f *record.OverviewFilter) { f.Labels = []record.LabelFilter{{Key: "trace"}} })
	if _, err := db.Pool().Exec(ctx, `UPDATE results SET labels = labels || jsonb_build_object('trace', id::text) WHERE abs(hashtext(id::text)) % 2 = 0`); err != nil {
		t.Fatal(err)
	}

	live := map[string]record.Overview{}
	for name, f := range filters {
		ov, err := db.Overview(ctx, record.DefaultProject, f, 100)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		live[name] = ov
	}

	// Roll up in steps of two days until caught up.
	now := time.Now()
	var upto time.Time
	for i := 0; ; i++ {
		u, more, err := db.Rollup(ctx, now, 48*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		upto = u
		if !more {
			break
		}
		if i > 20 {
			t.Fatal("Rollup never caught up")
		}
	}
	if want := now.UTC().Add(-RollupMargin).Truncate(time.Hour); !upto.Equal(want) {
		t.Errorf("upto %s, want %s", upto, want)
	}
	// A second round has nothing to do.
	if u, more, err := db.Rollup(ctx, now, 48*time.Hour); err != nil || more || !u.Equal(upto) {
		t.Errorf("second Rollup: %s %v %v", u, more, err)
	}
	// The label rollup splits by no key with more than 100 values in a
	// bucket: not by trace on a whole day, where it has about 170.
	var most, overflowDays int
	if err := db.Pool().QueryRow(ctx, `SELECT coalesce(max(n), 0) FROM (SELECT count(DISTINCT label_value) AS n
		FROM result_rollup_labels GROUP BY bucket, span, label_key) x`).Scan(&most); err != nil || most > 100 {
		t.Errorf("a bucket is split by %d values of a label (%v)", most, err)
	}
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM result_rollup_label_overflow WHERE label_key = 'trace' AND span = 'day'`).Scan(&overflowDays); err != nil || overflowDays < 10 {
		t.Errorf("trace overflows on %d days (%v), want 10 or more", overflowDays, err)
	}
	var envDays int
	if err := db.Pool().QueryRow(ctx, `SELECT count(DISTINCT bucket) FROM result_rollup_labels WHERE label_key = 'env' AND span = 'day'`).Scan(&envDays); err != nil || envDays < 12 {
		t.Errorf("env is split by on %d days (%v), want 12 or more", envDays, err)
	}
	// Closed days are one row per group; only the open day has hours.
	for _, tb := range []string{"result_rollup", "result_rollup_issues", "result_rollup_labels", "result_rollup_label_issues", "result_rollup_label_overflow"} {
		var hourRowsBefore int
		if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM `+tb+` WHERE span = 'hour' AND bucket < $1`,
			upto.Truncate(24*time.Hour)).Scan(&hourRowsBefore); err != nil {
			t.Fatal(err)
		}
		if hourRowsBefore != 0 {
			t.Errorf("%s: %d hour rows in closed days", tb, hourRowsBefore)
		}
	}

	floats := cmpopts.EquateApprox(0, 1e-9)
	for name, f := range filters {
		ov, err := db.Overview(ctx, record.DefaultProject, f, 100)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(live[name], ov, floats, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: rolled up differs from live (-live +rollup):\n%s", name, diff)
		}
		// The totals are a plain count's.
		w := `project_id = 1 AND created_at >= $1 AND created_at < $2`
		args := []any{f.From, f.Until}
		if f.ContractName != "" {
			w += ` AND contract_name = 'flights'`
		}
		if f.ContractVersion != 0 {
			w += ` AND contract_version = 2`
		}
		if f.Agent != "" {
			w += ` AND agent = 'agent-3'`
		}
		for _, l := range f.Labels {
			if l.HasValue {
				w += ` AND labels @> jsonb_build_object('` + l.Key + `', '` + l.Value + `')`
			} else {
				w += ` AND labels ? '` + l.Key + `'`
			}
		}
		switch f.Regrades {
		case record.RegradesExclude:
			w += ` AND regrade_id IS NULL`
		case record.RegradesOnly:
			w += ` AND regrade_id IS NOT NULL`
		}
		var n, passed, withIssue int64
		var sum float64
		if err := db.Pool().QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE passed), coalesce(sum(score), 0),
				count(*) FILTER (WHERE issues <> '[]') FROM results WHERE `+w, args...).Scan(&n, &passed, &sum, &withIssue); err != nil {
			t.Fatal(err)
		}
		var gotN, gotPassed, gotIssues int64
		var gotSum float64
		for _, s := range ov.Series {
			gotN += s.Count
			gotPassed += s.Passed
			gotSum += s.ScoreSum
			if s.Day.Before(f.From) || !s.Day.Before(f.Until) {
				t.Errorf("%s: day %s outside the range", name, s.Day)
			}
		}
		for _, is := range ov.TopIssues {
			gotIssues += is.Count
		}
		if gotN != n || gotPassed != passed || math.Abs(gotSum-sum) > 1e-6 || gotIssues != withIssue {
			t.Errorf("%s: overview counts %d results, %d passed, score sum %g, %d issues; results hold %d, %d, %g, %d",
				name, gotN, gotPassed, gotSum, gotIssues, n, passed, sum, withIssue)
		}
		if name != "regrade results" && n == 0 {
			t.Errorf("%s: the filter selects nothing: the test proves nothing", name)
		}
	}
	// The seven kinds of first issue, most frequent first.
	all := live["all"].TopIssues
	if len(all) != 7 {
		t.Fatalf("top issues: %d kinds, want 7: %+v", len(all), all)
	}
	for i := 1; i < len(all); i++ {
		if all[i].Count > all[i-1].Count {
			t.Errorf("top issues out of order: %+v", all)
		}
	}
	if ov, err := db.Overview(ctx, record.DefaultProject, base, 3); err != nil || len(ov.TopIssues) != 3 || ov.TopIssues[0] != all[0] {
		t.Errorf("topIssues 3: %+v, %v", ov.TopIssues, err)
	}
}

// TestOverviewErrors checks the refused filters.
func TestOverviewErrors(t *testing.T) {
	db, _ := mustMigrated(t)
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for name, f := range map[string]record.OverviewFilter{
		"empty range": {From: day, Until: day},
		"regrades":    {From: day, Until: day.AddDate(0, 0, 1), Regrades: "bogus"},
	} {
		if _, err := db.Overview(context.Background(), 1, f, 10); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
