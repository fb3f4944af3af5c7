package ui_test

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/toolscore/toolscore/internal/auth"
	"github.com/toolscore/toolscore/internal/browsertest"
	"github.com/toolscore/toolscore/internal/store"
	"github.com/toolscore/toolscore/internal/store/storetest"
	"github.com/toolscore/toolscore/internal/ui"
)

var screenshots = flag.Bool("screenshot", false, "write the console's screenshots kept in docs/ui.md to docs/img")

// notFoundLog is what Chromium logs for a page answered 404 (or 400): the
// only message an error page may cause.
func statusLog(code string) string {
	return "log error: Failed to load resource: the server responded with a status of " + code
}

// TestConsoleInBrowser opens every page of the console in headless
// Chromium: each renders its heading and content, logs no console message
// (so the Content-Security-Policy blocked nothing), throws no exception,
// opens no dialog, requests nothing from another origin, fits a 1280 px
// window without scrolling sideways and gives a screenshot that is not
// blank. Markup stored in a trace shows as text. A running harness run's
// page follows its progress and shows the finished run when it ends.
// With -screenshot the screenshots docs/ui.md shows are written to
// docs/img.
func TestConsoleInBrowser(t *testing.T) {
	f := newFixture(t)
	live, finish := seedRun(t, f.db, 3, 2)
	month := generatedConsole(t)
	dir := t.TempDir()
	bctx := browsertest.Start(t, dir, 1280, 900)
	pages := []struct {
		name, base, path string
		texts            []string
		// status is the page's HTTP status when not 200.
		status string
		shot   string
	}{
		{"overview", f.url, "/ui/", []string{"Overview", "evaluations 4", "Most frequent top issues"}, "", ""},
		{"overview-month", month, "/ui/", []string{"Evaluations per day", "Pass rate per day, by contract version", "flights@3"}, "", "ui-overview.png"},
		{"evaluations", f.url, "/ui/evaluations", []string{"lisbon-1", "evil-1"}, "", ""},
		{"evaluations-month", month, "/ui/evaluations?contract=flights&passed=false", []string{"FAIL"}, "", ""},
		{"latest", f.url, "/ui/evaluations?latest=true", []string{"latest verdicts", "regrade of original"}, "", ""},
		{"evaluation", f.url, "/ui/evaluations/" + f.good, []string{"PASS score 0.967", "Trace: 3 calls", "Evidence: 7 pass"}, "", "ui-evaluation.png"},
		{"evil", f.url, "/ui/evaluations/" + f.evil, []string{evilScript + " booked", "note=" + evilScript, "<b>agent</b>"}, "", ""},
		{"regrade-result", f.url, "/ui/evaluations/" + f.regood, []string{"This is a regrade result", "Its original"}, "", ""},
		{"contracts", f.url, "/ui/contracts", []string{"flights"}, "", ""},
		{"contract-diff", f.url, "/ui/contracts/flights?a=1&b=2", []string{"flights@1 → flights@2", `"min_score": 0.99`}, "", "ui-contract-diff.png"},
		{"regrades", f.url, "/ui/regrades", []string{"flights@2", "completed"}, "", ""},
		{"regrade", f.url, "/ui/regrades/" + f.rg, []string{"Regrade to flights@2", "pass→fail"}, "", "ui-regrade.png"},
		{"runs", f.url, "/ui/runs", []string{"flight-suite"}, "", ""},
		{"run", f.url, "/ui/runs/" + f.run, []string{"Harness run of flight-suite", "book-lisbon", "agent-down"}, "", "ui-run.png"},
		{"not-found", f.url, "/ui/evaluations/01a2290e-7d9f-7ed6-92f2-4772fdded5b2", []string{"404 Not found"}, "404 (Not Found)", ""},
		{"bad-filter", f.url, "/ui/evaluations?grade=E", []string{"400 Bad filter", `The filter "grade" is wrong`}, "400 (Bad Request)", ""},
	}
	for _, pg := range pages {
		t.Run(pg.name, func(t *testing.T) {
			ctx, cancel := chromedp.NewContext(bctx)
			defer cancel()
			ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
			defer cancelTimeout()
			watch, err := browsertest.Watch(ctx, sameOrigin(pg.base))
			if err != nil {
				t.Fatal(err)
			}
			text, shot := load(t, ctx, pg.base+pg.path)
			for _, want := range pg.texts {
				if !strings.Contains(text, want) {
					t.Errorf("the page lacks %q; it reads:\n%s", want, text)
				}
			}
			scripts, err := chromedp.Run(ctx, chromedp.Evaluate[int]("document.scripts.length"))
			if err != nil {
				t.Fatal(err)
			}
			if scripts != 1 {
				t.Errorf("%d script elements, want the console's one", scripts)
			}
			var want []string
			if pg.status != "" {
				want = []string{statusLog(pg.status)}
			}
			if got := watch.Settled(ctx, len(want), 200*time.Millisecond); !slices.Equal(got, want) {
				t.Errorf("console, exceptions, dialogs or requests: %q, want %q", got, want)
			}
			if pg.shot != "" && *screenshots {
				if err := os.WriteFile(filepath.Join("..", "..", "docs", "img", pg.shot), shot, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}

	t.Run("sign-in", func(t *testing.T) {
		af := newAuthFixture(t)
		ctx, cancel := chromedp.NewContext(bctx)
		defer cancel()
		ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
		defer cancelTimeout()
		watch, err := browsertest.Watch(ctx, sameOrigin(af.url))
		if err != nil {
			t.Fatal(err)
		}
		// A pasted link sends to the sign-in form, which returns to it.
		text, _ := load(t, ctx, af.url+"/ui/evaluations/"+af.resultA)
		if !strings.Contains(text, "Sign in with an API key that has the read scope") {
			t.Fatalf("no sign-in form: %s", text)
		}
		if err := chromedp.Do(ctx, chromedp.SendKeys("#key", af.readA), chromedp.Submit("#key"),
			chromedp.WaitVisible("#project")); err != nil {
			t.Fatalf("sign in: %v", err)
		}
		text, err = chromedp.Run(ctx, chromedp.Text("body"))
		if err != nil {
			t.Fatal(err)
		}
		text = strings.Join(strings.Fields(text), " ")
		for _, want := range []string{"project default · key " + auth.DisplayPrefix(af.readA), "task task-of-default"} {
			if !strings.Contains(text, want) {
				t.Errorf("after signing in the page lacks %q: %s", want, text)
			}
		}
		if err := chromedp.Do(ctx, chromedp.Click("header form button"), chromedp.WaitVisible("#key")); err != nil {
			t.Fatalf("sign out: %v", err)
		}
		if got := watch.List(); len(got) > 0 {
			t.Errorf("console, exceptions, dialogs or requests: %q", got)
		}
	})

	t.Run("live", func(t *testing.T) {
		ctx, cancel := chromedp.NewContext(bctx)
		defer cancel()
		ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
		defer cancelTimeout()
		watch, err := browsertest.Watch(ctx, sameOrigin(f.url))
		if err != nil {
			t.Fatal(err)
		}
		text, _ := load(t, ctx, f.url+"/ui/runs/"+live)
		for _, want := range []string{"state running", "tasks done 2 / 3", "Running: this page follows its progress"} {
			if !strings.Contains(text, want) {
				t.Errorf("the running run's page lacks %q; it reads:\n%s", want, text)
			}
		}
		finish()
		// The script polls every 2 s and reloads the page when the run is
		// final: wait for the finished page.
		if err := chromedp.Do(ctx, chromedp.WaitNotPresent("#live-note")); err != nil {
			t.Fatalf("the page did not follow the run to its end: %v", err)
		}
		text, err = chromedp.Run(ctx, chromedp.Text("main"))
		if err != nil {
			t.Fatal(err)
		}
		text = strings.Join(strings.Fields(text), " ")
		for _, want := range []string{"state completed", "tasks done 3 / 3", "seat-porto pass"} {
			if !strings.Contains(text, want) {
				t.Errorf("the finished run's page lacks %q; it reads:\n%s", want, text)
			}
		}
		if got := watch.List(); len(got) > 0 {
			t.Errorf("console, exceptions, dialogs or requests: %q", got)
		}
	})
}

// sameOrigin accepts requests to base and the browser's own data: URLs
// (the icon of a date field).
func sameOrigin(base string) func(string) bool {
	return func(u string) bool { return strings.HasPrefix(u, base+"/") || strings.HasPrefix(u, "data:") }
}

// load opens url in the tab ctx and returns the text of its main element
// (white space collapsed) and a full-page screenshot, checking that the
// page fits 1280 px and the screenshot is not blank.
func load(t *testing.T, ctx context.Context, url string) (string, []byte) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(url), chromedp.WaitVisible("main h1")); err != nil {
		t.Fatalf("load %s: %v", url, err)
	}
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(title, "toolscore console: ") {
		t.Errorf("title %q", title)
	}
	text, err := chromedp.Run(ctx, chromedp.Text("main"))
	if err != nil {
		t.Fatal(err)
	}
	scrollWidth, err := chromedp.Run(ctx, chromedp.Evaluate[int]("document.documentElement.scrollWidth"))
	if err != nil {
		t.Fatal(err)
	}
	if scrollWidth > 1280 {
		t.Errorf("the page is %d px wide in a 1280 px window", scrollWidth)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	colors := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colors[r>>12<<8|g>>12<<4|bl>>12] = true
		}
	}
	if b.Dx() != 1280 || len(colors) < 8 {
		t.Errorf("screenshot %d px wide with %d colours", b.Dx(), len(colors))
	}
	return strings.Join(strings.Fields(text), " "), shot
}

// generatedConsole serves a console (without regrades or runs) on a
// database holding a month of generated results
// (testdata/generate.sql), rolled up as the server does, and returns its
// URL.
func generatedConsole(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{URL: storetest.NewDatabase(t), Logger: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	generate(t, db, 20000, 30)
	for {
		_, more, err := db.Rollup(ctx, time.Now(), 7*24*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if !more {
			break
		}
	}
	hs := httptest.NewServer(http.StripPrefix("", ui.New(ui.Config{Store: db, AuthOff: true}).Handler()))
	t.Cleanup(hs.Close)
	return hs.URL
}
