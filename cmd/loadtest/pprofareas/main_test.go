package main

import (
	"strings"
	"testing"
)

// TestReport puts the samples of a small -traces listing in their areas.
func TestReport(t *testing.T) {
	const traces = `File: server
Type: cpu
-----------+-------------------------------------------------------
      30ms   runtime.futex
             runtime.notewakeup
             runtime.startm
-----------+-------------------------------------------------------
      50ms   github.com/toolscore/toolscore/internal/engine.Evaluate
             github.com/toolscore/toolscore/internal/api.(*Server).createEvaluation
-----------+-------------------------------------------------------
      10ms   syscall.write (inline)
             internal/poll.(*FD).Write
             net/http.(*conn).serve
-----------+-------------------------------------------------------
     0.01s   runtime.gcDrain
             runtime.gcBgMarkWorker
-----------+-------------------------------------------------------
`
	var b strings.Builder
	if err := report(&b, strings.NewReader(traces), true); err != nil {
		t.Fatal(err)
	}
	want := `total 0.10s
 50.0%  handler: engine.Evaluate
        50.0% github.com/toolscore/toolscore/internal/engine.Evaluate <- github.com/toolscore/toolscore/internal/api.(*Server).createEvaluation
 30.0%  runtime scheduler (park/wake/futex/netpoll/syscall enter-exit)
        30.0% runtime.futex <- runtime.notewakeup
 10.0%  gc (mark, sweep, assists)
        10.0% runtime.gcDrain <- runtime.gcBgMarkWorker
 10.0%  socket read/write syscalls
        10.0% syscall.write <- internal/poll.(*FD).Write
`
	if got := b.String(); got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}
}
