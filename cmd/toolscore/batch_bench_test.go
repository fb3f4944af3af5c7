package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/format"
	"github.com/toolscore/toolscore/internal/workload"
)

// benchLines is the number of medium traces per benchmark iteration.
const benchLines = 1000

// perfBatch writes the medium gold file and benchLines medium traces as
// JSON Lines to a temporary directory and returns their paths.
func perfBatch(b *testing.B) (gold, lines string) {
	b.Helper()
	g, _, err := workload.Perf("medium")
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := workload.WritePerfLines(&buf, "medium", benchLines); err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	gold, lines = filepath.Join(dir, "medium_gold.json"), filepath.Join(dir, "medium.jsonl")
	if err := os.WriteFile(gold, g, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(lines, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	return gold, lines
}

// BenchmarkBatch times `toolscore eval --each-line` on benchLines medium
// traces (the Python reference's medium workload, internal/workload), with
// one worker and with one per core, printing the summary or every result
// as JSON. ns/trace is the wall time per trace, cpu-ns/trace the process's
// CPU time per trace (steadier on a shared machine); compare jobs=1 with
// BenchmarkBatchLoop for the batch path's own cost.
func BenchmarkBatch(b *testing.B) {
	gold, lines := perfBatch(b)
	for _, jobs := range []int{1, runtime.GOMAXPROCS(0)} {
		for _, asJSON := range []bool{false, true} {
			b.Run(fmt.Sprintf("jobs=%d/json=%v", jobs, asJSON), func(b *testing.B) {
				args := []string{"eval", "--each-line", "--jobs", fmt.Sprint(jobs)}
				if asJSON {
					args = append(args, "--json")
				}
				args = append(args, gold, lines)
				cpu := processCPU()
				for b.Loop() {
					var errb bytes.Buffer
					if code := run(context.Background(), args, stdio{in: bytes.NewReader(nil), out: io.Discard, err: &errb}); code == exitError {
						b.Fatalf("exit %d: %s", code, errb.String())
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchLines), "ns/trace")
				b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N*benchLines), "cpu-ns/trace")
			})
		}
	}
}

// BenchmarkBatchLoop is the engine's share of BenchmarkBatch: the same
// lines, already in memory, each read as a batch worker reads it (one
// format.Reader) and graded (engine.Evaluate) in turn on one goroutine.
func BenchmarkBatchLoop(b *testing.B) {
	gold, lines := perfBatch(b)
	g, err := os.ReadFile(gold)
	if err != nil {
		b.Fatal(err)
	}
	c, err := engine.ParseContract(g)
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(lines)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var docs [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		docs = append(docs, bytes.Clone(sc.Bytes()))
	}
	ctx := context.Background()
	rd := format.NewReader()
	cpu := processCPU()
	for b.Loop() {
		for _, d := range docs {
			p, err := rd.Parse(d, "auto")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := engine.Evaluate(ctx, c, p.Trace, engine.Options{SecretScanner: secretScanner()}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(docs)), "ns/trace")
	b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N*len(docs)), "cpu-ns/trace")
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
