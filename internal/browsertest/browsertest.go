// Package browsertest starts headless Chromium for the browser tests of
// the HTML reports (internal/report) and the web console (internal/ui),
// driven with chromedp. The browser is Debian's chromium package, which
// .ci/run installs; without it a test is skipped, except in CI
// (CI=true), where it fails.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Chromium returns the path of a Chromium, skipping the test when there
// is none, unless in CI, where a missing browser is a failure.
func Chromium(tb testing.TB) string {
	tb.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		tb.Fatal("no chromium on PATH (CI=true): .ci/run installs Debian's chromium package")
	}
	tb.Skip("no chromium on PATH: apt-get install -y chromium")
	return ""
}

// Start launches headless Chromium with a fresh profile under dir and a
// window of width × height, and returns a browser context (new tabs:
// chromedp.NewContext of it); the browser stops when the test ends. The
// flags keep it from talking to anything but the pages it is sent to.
func Start(tb testing.TB, dir string, width, height int) context.Context {
	tb.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Chromium(tb)),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.WindowSize(width, height),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	tb.Cleanup(func() { cancelBrowser(); cancelAlloc() })
	if err := chromedp.Do(bctx); err != nil {
		tb.Fatalf("start chromium: %v", err)
	}
	return bctx
}

// Problems collects what a tab reports that a clean page never does:
// console messages, uncaught exceptions, log entries (a Content-Security-
// Policy violation is one), dialogs (alert) and requests for URLs allowed
// does not accept.
type Problems struct {
	mu   sync.Mutex
	list []string
}

// Watch starts collecting the problems of the tab ctx.
//
// Errors: chromedp's, when it cannot listen to the tab.
func Watch(ctx context.Context, allowed func(url string) bool) (*Problems, error) {
	p := &Problems{}
	err := chromedp.Listen(ctx, func(ev any) {
		p.mu.Lock()
		defer p.mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			p.list = append(p.list, "console."+string(e.Type))
		case *runtime.EventExceptionThrown:
			p.list = append(p.list, "exception: "+e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			p.list = append(p.list, "log "+string(e.Entry.Level)+": "+e.Entry.Text)
		case *page.EventJavascriptDialogOpening:
			p.list = append(p.list, "dialog: "+e.Message)
		case *network.EventRequestWillBeSent:
			if !allowed(e.Request.URL) {
				p.list = append(p.list, "request: "+e.Request.URL)
			}
		}
	})
	return p, err
}

// List returns the problems so far.
func (p *Problems) List() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.list...)
}

// Settled returns the problems once at least n have been collected (the
// tab reports them after the actions that cause them, by as long as a
// loaded machine takes) and then settle has passed, for any that trail
// them; or, when ctx ends first, what was collected by then.
func (p *Problems) Settled(ctx context.Context, n int, settle time.Duration) []string {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for len(p.List()) < n {
		select {
		case <-ctx.Done():
			return p.List()
		case <-tick.C:
		}
	}
	select {
	case <-ctx.Done():
	case <-time.After(settle):
	}
	return p.List()
}
