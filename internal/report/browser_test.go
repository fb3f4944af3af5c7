package report

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

var screenshot = flag.Bool("screenshot", false, "write docs/img/report-eval.png from the browser test")

// chromium returns the path of a Chromium (Debian's chromium package,
// which .ci/run installs), skipping the test when there is none, unless in
// CI, where a missing browser is a failure.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH (CI=true): .ci/run installs Debian's chromium package")
	}
	t.Skip("no chromium on PATH: apt-get install -y chromium")
	return ""
}

// TestHTMLInBrowser opens every kind of HTML report in headless Chromium:
// each renders its heading and sections, logs no console message, throws
// no exception, asks the network for nothing, fits a 1280 px wide window
// without scrolling sideways, and gives a screenshot 1280 px wide that is
// not blank. With -screenshot the one-trace report's screenshot is
// written to docs/img.
func TestHTMLInBrowser(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	pages := []struct {
		name  string
		write func(*bytes.Buffer) error
		texts []string
		// problems is true for a page made to break the rules, to show
		// the test sees it.
		problems bool
	}{
		{"eval", func(b *bytes.Buffer) error { return WriteEvalHTML(b, evalFixture(t, unsafeTrace, goodTrace)) },
			[]string{"score 0.788 (78.8%)", "Compared with the baseline", "Alternatives (2 combinations)", "Trace: 3 calls", "Top issues to fix", "Evidence: 2 pass, 3 fail, 2 unknown"}, false},
		{"batch", func(b *bytes.Buffer) error { return WriteBatchHTML(b, batchFixture(t)) },
			[]string{"4 traces against contract.json", "Grades", "Scores", "Worst traces", "Traces that could not be graded (1)"}, false},
		{"harness", func(b *bytes.Buffer) error {
			rep := harnessFixture()
			return WriteHarnessHTML(b, rep, CompareHarness(harnessBaseline(t), rep, DefaultMaxDrop))
		}, []string{"suite flight-booking", "Regression: 2 tasks regressed", "Tasks"}, false},
		{"injected", func(b *bytes.Buffer) error {
			err := WriteEvalHTML(b, evalFixture(t, goodTrace, ""))
			b.WriteString(`<script>console.log("x")</script><img src="http://127.0.0.1:9/x.png">`)
			return err
		}, nil, true},
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	for _, pg := range pages {
		t.Run(pg.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := pg.write(&buf); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, pg.name+".html")
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			pageURL := (&url.URL{Scheme: "file", Path: path}).String()
			ctx, cancel := chromedp.NewContext(bctx)
			defer cancel()
			ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
			defer cancelTimeout()
			var mu sync.Mutex
			var problems []string
			err := chromedp.Listen(ctx, func(ev any) {
				mu.Lock()
				defer mu.Unlock()
				switch e := ev.(type) {
				case *runtime.EventConsoleAPICalled:
					problems = append(problems, "console."+string(e.Type))
				case *runtime.EventExceptionThrown:
					problems = append(problems, "exception: "+e.ExceptionDetails.Text)
				case *log.EventEntryAdded:
					problems = append(problems, "log "+string(e.Entry.Level)+": "+e.Entry.Text)
				case *network.EventRequestWillBeSent:
					if e.Request.URL != pageURL {
						problems = append(problems, "request: "+e.Request.URL)
					}
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(pageURL), chromedp.WaitVisible("main h1")); err != nil {
				t.Fatalf("load %s: %v", pageURL, err)
			}
			title, err := chromedp.Run(ctx, chromedp.Title())
			if err != nil {
				t.Fatal(err)
			}
			text, err := chromedp.Run(ctx, chromedp.Text("main"))
			if err != nil {
				t.Fatal(err)
			}
			scrollWidth, err := chromedp.Run(ctx, chromedp.Evaluate[int]("document.documentElement.scrollWidth"))
			if err != nil {
				t.Fatal(err)
			}
			shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(title, "toolscore") {
				t.Errorf("title %q", title)
			}
			for _, want := range pg.texts {
				if !strings.Contains(strings.Join(strings.Fields(text), " "), want) {
					t.Errorf("rendered text lacks %q", want)
				}
			}
			if scrollWidth > 1280 {
				t.Errorf("the page is %d px wide in a 1280 px window", scrollWidth)
			}
			// The page's events may trail the actions a little.
			time.Sleep(200 * time.Millisecond)
			mu.Lock()
			if got := len(problems) > 0; got != pg.problems {
				t.Errorf("console, exceptions or requests: %v (want some: %v)", problems, pg.problems)
			}
			mu.Unlock()
			img, err := png.Decode(bytes.NewReader(shot))
			if err != nil {
				t.Fatalf("screenshot: %v", err)
			}
			if w := img.Bounds().Dx(); w != 1280 {
				t.Errorf("screenshot %d px wide, want 1280", w)
			}
			colors := map[uint32]bool{}
			b := img.Bounds()
			for y := b.Min.Y; y < b.Max.Y; y += 7 {
				for x := b.Min.X; x < b.Max.X; x += 7 {
					r, g, bl, _ := img.At(x, y).RGBA()
					colors[r>>12<<8|g>>12<<4|bl>>12] = true
				}
			}
			if len(colors) < 8 {
				t.Errorf("the screenshot looks blank: %d colours", len(colors))
			}
			if *screenshot && pg.name == "eval" {
				if err := os.WriteFile(filepath.Join("..", "..", "docs", "img", "report-eval.png"), shot, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
