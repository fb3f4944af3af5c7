package store

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/regrade/regradetest"
)

// regradeLink is the regrade link of a result.
type regradeLink struct{ Of, ID uuid.UUID }

// linksFromSQL reads every result's link straight from the table: id ->
// (regrade_of, regrade_id), zero for an original.
func linksFromSQL(t *testing.T, db *DB) map[uuid.UUID]regradeLink {
	t.Helper()
	rows, err := db.pool.Query(context.Background(),
		`SELECT id, coalesce(regrade_of, '00000000-0000-0000-0000-000000000000'), coalesce(regrade_id, '00000000-0000-0000-0000-000000000000') FROM results`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[uuid.UUID]regradeLink{}
	for rows.Next() {
		var id uuid.UUID
		var l regradeLink
		if err := rows.Scan(&id, &l.Of, &l.ID); err != nil {
			t.Fatal(err)
		}
		out[id] = l
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// regradedTwice is a fixture of 2 traceBoth and 3 traceSearch originals
// at flights v1, regraded to v2 twice: 5 originals, 10 regrade results.
func regradedTwice(t *testing.T) (*regradeFixture, [2]uuid.UUID) {
	t.Helper()
	f := newRegradeFixture(t, 2, 3)
	var rgs [2]uuid.UUID
	for i := range rgs {
		rg := f.create(t, 1000, record.RegradeSelection{ContractName: "flights"})
		f.runAll(t, rg)
		rgs[i] = rg.ID
	}
	return f, rgs
}

func TestResultsReadRegradeLink(t *testing.T) {
	f, rgs := regradedTwice(t)
	ctx := context.Background()
	links := linksFromSQL(t, f.db)
	if len(links) != 15 {
		t.Fatalf("%d results, want 15", len(links))
	}
	perRegrade := map[uuid.UUID]int{}
	perOriginal := map[uuid.UUID]int{}
	for id, l := range links {
		if l.ID == uuid.Nil {
			continue
		}
		perRegrade[l.ID]++
		perOriginal[l.Of]++
		if links[l.Of] != (regradeLink{}) {
			t.Errorf("result %s regrades %s, which is not an original", id, l.Of)
		}
	}
	if diff := cmp.Diff(map[uuid.UUID]int{rgs[0]: 5, rgs[1]: 5}, perRegrade); diff != "" {
		t.Errorf("regrade results per regrade (-want +got):\n%s", diff)
	}
	if len(perOriginal) != 5 {
		t.Errorf("regraded originals = %d, want 5", len(perOriginal))
	}

	// Every read path gives the stored link: GetResult, GetResults,
	// ListResults.
	ids := make([]uuid.UUID, 0, len(links))
	for id := range links {
		ids = append(ids, id)
	}
	for _, id := range ids {
		r, err := f.db.GetResult(ctx, 1, id)
		if err != nil {
			t.Fatal(err)
		}
		if got := (regradeLink{r.RegradeOf, r.RegradeID}); got != links[id] {
			t.Errorf("GetResult(%s) link = %+v, want %+v", id, got, links[id])
		}
		if r.IsRegrade() != (links[id].ID != uuid.Nil) {
			t.Errorf("GetResult(%s).IsRegrade() = %v", id, r.IsRegrade())
		}
	}
	rs, err := f.db.GetResults(ctx, 1, ids)
	if err != nil || len(rs) != 15 {
		t.Fatalf("GetResults = %d, %v", len(rs), err)
	}
	for i, r := range rs {
		if r.ID != ids[i] || (regradeLink{r.RegradeOf, r.RegradeID}) != links[r.ID] {
			t.Errorf("GetResults[%d] = %s link %s/%s, want %s link %+v", i, r.ID, r.RegradeOf, r.RegradeID, ids[i], links[ids[i]])
		}
	}
	all, err := f.db.ListResults(ctx, 1, record.ResultFilter{}, nil, 100)
	if err != nil || len(all) != 15 {
		t.Fatalf("ListResults = %d, %v", len(all), err)
	}
	got := map[uuid.UUID]regradeLink{}
	for _, r := range all {
		got[r.ID] = regradeLink{r.RegradeOf, r.RegradeID}
	}
	if diff := cmp.Diff(links, got); diff != "" {
		t.Errorf("ListResults links (-table +listed):\n%s", diff)
	}

	// The latest verdict of each original is its result of the second
	// regrade, link included.
	latest, err := f.db.ListLatestResults(ctx, 1, record.ResultFilter{}, nil, 10)
	if err != nil || len(latest) != 5 {
		t.Fatalf("ListLatestResults = %d, %v", len(latest), err)
	}
	for _, lr := range latest {
		if lr.Result.RegradeOf != lr.Original.ID || lr.Result.RegradeID != rgs[1] || links[lr.Result.ID] != (regradeLink{lr.Original.ID, rgs[1]}) {
			t.Errorf("latest of %s = %s link %s/%s, want the second regrade's (%s)", lr.Original.ID, lr.Result.ID, lr.Result.RegradeOf, lr.Result.RegradeID, rgs[1])
		}
	}

	// A regrade reads originals, which have no link.
	rg := f.create(t, 1000, record.RegradeSelection{ContractName: "flights"})
	chunks := f.plan(t, rg.ID)
	planned, err := f.db.GetRegrade(ctx, 1, rg.ID)
	if err != nil {
		t.Fatal(err)
	}
	originals, err := f.db.ReadRegradeChunk(ctx, planned, chunks[0])
	if err != nil || len(originals) != 5 {
		t.Fatalf("ReadRegradeChunk = %d, %v", len(originals), err)
	}
	for _, o := range originals {
		if o.RegradeOf != uuid.Nil || o.RegradeID != uuid.Nil || o.Unreadable != "" {
			t.Errorf("original %s read with link %s/%s (%q)", o.ID, o.RegradeOf, o.RegradeID, o.Unreadable)
		}
	}
}

func TestListResultsRegradesFilter(t *testing.T) {
	f, _ := regradedTwice(t)
	ctx := context.Background()
	links := linksFromSQL(t, f.db)
	yes := true
	for _, tc := range []struct {
		name string
		f    record.ResultFilter
		want int
		keep func(regradeLink) bool
	}{
		{"zero", record.ResultFilter{}, 15, func(regradeLink) bool { return true }},
		{"include", record.ResultFilter{Regrades: record.RegradesInclude}, 15, func(regradeLink) bool { return true }},
		{"exclude", record.ResultFilter{Regrades: record.RegradesExclude}, 5, func(l regradeLink) bool { return l.ID == uuid.Nil }},
		{"only", record.ResultFilter{Regrades: record.RegradesOnly}, 10, func(l regradeLink) bool { return l.ID != uuid.Nil }},
		// traceSearch passes v1 (3 originals) and fails v2; traceBoth
		// passes v2 (2 originals x 2 regrades).
		{"exclude passed", record.ResultFilter{Regrades: record.RegradesExclude, Passed: &yes, ContractName: "flights"}, 3,
			func(l regradeLink) bool { return l.ID == uuid.Nil }},
		{"only passed", record.ResultFilter{Regrades: record.RegradesOnly, Passed: &yes, ContractName: "flights", ContractVersion: 2}, 4,
			func(l regradeLink) bool { return l.ID != uuid.Nil }},
	} {
		got, err := f.db.ListResults(ctx, 1, tc.f, nil, 100)
		if err != nil || len(got) != tc.want {
			t.Errorf("%s: ListResults = %d, %v; want %d", tc.name, len(got), err, tc.want)
			continue
		}
		for i, r := range got {
			if !tc.keep(links[r.ID]) {
				t.Errorf("%s: listed %s (link %+v)", tc.name, r.ID, links[r.ID])
			}
			if tc.f.Passed != nil && !r.Passed {
				t.Errorf("%s: listed a failing result %s", tc.name, r.ID)
			}
			if i > 0 && (r.CreatedAt.After(got[i-1].CreatedAt) || r.CreatedAt.Equal(got[i-1].CreatedAt) && r.ID.String() > got[i-1].ID.String()) {
				t.Errorf("%s: item %d out of (created_at, id) DESC order", tc.name, i)
			}
		}
		// Paging by twos gives the same rows.
		var paged []record.ResultSummary
		var after *record.Cursor
		for {
			pg, err := f.db.ListResults(ctx, 1, tc.f, after, 2)
			if err != nil {
				t.Fatal(err)
			}
			paged = append(paged, pg...)
			if len(pg) < 2 {
				break
			}
			after = &record.Cursor{CreatedAt: pg[1].CreatedAt, ID: pg[1].ID}
		}
		if diff := cmp.Diff(got, paged); diff != "" {
			t.Errorf("%s: pages of 2 differ from one page (-one +paged):\n%s", tc.name, diff)
		}
	}
	for _, bad := range []record.RegradesFilter{"none", "INCLUDE"} {
		if _, err := f.db.ListResults(ctx, 1, record.ResultFilter{Regrades: bad}, nil, 10); err == nil || errors.Is(err, engine.ErrUnavailable) {
			t.Errorf("ListResults(regrades %q) = %v, want an error", bad, err)
		}
	}
}

func TestStatsRegradesFilter(t *testing.T) {
	f, _ := regradedTwice(t)
	ctx := context.Background()
	// Originals: 2 traceBoth at v1 (D, fail) and 3 traceSearch (A, pass).
	// Each regrade adds at v2: 2 traceBoth (A, pass) and 3 traceSearch (A,
	// fail).
	both2 := regradetest.Result(t, f.v2, f.c2, traceBoth, regradetest.Options{SafetyGate: true}, t0)
	search2 := regradetest.Result(t, f.v2, f.c2, traceSearch, regradetest.Options{SafetyGate: true}, t0)
	if f.both.Grade != "D" || f.both.Passed || f.search.Grade != "A" || !f.search.Passed ||
		both2.Grade != "A" || !both2.Passed || search2.Grade != "A" || search2.Passed {
		t.Fatalf("fixture verdicts: v1 %s %v, %s %v; v2 %s %v, %s %v", f.both.Grade, f.both.Passed, f.search.Grade, f.search.Passed,
			both2.Grade, both2.Passed, search2.Grade, search2.Passed)
	}
	grades := func(a, d int64) map[string]int64 { return map[string]int64{"A": a, "B": 0, "C": 0, "D": d, "F": 0} }
	v1 := record.StatsGroup{Key: "flights@1", Count: 5, Passed: 3, MeanScore: (2*f.both.Score + 3*f.search.Score) / 5, Grades: grades(3, 2)}
	v2 := record.StatsGroup{Key: "flights@2", Count: 10, Passed: 4, MeanScore: (4*both2.Score + 6*search2.Score) / 10, Grades: grades(10, 0)}
	agentAll := record.StatsGroup{Key: "agent-a", Count: 15, Passed: 7,
		MeanScore: (2*f.both.Score + 3*f.search.Score + 4*both2.Score + 6*search2.Score) / 15, Grades: grades(13, 2)}
	agentOrig := v1
	agentOrig.Key = "agent-a"
	agentRegr := v2
	agentRegr.Key = "agent-a"
	approx := cmp.Comparer(func(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 })
	for _, tc := range []struct {
		regrades record.RegradesFilter
		g        record.StatsGroupBy
		want     []record.StatsGroup
	}{
		{"", record.GroupByContractVersion, []record.StatsGroup{v1, v2}},
		{record.RegradesInclude, record.GroupByContractVersion, []record.StatsGroup{v1, v2}},
		{record.RegradesExclude, record.GroupByContractVersion, []record.StatsGroup{v1}},
		{record.RegradesOnly, record.GroupByContractVersion, []record.StatsGroup{v2}},
		// QA's case: the agent's count is its evaluations, not those
		// plus every regrade of them.
		{"", record.GroupByAgent, []record.StatsGroup{agentAll}},
		{record.RegradesExclude, record.GroupByAgent, []record.StatsGroup{agentOrig}},
		{record.RegradesOnly, record.GroupByAgent, []record.StatsGroup{agentRegr}},
	} {
		got, err := f.db.Stats(ctx, 1, record.ResultFilter{Regrades: tc.regrades}, tc.g)
		if err != nil {
			t.Fatalf("Stats(%q, %s): %v", tc.regrades, tc.g, err)
		}
		if diff := cmp.Diff(tc.want, got, approx); diff != "" {
			t.Errorf("Stats(regrades %q, %s) (-want +got):\n%s", tc.regrades, tc.g, diff)
		}
	}
	if _, err := f.db.Stats(ctx, 1, record.ResultFilter{Regrades: "none"}, record.GroupByAgent); err == nil || errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("Stats(regrades none) = %v, want an error", err)
	}
}
