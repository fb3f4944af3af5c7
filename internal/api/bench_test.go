package api

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolscore/toolscore/internal/workload"
)

// BenchmarkCreateEvaluation measures one POST /v1/evaluations of the
// benchmark workloads through the whole handler (decode, pool, engine,
// encode) on a fake store: ?store=false and stored.
func BenchmarkCreateEvaluation(b *testing.B) {
	for _, size := range []workload.Size{workload.Small, workload.Medium, workload.Large} {
		req, err := json.Marshal(map[string]any{
			"contract": json.RawMessage(workload.Contract(size)),
			"trace":    json.RawMessage(workload.OpenAITrace(size)),
			"task_id":  "task-1", "agent": "agent-1",
		})
		if err != nil {
			b.Fatal(err)
		}
		for _, target := range []string{"/v1/evaluations?store=false", "/v1/evaluations"} {
			name := size.Name + "/dry-run"
			if !strings.Contains(target, "store=false") {
				name = size.Name + "/stored"
			}
			b.Run(name, func(b *testing.B) {
				st := newFakeStore()
				s := New(Config{Store: st, Registerer: prometheus.NewRegistry(), Workers: 1, AuthOff: true})
				defer s.Close()
				h := s.Handler()
				b.SetBytes(int64(len(req)))
				b.ReportAllocs()
				for b.Loop() {
					r := httptest.NewRequest("POST", target, strings.NewReader(string(req)))
					r.Header.Set("Content-Type", "application/json")
					w := httptest.NewRecorder()
					h.ServeHTTP(w, r)
					if w.Code != 200 && w.Code != 201 {
						b.Fatalf("status %d: %s", w.Code, w.Body)
					}
					st.reset()
				}
			})
		}
	}
}
