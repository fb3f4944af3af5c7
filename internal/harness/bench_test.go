package harness

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// benchTasks is the number of tasks per run in BenchmarkRun.
const benchTasks = 256

// benchContract is the seed's flight contract (SPEC section 4).
const benchContract = `{"contract_version":2,
 "required":[{"tool":"search_flights","args":{"destination":"LIS","date":{"$regex":"^2026-12-"}}},
  {"id":"book","alternatives":[[{"tool":"book_flight","args":{"flight_id":{"$regex":"^FL-\\d+$"}}}],
   [{"tool":"reserve_seat","args":{"flight_id":{"$regex":"^FL-\\d+$"}}}]]}],
 "optional":[{"tool":"get_weather"}],
 "forbidden":[{"tool":"cancel_booking","reason":"never cancel an existing booking"}],
 "weights":{"required_call_recall":0.3},"min_score":0.9}`

// benchAnswer is an instant agent's answer: an OpenAI message list with
// three tool calls, their results and a final answer.
const benchAnswer = `{"trace":[
 {"role":"user","content":"Book me a flight to Lisbon on 18 December."},
 {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"search_flights","arguments":"{\"destination\":\"LIS\",\"date\":\"2026-12-18\"}"}}]},
 {"role":"tool","tool_call_id":"c1","content":"{\"flights\":[{\"flight_id\":\"FL-204\"}]}"},
 {"role":"assistant","content":null,"tool_calls":[{"id":"c2","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Lisbon\"}"}}]},
 {"role":"tool","tool_call_id":"c2","content":"{\"forecast\":\"sunny\"}"},
 {"role":"assistant","content":null,"tool_calls":[{"id":"c3","type":"function","function":{"name":"reserve_seat","arguments":"{\"flight_id\":\"FL-204\",\"seat\":\"14A\"}"}}]},
 {"role":"tool","tool_call_id":"c3","content":"{\"booking_id\":\"BK-9120\"}"},
 {"role":"assistant","content":"Reserved seat 14A on FL-204 (booking BK-9120)."}],
 "final_answer":"Reserved seat 14A on FL-204 (booking BK-9120)."}`

// benchSuite is benchTasks tasks graded by grading (a "contract" or
// "gold" member).
func benchSuite(b *testing.B, grading string) *Suite {
	b.Helper()
	tasks := make([]string, benchTasks)
	for i := range tasks {
		tasks[i] = fmt.Sprintf(`{"id":"t%d","input":"Book me a flight to Lisbon.",%s}`, i, grading)
	}
	s, err := ParseSuite([]byte(`{"name":"bench","tasks":[`+strings.Join(tasks, ",")+`]}`), ".json")
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkRun measures the harness's cost per task against an instant
// agent at concurrency 16: asking, reading the trace, grading it with the
// engine and summarising. One op is a run of benchTasks tasks; tasks/s is
// the throughput.
//
//   - in-process: the seed's flight contract and an OpenAI trace of three
//     calls with results and a final answer (auto-detected), agent in
//     process;
//
//   - http: the same through a local HTTP agent (httptest);
//
//   - minimal: a one-call gold file and a one-call plain trace, to show the
//     harness's own overhead with grading nearly free.
//
//     go test ./internal/harness -run '^$' -bench BenchmarkRun -benchtime 40x
func BenchmarkRun(b *testing.B) {
	answer := []byte(benchAnswer)
	contract := `"contract":` + benchContract
	b.Run("in-process", func(b *testing.B) {
		runner := RunnerFunc(func(context.Context, *Request) ([]byte, error) { return answer, nil })
		benchRun(b, benchSuite(b, contract), runner)
	})
	b.Run("minimal", func(b *testing.B) {
		plain := []byte(`[{"tool":"lookup","args":{"id":"x"}}]`)
		runner := RunnerFunc(func(context.Context, *Request) ([]byte, error) { return plain, nil })
		benchRun(b, benchSuite(b, `"gold":[{"tool":"lookup","args":{"id":"x"}}]`), runner)
	})
	b.Run("http", func(b *testing.B) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(answer)
		}))
		defer srv.Close()
		runner, err := NewHTTPRunner(srv.URL, 16)
		if err != nil {
			b.Fatal(err)
		}
		benchRun(b, benchSuite(b, contract), runner)
	})
}

func benchRun(b *testing.B, s *Suite, runner Runner) {
	// One untimed run first: the engine's one-time set-up (secret rules)
	// and the agent's connections are not part of the per-task cost.
	if _, err := Run(context.Background(), s, runner, Options{Concurrency: 16}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		rep, err := Run(context.Background(), s, runner, Options{Concurrency: 16})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Summary.Passed != benchTasks {
			b.Fatalf("passed %d of %d: %+v", rep.Summary.Passed, benchTasks, rep.Summary.Failing)
		}
	}
	b.ReportMetric(float64(b.N*benchTasks)/b.Elapsed().Seconds(), "tasks/s")
	b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N*benchTasks), "µs/task")
}
