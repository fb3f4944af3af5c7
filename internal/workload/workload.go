// Package workload generates the deterministic benchmark workloads of
// BENCHMARKS.md: a contract and a trace of a given size, as JSON documents,
// so the engine benchmarks, the checks benchmarks and the service load test
// all measure the same inputs.
package workload

import (
	"encoding/json"
	"fmt"
)

// Size describes a workload: Expected calls in the contract, Calls in the
// trace, and Groups alternatives groups of two options each (2^Groups
// combinations).
type Size struct {
	Name     string
	Expected int
	Calls    int
	Groups   int
}

// The named workloads of BENCHMARKS.md.
var (
	// Small is 3 expected calls against 3 trace calls.
	Small = Size{Name: "small", Expected: 3, Calls: 3}
	// Medium is 10 expected calls (one alternatives group) against 12
	// trace calls with nested arguments.
	Medium = Size{Name: "medium", Expected: 10, Calls: 12, Groups: 1}
	// Large is 50 expected calls against 60 trace calls.
	Large = Size{Name: "large", Expected: 50, Calls: 60, Groups: 1}
	// WorstCase is a contract with 256 combinations against 50 calls.
	WorstCase = Size{Name: "worst-case", Expected: 40, Calls: 50, Groups: 8}
)

var tools = []string{"search_flights", "get_weather", "book_flight", "reserve_seat", "send_email", "lookup_customer", "create_invoice", "charge_card"}

// args returns nested arguments for call i.
func args(i int) map[string]any {
	return map[string]any{
		"query":  fmt.Sprintf("trip %d to Lisbon", i),
		"date":   fmt.Sprintf("2026-12-%02d", 1+i%28),
		"limit":  10 + i%5,
		"filter": map[string]any{"max_price": 500.5, "tags": []any{"direct", "window"}, "cabin": map[string]any{"class": "economy", "bags": i % 3}},
	}
}

// Contract returns the contract of size s as JSON: Expected calls over a
// rotating tool list with regex, one_of and approx matchers, the last
// Groups expected calls each replaced by a two-option alternatives group,
// one optional and one forbidden entry.
func Contract(s Size) []byte {
	var required []any
	plain := s.Expected - s.Groups
	for i := 0; i < plain; i++ {
		a := args(i)
		a["date"] = map[string]any{"$regex": "^2026-12-"}
		a["limit"] = map[string]any{"$one_of": []any{10, 11, 12, 13, 14}}
		a["filter"].(map[string]any)["max_price"] = map[string]any{"$approx": 500.5}
		required = append(required, map[string]any{"tool": tools[i%len(tools)], "args": a})
	}
	for g := 0; g < s.Groups; g++ {
		i := plain + g
		required = append(required, map[string]any{
			"id": fmt.Sprintf("g%d", g),
			"alternatives": []any{
				[]any{map[string]any{"tool": "book_flight", "args": map[string]any{"flight_id": map[string]any{"$regex": `^FL-\d+$`}}}},
				[]any{map[string]any{"tool": tools[i%len(tools)], "args": args(i)}},
			},
		})
	}
	c := map[string]any{
		"contract_version": 2,
		"required":         required,
		"optional":         []any{map[string]any{"tool": "get_time"}},
		"forbidden":        []any{map[string]any{"tool": "cancel_booking", "reason": "never cancel"}},
		"min_score":        0.8,
	}
	b, _ := json.Marshal(c)
	return b
}

// calls returns the trace calls of size s: the expected calls in order
// (every fourth with one argument changed), then extra calls.
func calls(s Size) []map[string]any {
	var out []map[string]any
	for i := 0; i < s.Calls; i++ {
		a := args(i % s.Expected)
		if i%4 == 3 {
			a["limit"] = 99
		}
		out = append(out, map[string]any{
			"tool":   tools[(i%s.Expected)%len(tools)],
			"args":   a,
			"id":     fmt.Sprintf("call_%d", i),
			"result": map[string]any{"status": "ok", "ref": fmt.Sprintf("FL-%d", 200+i)},
		})
	}
	return out
}

// PlainTrace returns the trace of size s in the plain format:
// {"calls": [{tool, args, id, result}], "final_answer"}.
func PlainTrace(s Size) []byte {
	b, _ := json.Marshal(map[string]any{"calls": calls(s), "final_answer": "Booked flight FL-200 and sent the invoice."})
	return b
}

// OpenAITrace returns the trace of size s as an OpenAI Chat Completions
// message list: one assistant message per call (arguments as a JSON
// string), each followed by its role "tool" result, then the final answer.
func OpenAITrace(s Size) []byte {
	msgs := []any{map[string]any{"role": "user", "content": "Book me a flight to Lisbon in December."}}
	for _, c := range calls(s) {
		argText, _ := json.Marshal(c["args"])
		res, _ := json.Marshal(c["result"])
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": c["id"], "type": "function",
				"function": map[string]any{"name": c["tool"], "arguments": string(argText)},
			}}},
			map[string]any{"role": "tool", "tool_call_id": c["id"], "content": string(res)},
		)
	}
	msgs = append(msgs, map[string]any{"role": "assistant", "content": "Booked flight FL-200 and sent the invoice."})
	b, _ := json.Marshal(msgs)
	return b
}
