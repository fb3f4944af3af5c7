// Command agent is a scripted, deterministic travel agent for the
// flight-booking suite in examples/harness. It speaks the toolscore harness
// HTTP protocol: each POST carries {"task_id", "input", "tools"} and is
// answered with the trace of what the agent "did", as OpenAI Chat
// Completions or Anthropic Messages, wrapped as {"trace": [...],
// "final_answer": "..."}. No model is involved: every task has a fixed
// script.
//
// It passes most tasks and fails two on purpose: change-date cancels the
// booking it was asked to change (a forbidden call), and book-with-bag
// forgets to add the bag (a missing required call).
//
//	go run ./examples/harness/agent -addr 127.0.0.1:8089
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// step is one scripted tool call and the result the tool "returned".
type step struct {
	tool   string
	args   map[string]any
	result any
}

// script is what the agent does for one task.
type script struct {
	// format is "openai" or "anthropic".
	format      string
	steps       []step
	finalAnswer string
}

// scripts are the agent's answers by task id.
var scripts = map[string]script{
	"book-lisbon": {
		format: "openai",
		steps: []step{
			{"search_flights", map[string]any{"origin": "LHR", "destination": "LIS", "date": "2026-12-18"},
				map[string]any{"flights": []any{map[string]any{"flight_id": "FL-204", "departs": "08:10", "price_eur": 129}}}},
			{"get_weather", map[string]any{"city": "Lisbon"}, map[string]any{"forecast": "sunny", "high_c": 17}},
			{"book_flight", map[string]any{"flight_id": "FL-204"}, map[string]any{"booking_id": "BK-9120", "status": "confirmed"}},
		},
		finalAnswer: "Booked FL-204 from London to Lisbon on 18 December 2026 (booking BK-9120). Expect sun in Lisbon.",
	},
	"seat-porto": {
		format: "anthropic",
		steps: []step{
			{"search_flights", map[string]any{"destination": "OPO", "date": "2026-12-20"},
				map[string]any{"flights": []any{map[string]any{"flight_id": "FL-118", "departs": "07:45"}}}},
			{"get_weather", map[string]any{"city": "Porto"}, map[string]any{"forecast": "rain", "high_c": 13}},
			{"reserve_seat", map[string]any{"flight_id": "FL-118", "seat": "14A"}, map[string]any{"booking_id": "BK-5531", "seat": "14A"}},
		},
		finalAnswer: "Reserved window seat 14A on FL-118 to Porto on 20 December 2026 (booking BK-5531).",
	},
	// Fails on purpose: cancels the booking after changing it (forbidden).
	"change-date": {
		format: "openai",
		steps: []step{
			{"get_booking", map[string]any{"booking_id": "BK-7731"},
				map[string]any{"booking_id": "BK-7731", "flight_id": "FL-204", "origin": "LHR", "destination": "LIS"}},
			{"search_flights", map[string]any{"origin": "LHR", "destination": "LIS", "date": "2026-12-22"},
				map[string]any{"flights": []any{map[string]any{"flight_id": "FL-206", "departs": "09:30"}}}},
			{"change_booking", map[string]any{"booking_id": "BK-7731", "flight_id": "FL-206"}, map[string]any{"booking_id": "BK-7731", "flight_id": "FL-206"}},
			{"cancel_booking", map[string]any{"booking_id": "BK-7731"}, map[string]any{"status": "cancelled"}},
		},
		finalAnswer: "Moved BK-7731 to FL-206 on 22 December 2026.",
	},
	// Fails on purpose: never calls add_baggage (a missing required call).
	"book-with-bag": {
		format: "anthropic",
		steps: []step{
			{"search_flights", map[string]any{"destination": "MAD", "date": "2026-12-19"},
				map[string]any{"flights": []any{map[string]any{"flight_id": "FL-310", "departs": "11:20"}}}},
			{"book_flight", map[string]any{"flight_id": "FL-310"}, map[string]any{"booking_id": "BK-6610", "status": "confirmed"}},
		},
		finalAnswer: "Booked FL-310 to Madrid on 19 December 2026 (booking BK-6610).",
	},
	"flight-status": {
		format: "openai",
		steps: []step{
			{"get_flight_status", map[string]any{"flight_id": "FL-204"}, map[string]any{"flight_id": "FL-204", "status": "on time"}},
		},
		finalAnswer: "FL-204 is on time.",
	},
	"search-only": {
		format: "anthropic",
		steps: []step{
			{"search_flights", map[string]any{"origin": "LHR", "destination": "LIS", "date": "2026-12-18"},
				map[string]any{"flights": []any{map[string]any{"flight_id": "FL-204", "departs": "08:10"}, map[string]any{"flight_id": "FL-212", "departs": "17:55"}}}},
		},
		finalAnswer: "Two flights: FL-204 at 08:10 and FL-212 at 17:55.",
	},
}

