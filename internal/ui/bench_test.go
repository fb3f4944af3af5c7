package ui_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/regrade"
	"github.com/toolscore/toolscore/internal/store"
	"github.com/toolscore/toolscore/internal/store/storetest"
	"github.com/toolscore/toolscore/internal/ui"
)

// BenchmarkConsole measures the console's pages on generated results
// (testdata/generate.sql), each page as the handler serves it (the
// database's time included). TOOLSCORE_UI_BENCH_DATABASE_URL names a
// database already filled, e.g. with 1,000,000 results (BENCHMARKS.md,
// "Web console"); without it a fresh test database gets 10,000, so that
// CI runs every page once. The overview's aggregates are brought up to
// date first, as the server does.
func BenchmarkConsole(b *testing.B) {
	ctx := context.Background()
	url := os.Getenv("TOOLSCORE_UI_BENCH_DATABASE_URL")
	fresh := url == ""
	if fresh {
		url = storetest.NewDatabase(b)
	}
	db, err := store.Open(ctx, store.Config{URL: url, Logger: zap.NewNop()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(db.Close)
	if _, err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	if fresh {
		generate(b, db, 10000, 90)
	}
	for {
		_, more, err := db.Rollup(ctx, time.Now(), 7*24*time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		if !more {
			break
		}
	}
	regrades, err := regrade.New(regrade.Config{Store: db, DatabaseURL: url, Logger: zap.NewNop()})
	if err != nil {
		b.Fatal(err)
	}
	h := ui.New(ui.Config{Store: db, Regrades: regrades, AuthOff: true}).Handler()

	// Ids to open: the newest original with a regrade result, the
	// regrade, and a cursor two pages deep.
	rgs, err := db.ListRegrades(ctx, record.DefaultProject, nil, 1)
	if err != nil || len(rgs) == 0 {
		b.Fatalf("no regrade: %v", err)
	}
	var original string
	if err := db.Pool().QueryRow(ctx, `SELECT regrade_of FROM results WHERE regrade_id = $1 LIMIT 1`, rgs[0].ID).Scan(&original); err != nil {
		b.Fatal(err)
	}
	from := time.Now().UTC().AddDate(0, 0, -89).Format("2006-01-02")
	pages := []struct{ name, path string }{
		{"overview", "/ui/"},
		{"overview-90d", "/ui/?from=" + from},
		{"overview-90d-contract", "/ui/?from=" + from + "&contract=flights&version=2"},
		{"overview-90d-agent", "/ui/?from=" + from + "&agent=agent-3&regrades=include"},
		{"overview-label", "/ui/?label=env=staging"},
		{"overview-90d-label", "/ui/?from=" + from + "&label=model=model-2"},
		{"overview-two-labels", "/ui/?label=env=staging&label=model=model-3"},
		{"evaluations", "/ui/evaluations"},
		{"evaluations-failed-flights", "/ui/evaluations?contract=flights&passed=false"},
		{"evaluations-grade-agent", "/ui/evaluations?agent=agent-2&grade=A"},
		{"evaluations-label", "/ui/evaluations?label=model=model-3&passed=true"},
		{"evaluations-task", "/ui/evaluations?task_id=task-42"},
		{"evaluations-latest", "/ui/evaluations?latest=true"},
		{"evaluations-latest-failed", "/ui/evaluations?latest=true&contract=flights&passed=false"},
		{"evaluations-regrades", "/ui/evaluations?regrades=only"},
		{"evaluation", "/ui/evaluations/" + original},
		{"contracts", "/ui/contracts"},
		{"contract-diff", "/ui/contracts/flights?a=1&b=3"},
		{"regrades", "/ui/regrades"},
		{"regrade", "/ui/regrades/" + rgs[0].ID.String()},
	}
	for _, pg := range pages {
		b.Run(pg.name, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, pg.path, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d: %s", pg.path, rec.Code, rec.Body.String())
				}
			}
		})
	}
}
