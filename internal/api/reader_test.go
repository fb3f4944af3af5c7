package api

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/workload"
)

// streamTrace is an OpenAI chat.completion.chunk list (a JSON array) that
// streams one call then answer in two pieces: the format puts the message
// back together and reads it with the Reader's parser, so the answer's
// text (decoded, for its escapes) is in the Reader's memory, which the
// parser's Reset lets the next trace write over.
func streamTrace(answer1, answer2 string) string {
	chunk := func(id, delta string) string {
		return `{"id":"` + id + `","object":"chat.completion.chunk","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}`
	}
	text := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return "[" + chunk("chatcmpl-r", `{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"search_flights","arguments":"{\"to\":\"LIS\"}"}}]}`) + "," +
		`{"id":"chatcmpl-r","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]},` +
		chunk("chatcmpl-s", `{"role":"assistant","content":`+text(answer1)+`}`) + "," +
		chunk("chatcmpl-s", `{"content":`+text(answer2)+`}`) + "]"
}

// TestEvaluateReaderReuse checks that a result evaluate returned does not
// change when later evaluations read their traces into the format.Reader
// its trace was read with (Server.readers): its final answer, warning and
// encoded parts are its own. The traces differ in their answers (a
// streamed answer is in the Reader's memory) and warnings, and each
// result's answer and warning are checked exactly, when it is returned
// and after the others.
func TestEvaluateReaderReuse(t *testing.T) {
	s := New(Config{Store: newFakeStore(), Registerer: prometheus.NewRegistry(), Workers: 1, AuthOff: true})
	defer s.Close()
	type trace struct {
		name, contract, trace string
		answer, warning       string // as the result holds them
	}
	const workloadAnswer = "Booked flight FL-200 and sent the invoice."
	warning := func(n int) string {
		return fmt.Sprintf("the trace has no calls, though %d values in it look like tool calls or results that the openai format does not read: tool_call_id at /1/tool_call_id, tool_call_id at /2/tool_call_id, ...", n)
	}
	unread := func(n int) string {
		doc := `[{"role":"user","content":"hi"}`
		for i := range n {
			doc += fmt.Sprintf(`,{"role":"tool","tool_call_id":"c%d","content":"4%d"}`, i, i)
		}
		return doc + `,{"role":"assistant","content":"done \u00e9` + fmt.Sprint(n) + `"}]`
	}
	contract := string(workload.Contract(workload.Small))
	traces := []trace{
		{"small", contract, string(workload.OpenAITrace(workload.Small)), workloadAnswer, ""},
		{"medium", string(workload.Contract(workload.Medium)), string(workload.OpenAITrace(workload.Medium)), workloadAnswer, ""},
		{"large", string(workload.Contract(workload.Large)), string(workload.OpenAITrace(workload.Large)), workloadAnswer, ""},
		{"stream A", contract, streamTrace("Booked \u00e9 FL-1\n", "on the 18th."), "Booked \u00e9 FL-1\non the 18th.", ""},
		{"stream B", contract, streamTrace("Failed \u00e8 XY-9\n", "try again!!"), "Failed \u00e8 XY-9\ntry again!!", ""},
		{"unread 3", contract, unread(3), "done \u00e93", warning(3)},
		{"unread 4", contract, unread(4), "done \u00e94", warning(4)},
	}
	id := uuid.MustParse("01890000-0000-7000-8000-000000000001")
	evaluate := func(tc trace, answer bool) (*record.Result, []byte) {
		m := map[string]any{"contract": json.RawMessage(tc.contract), "trace": json.RawMessage(tc.trace)}
		if answer {
			m["final_answer"] = "Booked FL-200 for you."
		}
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		in, err := decodeEvaluation(data)
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.evaluate(context.Background(), in, 1, id)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		return out, b
	}
	// claims checks the final answer and the warning of out, tc's result.
	claims := func(when string, tc trace, out *record.Result) {
		t.Helper()
		if out.FinalAnswer == nil || *out.FinalAnswer != tc.answer {
			got := "<nil>"
			if out.FinalAnswer != nil {
				got = *out.FinalAnswer
			}
			t.Errorf("%s %s: final answer %q, want %q", tc.name, when, got, tc.answer)
		}
		if out.FormatWarning != tc.warning {
			t.Errorf("%s %s: warning %q, want %q", tc.name, when, out.FormatWarning, tc.warning)
		}
	}
	for _, first := range traces {
		out, want := evaluate(first, false)
		claims("at first", first, out)
		for i := range traces {
			next := traces[len(traces)-1-i]
			evaluate(next, true)
			evaluate(next, false)
		}
		claims("after later evaluations", first, out)
		if got, err := json.Marshal(out); err != nil || string(got) != string(want) {
			t.Fatalf("%s: the result changed after later evaluations:\n%s\nwas\n%s", first.name, got, want)
		}
		if _, again := evaluate(first, false); string(again) != string(want) {
			t.Fatalf("%s: evaluated again after others:\n%s\nfirst\n%s", first.name, again, want)
		}
	}
}
