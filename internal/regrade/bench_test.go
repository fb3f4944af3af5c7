package regrade

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/format"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/regrade/reeval"
	"github.com/toolscore/toolscore/internal/regrade/regradetest"
	"github.com/toolscore/toolscore/internal/resultjson"
	"github.com/toolscore/toolscore/internal/workload"
)

// BenchmarkRegradeOne measures re-evaluating one stored medium result
// (decode the stored calls and options, evaluate, encode the new row).
func BenchmarkRegradeOne(b *testing.B) {
	body := workload.Contract(workload.Medium)
	c1, err := engine.ParseContract(body)
	if err != nil {
		b.Fatal(err)
	}
	var doc map[string]any
	_ = json.Unmarshal(body, &doc)
	doc["min_score"] = 0.95
	b2, _ := json.Marshal(doc)
	c2, err := engine.ParseContract(b2)
	if err != nil {
		b.Fatal(err)
	}
	parsed, err := format.Parse(workload.PlainTrace(workload.Medium), "plain")
	if err != nil {
		b.Fatal(err)
	}
	v1 := record.ContractRef{Name: "medium", Version: 1, SHA256: "1", Kind: record.KindContract}
	v2 := record.ContractRef{Name: "medium", Version: 2, SHA256: "2", Kind: record.KindContract}
	orig := regradetest.Result(b, v1, c1, parsed.Trace, regradetest.Options{SafetyGate: true}, time.Now())
	o := record.RegradeOriginal{ResultSummary: orig.ResultSummary, Options: orig.Options, TraceCalls: orig.TraceCalls,
		FinalAnswer: orig.FinalAnswer}
	b.Logf("stored row: trace_calls %d B, expected %d, metrics %d, checks %d, issues %d",
		len(orig.TraceCalls), len(orig.ExpectedCalls), len(orig.Metrics), len(orig.Checks), len(orig.Issues))
	ctx := context.Background()
	rg, id := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	enc := &resultjson.ExpectedCache{}
	var rd reeval.Reader
	b.ReportAllocs()
	for b.Loop() {
		out, err := regradeOne(ctx, testSecrets, &rd, c2, c2.RegexSizes(), v2, &o, rg, id, time.Now(), enc)
		if err != nil || out.Result == nil {
			b.Fatal(err, out.Failure)
		}
	}
}
