package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/record"
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

// TestFormatWarning checks that the trace format's warning (the CLI's
// "warning:" line) is in the answer as format_warning, stored, and read
// back by GET and in the list's items; a trace read without one has no
// format_warning member.
func TestFormatWarning(t *testing.T) {
	b := setup(t, nil)
	const want = "the trace has no calls, though 1 value in it looks like tool calls or results that the openai-responses format does not read: type function_call_output at /0/type"
	trace := `[{"type":"function_call_output","call_id":"c1","output":"ok"}]`
	rec := b.do(t, "POST", "/v1/evaluations", body(`"gold":`+goldList, `"trace":`+trace))
	if rec.Code != 201 {
		t.Fatalf("status = %d %s", rec.Code, rec.Body)
	}
	v := decode[evaluationView](t, rec)
	if v.Format != "openai-responses" || v.FormatWarning != want {
		t.Errorf("POST: format, format_warning = %q, %q; want openai-responses, %q", v.Format, v.FormatWarning, want)
	}
	got := b.do(t, "GET", "/v1/evaluations/"+v.ID, "")
	if got.Code != 200 {
		t.Fatalf("GET: status = %d %s", got.Code, got.Body)
	}
	if g := decode[evaluationView](t, got); g.FormatWarning != want {
		t.Errorf("GET: format_warning = %q, want %q", g.FormatWarning, want)
	}
	if !strings.Contains(got.Body.String(), `"format":"openai-responses","format_warning":`+strconvQuote(want)+`,"score":`) {
		t.Errorf("GET body does not hold format_warning after format: %s", got.Body)
	}
	// The list items carry it too; one stored without a warning has none.
	stored := decode[evaluationView](t, b.do(t, "POST", "/v1/evaluations", body(`"gold":`+goldList, `"trace":`+traceGood)))
	list := decode[page[evaluationSummaryView]](t, b.do(t, "GET", "/v1/evaluations", ""))
	warnings := map[string]string{}
	for _, it := range list.Items {
		warnings[it.ID] = it.FormatWarning
	}
	if diff := cmp.Diff(map[string]string{v.ID: want, stored.ID: ""}, warnings); diff != "" {
		t.Errorf("GET /v1/evaluations: format_warning by id (-want +got):\n%s", diff)
	}
	// The same through a string trace (raw text), and a dry run.
	text, _ := json.Marshal(trace)
	dry := decode[evaluationView](t, b.do(t, "POST", "/v1/evaluations?store=false", body(`"gold":`+goldList, `"trace":`+string(text))))
	if dry.FormatWarning != want {
		t.Errorf("dry run: format_warning = %q, want %q", dry.FormatWarning, want)
	}
	plain := b.do(t, "POST", "/v1/evaluations?store=false", body(`"gold":`+goldList, `"trace":`+traceGood))
	if strings.Contains(plain.Body.String(), "format_warning") {
		t.Errorf("a trace without a warning answered with format_warning: %s", plain.Body)
	}
}

// strconvQuote is s as a JSON string.
func strconvQuote(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// TestFormatWarningRedacted checks that a secret in a member name the
// format warning quotes is stored and answered redacted.
func TestFormatWarningRedacted(t *testing.T) {
	b := setup(t, nil)
	key := "tool_call_" + fakeGitHub
	trace := `[{"type":"function_call_output","call_id":"c1","output":"ok",` + strconvQuote(key) + `:"x"}]`
	rec := b.do(t, "POST", "/v1/evaluations", body(`"gold":`+goldList, `"trace":`+trace))
	if rec.Code != 201 {
		t.Fatalf("status = %d %s", rec.Code, rec.Body)
	}
	const want = "the trace has no calls, though 2 values in it look like tool calls or results that the openai-responses format does not read: " +
		"type function_call_output at /0/type, tool_call_[REDACTED:github-pat] at /0/tool_call_[REDACTED:github-pat]"
	v := decode[evaluationView](t, rec)
	if v.FormatWarning != want {
		t.Errorf("format_warning = %q, want %q", v.FormatWarning, want)
	}
	stored, err := b.store.GetResult(context.Background(), record.DefaultProject, uuid.MustParse(v.ID))
	if err != nil || stored.FormatWarning != want {
		t.Errorf("stored format warning = %q, %v; want %q", stored.FormatWarning, err, want)
	}
}
