package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/toolscore/toolscore/internal/jsondoc"
	"github.com/toolscore/toolscore/internal/workload"
)

// mustEvaluation rebuilds the evaluation state Evaluate hands to the
// checks, for the combination Evaluate chose. The evaluation lives in
// its scorer, which is therefore never returned to the pool.
func mustEvaluation(tb testing.TB, c *Contract, tr Trace, opts Options) *evaluation {
	tb.Helper()
	res, err := Evaluate(context.Background(), c, tr, opts)
	if err != nil {
		tb.Fatal(err)
	}
	w, err := effectiveWeights(c.Weights, opts.Weights)
	if err != nil {
		tb.Fatal(err)
	}
	sc := newScorer(c, &tr, CompareOptions{Strict: opts.Strict}, w)
	var choice []int
	if res.Metrics.Contract != nil {
		for _, ch := range res.Metrics.Contract.Alternatives.Chosen {
			choice = append(choice, ch.Option)
		}
	}
	sc.use(choice)
	return sc.evaluation(opts)
}

// runChecks runs what Evaluate adds for SPEC section 5 on a fresh memo.
func runChecks(ev *evaluation) *EvaluationResult {
	ev.memo = checkMemo{}
	res := &EvaluationResult{}
	res.Checks = ev.checks()
	res.Issues = ev.issues()
	ev.redact(res)
	return res
}

// BenchmarkChecks measures the evidence checks, the issue list and
// redaction together (what Evaluate adds to scoring), on the workloads of
// BENCHMARKS.md.
func BenchmarkChecks(b *testing.B) {
	for _, s := range []workload.Size{workload.Small, workload.Medium, workload.Large} {
		b.Run(s.Name, func(b *testing.B) {
			ev := mustEvaluation(b, mustContract(b, string(workload.Contract(s))), mustTrace(b, string(workload.PlainTrace(s))), Options{SecretScanner: testSecrets})
			b.ReportAllocs()
			start := cpuClock()
			for b.Loop() {
				runChecks(ev)
			}
			reportCPU(b, start)
		})
	}
}

// BenchmarkTextResultChecks is BenchmarkChecks on the medium workload
// with every tool result given as JSON text ({"status":"ok","ref":...}),
// as the OpenAI Chat Completions adapter gives a role "tool" message's
// content: the tool-errors check reads each such text as a possible error
// object (errorResult).
func BenchmarkTextResultChecks(b *testing.B) {
	tr := mustTrace(b, string(workload.PlainTrace(workload.Medium)))
	for i := range tr.Calls {
		text, err := json.Marshal(tr.Calls[i].Result)
		if err != nil {
			b.Fatal(err)
		}
		tr.Calls[i].Result = jsondoc.MustFromAny(string(text))
	}
	ev := mustEvaluation(b, mustContract(b, string(workload.Contract(workload.Medium))), tr, Options{SecretScanner: testSecrets})
	b.ReportAllocs()
	start := cpuClock()
	for b.Loop() {
		runChecks(ev)
	}
	reportCPU(b, start)
}

// BenchmarkErrorResult reads tool results given as text the way the
// tool-errors check does: a short JSON object (the workloads' results), a
// 4 KB one holding nested objects and arrays, and plain text.
func BenchmarkErrorResult(b *testing.B) {
	var big strings.Builder
	big.WriteString(`{"status":"ok","items":[`)
	for i := 0; big.Len() < 4<<10; i++ {
		if i > 0 {
			big.WriteByte(',')
		}
		fmt.Fprintf(&big, `{"id":%d,"name":"seat %dA","tags":["window","aisle"],"price":{"amount":%d.5,"currency":"EUR"}}`, i, i, 100+i)
	}
	big.WriteString(`],"error":null}`)
	for _, tc := range []struct{ name, text string }{
		{"object", `{"status":"ok","ref":"FL-200"}`},
		{"object-4KB", big.String()},
		{"text", "Seat 12A is reserved on flight FL-204."},
	} {
		b.Run(tc.name, func(b *testing.B) {
			v := jsondoc.MustFromAny(tc.text)
			b.SetBytes(int64(len(tc.text)))
			b.ReportAllocs()
			start := cpuClock()
			for b.Loop() {
				if errorResult(v) {
					b.Fatal("not an error")
				}
			}
			reportCPU(b, start)
		})
	}
}