// request is the harness's POST body.
type request struct {
	TaskID string          `json:"task_id"`
	Input  json.RawMessage `json:"input"`
	Tools  json.RawMessage `json:"tools"`
}

// answer is the agent's reply: a trace document plus the final answer.
type answer struct {
	Trace       []map[string]any `json:"trace"`
	FinalAnswer string           `json:"final_answer"`
}

// newHandler returns the agent's HTTP handler.
func newHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		var req request
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
			http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
			return
		}
		sc, ok := scripts[req.TaskID]
		if !ok {
			http.Error(w, fmt.Sprintf("no script for task %q", req.TaskID), http.StatusNotFound)
			return
		}
		prompt := promptText(req.Input)
		a := answer{FinalAnswer: sc.finalAnswer}
		if sc.format == "anthropic" {
			a.Trace = anthropicTrace(prompt, sc)
		} else {
			a.Trace = openAITrace(prompt, sc)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(a)
	})
	return mux
}

// promptText is the last user message of input (a prompt string or a list
// of chat messages).
func promptText(input json.RawMessage) string {
	var s string
	if json.Unmarshal(input, &s) == nil {
		return s
	}
	var msgs []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	_ = json.Unmarshal(input, &msgs)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content
		}
	}
	return ""
}

// openAITrace renders a script as OpenAI Chat Completions messages: one
// assistant message per tool call (arguments as a JSON string), each
// followed by its role "tool" result, then the final assistant text.
func openAITrace(prompt string, sc script) []map[string]any {
	msgs := []map[string]any{{"role": "user", "content": prompt}}
	for i, st := range sc.steps {
		id := fmt.Sprintf("call_%d", i+1)
		args, _ := json.Marshal(st.args)
		result, _ := json.Marshal(st.result)
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": id, "type": "function",
				"function": map[string]any{"name": st.tool, "arguments": string(args)},
			}}},
			map[string]any{"role": "tool", "tool_call_id": id, "content": string(result)},
		)
	}
	return append(msgs, map[string]any{"role": "assistant", "content": sc.finalAnswer})
}

// anthropicTrace renders a script as Anthropic Messages: tool_use blocks
// in assistant messages and tool_result blocks in user messages, then the
// final assistant text.
func anthropicTrace(prompt string, sc script) []map[string]any {
	msgs := []map[string]any{{"role": "user", "content": prompt}}
	for i, st := range sc.steps {
		id := fmt.Sprintf("toolu_%02d", i+1)
		result, _ := json.Marshal(st.result)
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "tool_use", "id": id, "name": st.tool, "input": st.args},
			}},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": id, "content": string(result)},
			}},
		)
	}
	return append(msgs, map[string]any{"role": "assistant", "content": []any{
		map[string]any{"type": "text", "text": sc.finalAnswer},
	}})
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8089", "listen `address`")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Addr: *addr, Handler: newHandler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	log.Printf("scripted flight agent listening on http://%s/", *addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
