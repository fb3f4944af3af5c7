package api

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolscore/toolscore/internal/workload"
)

// TestEvaluateReaderReuse checks that a result evaluate returned does not
// change when later evaluations read their traces into the format.Reader
// its trace was read with (Server.readers): its final answer, warning and
// encoded parts are its own.
func TestEvaluateReaderReuse(t *testing.T) {
	s := New(Config{Store: newFakeStore(), Registerer: prometheus.NewRegistry(), Workers: 1, AuthOff: true})
	defer s.Close()
	request := func(size workload.Size, answer bool) []byte {
		m := map[string]any{"contract": json.RawMessage(workload.Contract(size)), "trace": json.RawMessage(workload.OpenAITrace(size))}
		if answer {
			m["final_answer"] = "Booked FL-200 for you."
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	id := uuid.MustParse("01890000-0000-7000-8000-000000000001")
	evaluate := func(data []byte) []byte {
		in, err := decodeEvaluation(data)
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.evaluate(context.Background(), in, 1, id)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, first := range []workload.Size{workload.Small, workload.Medium, workload.Large} {
		in, err := decodeEvaluation(request(first, false))
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.evaluate(context.Background(), in, 1, id)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, next := range []workload.Size{workload.Large, workload.Small, workload.Medium} {
			evaluate(request(next, true))
			evaluate(request(next, false))
		}
		if got, err := json.Marshal(out); err != nil || string(got) != string(want) {
			t.Fatalf("%s: the result changed after later evaluations:\n%s\nwas\n%s", first.Name, got, want)
		}
		if again := evaluate(request(first, false)); string(again) != string(want) {
			t.Fatalf("%s: evaluated again after others:\n%s\nfirst\n%s", first.Name, again, want)
		}
	}
}
