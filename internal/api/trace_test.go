package api

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStringTrace checks that a JSON string trace is read as raw trace
// text: JSON Lines and Server-Sent Events streams can be sent over HTTP.
func TestStringTrace(t *testing.T) {
	b := setup(t, nil)
	sse := "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"search_flights\",\"arguments\":\"{\\\"destination\\\": \\\"LIS\\\"}\"}}]},\"finish_reason\":null}]}\n\n" +
		"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n" +
		"data: [DONE]\n\n"
	jsonl := `{"tool": "search_flights", "args": {"destination": "LIS"}}` + "\n" + `{"tool": "book_flight", "args": {"flight_id": "FL-204"}}` + "\n"
	tests := []struct {
		name, text, wantFormat string
		wantTools              []string
	}{
		{"sse", sse, "openai-stream", []string{"search_flights"}},
		{"json text", traceGood, "plain", []string{"search_flights", "get_weather", "book_flight"}},
		{"jsonl", jsonl, "plain", []string{"search_flights", "book_flight"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, _ := json.Marshal(tc.text)
			rec := b.do(t, "POST", "/v1/evaluations?store=false", body(`"gold":`+goldList, `"trace":`+string(text)))
			if rec.Code != 200 {
				t.Fatalf("status = %d %s", rec.Code, rec.Body)
			}
			v := decode[evaluationView](t, rec)
			var calls []struct {
				Tool string `json:"tool"`
			}
			if err := json.Unmarshal(v.TraceCalls, &calls); err != nil {
				t.Fatal(err)
			}
			var tools []string
			for _, c := range calls {
				tools = append(tools, c.Tool)
			}
			if diff := cmp.Diff(tc.wantTools, tools); diff != "" {
				t.Errorf("trace tools (-want +got):\n%s", diff)
			}
			if v.Format != tc.wantFormat {
				t.Errorf("format = %q, want %q", v.Format, tc.wantFormat)
			}
		})
	}
	p := problemOf(t, b.do(t, "POST", "/v1/evaluations", body(`"gold":`+goldList, `"trace":"not a trace"`)), 422, "invalid-trace")
	if len(p.Errors) != 1 || p.Errors[0].Pointer != "/trace" {
		t.Errorf("errors = %+v, want one at /trace", p.Errors)
	}
}