// BenchmarkScoring measures what Evaluate does besides the checks, the
// issue list and redaction: score every combination and build the chosen
// one's evaluation state. It is the "without checks" figure beside
// BenchmarkChecks.
func BenchmarkScoring(b *testing.B) {
	for _, s := range []workload.Size{workload.Small, workload.Medium, workload.Large, workload.WorstCase} {
		b.Run(s.Name, func(b *testing.B) {
			c := mustContract(b, string(workload.Contract(s)))
			tr := mustTrace(b, string(workload.PlainTrace(s)))
			w, err := effectiveWeights(c.Weights, nil)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			start := cpuClock()
			for b.Loop() {
				sc := newScorer(c, &tr, CompareOptions{}, w)
				choice, _, _, err := sc.choose(ctx)
				if err != nil {
					b.Fatal(err)
				}
				sc.use(choice)
				sc.evaluation(Options{SecretScanner: testSecrets})
				sc.release()
			}
			reportCPU(b, start)
		})
	}
}

// BenchmarkCredentialScan shows the credential scan is linear in the size
// of the arguments: the medium workload's calls repeated 1x, 4x and 16x.
func BenchmarkCredentialScan(b *testing.B) {
	base := mustTrace(b, string(workload.PlainTrace(workload.Medium)))
	for _, k := range []int{1, 4, 16} {
		tr := Trace{FinalAnswer: base.FinalAnswer}
		for range k {
			tr.Calls = append(tr.Calls, base.Calls...)
		}
		b.Run(fmt.Sprintf("calls=%d", len(tr.Calls)), func(b *testing.B) {
			b.ReportAllocs()
			start := cpuClock()
			for b.Loop() {
				scanCredentials(context.Background(), &tr, testSecrets)
			}
			reportCPU(b, start)
		})
	}
}

// BenchmarkCredentialScanAnswer scans typical short final answers: one
// without any gitleaks keyword, one that mentions a key and a token (which
// runs gitleaks' generic-api-key rule, the costliest).
func BenchmarkCredentialScanAnswer(b *testing.B) {
	for _, tc := range []struct{ name, text string }{
		{"plain", "Booked flight FL-200 and sent the invoice to ana@example.com."},
		{"keywords", "I've reset your API key and emailed a new access token to ana@example.com."},
	} {
		tr := Trace{FinalAnswer: &tc.text}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			start := cpuClock()
			for b.Loop() {
				scanCredentials(context.Background(), &tr, testSecrets)
			}
			reportCPU(b, start)
		})
	}
}

// BenchmarkCredentialScanText scans final answers of 1 KB, 16 KB and 1 MB of
// prose that mentions keys and tokens (the gitleaks rules' keywords).
func BenchmarkCredentialScanText(b *testing.B) {
	const line = "The api key and token for the account are stored in the vault; they asked for access. "
	for _, n := range []int{1 << 10, 16 << 10, 1 << 20} {
		s := strings.Repeat(line, n/len(line)+1)[:n]
		tr := Trace{FinalAnswer: &s}
		b.Run(fmt.Sprintf("bytes=%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			start := cpuClock()
			for b.Loop() {
				scanCredentials(context.Background(), &tr, testSecrets)
			}
			reportCPU(b, start)
		})
	}
}

// cpuClock returns the process's user+system CPU time in nanoseconds.
func cpuClock() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// reportCPU adds a cpu-ns/op metric: the process CPU time per operation
// since start (garbage collection included). On a shared machine wall time
// (ns/op) also counts time spent waiting for a CPU; this does not.
func reportCPU(b *testing.B, start int64) {
	b.ReportMetric(float64(cpuClock()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkFinalAnswer evaluates a small trace with long final answers:
// prose, and text dense with secret-like assignments (a gitleaks match
// every ~25 bytes, the worst case for the secret scan). MB/s stays flat as
// the answer grows: the checks are linear (QA finding 5).
func BenchmarkFinalAnswer(b *testing.B) {
	c := mustContract(b, `[{"tool": "reserve_seat"}]`)
	base := mustTrace(b, traceBook)
	for _, tc := range []struct {
		name, line string
		sizes      []int
	}{
		{"prose", "Your seat 12A on flight FL-204 is reserved; the api key and token are in the vault.\n", []int{64 << 10, 1 << 20, 4 << 20}},
		{"secrets", "password: hunter2hunter2 token=abcdefghijklmnop key: QWERTYUIOPASDF ", []int{64 << 10, 256 << 10, 1 << 20}},
	} {
		for _, n := range tc.sizes {
			s := strings.Repeat(tc.line, n/len(tc.line)+1)[:n]
			tr := Trace{Calls: base.Calls, FinalAnswer: &s}
			b.Run(fmt.Sprintf("%s/bytes=%d", tc.name, n), func(b *testing.B) {
				b.SetBytes(int64(n))
				b.ReportAllocs()
				start := cpuClock()
				for b.Loop() {
					if _, err := Evaluate(context.Background(), c, tr, Options{SecretScanner: testSecrets}); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, start)
			})
		}
	}
}
