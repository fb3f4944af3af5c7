// Command perflines writes the batch workload of BENCHMARKS.md: N traces
// of a Python-reference workload as JSON Lines (internal/workload's
// WritePerfLines), and with -gold that workload's gold file, so that
//
//	go run ./internal/workload/perflines -n 100000 -gold /tmp/medium_gold.json > /tmp/medium.jsonl
//	toolscore eval --each-line /tmp/medium_gold.json /tmp/medium.jsonl
//
// grades 100,000 medium traces as the Python reference's evaluate_trace
// loop would.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/toolscore/toolscore/internal/workload"
)

func main() {
	name := flag.String("workload", "medium", "small, medium or large")
	n := flag.Int("n", 100000, "number of traces (lines)")
	gold := flag.String("gold", "", "also write the workload's gold file to `FILE`")
	flag.Parse()
	if err := run(*name, *n, *gold); err != nil {
		fmt.Fprintln(os.Stderr, "perflines:", err)
		os.Exit(1)
	}
}

func run(name string, n int, goldPath string) error {
	if n < 0 {
		return fmt.Errorf("-n must not be negative, got %d", n)
	}
	if goldPath != "" {
		gold, _, err := workload.Perf(name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(goldPath, gold, 0o644); err != nil {
			return err
		}
	}
	return workload.WritePerfLines(os.Stdout, name, n)
}
