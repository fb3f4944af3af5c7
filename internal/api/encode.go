package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"github.com/toolscore/toolscore/internal/resultjson"
)

// Encoding a result is a large share of an evaluation's cost: the stored
// parts are written by internal/resultjson, expected calls (full of
// matchers) once per contract and combination (parsedContract.expected).
// Responses are assembled from the stored JSON pieces without
// re-validating them.

// encodeCalls returns the JSON of trace_calls and scored_calls (one
// buffer: a scored call that is its trace call is copied from the trace
// calls' bytes).
func encodeCalls(res *engine.EvaluationResult) (trace, scored []byte) {
	b, split := resultjson.Marshal.AppendCalls(nil, res)
	return b[:split:split], b[split:]
}

// MarshalJSON implements json.Marshaler (used inside batch answers).
func (v *evaluationView) MarshalJSON() ([]byte, error) { return v.appendJSON(nil), nil }

// appendJSON appends the view as JSON. The raw pieces are the stored,
// already valid JSON; they are copied as they are.
func (v *evaluationView) appendJSON(b []byte) []byte {
	n := 512 + len(v.FormatWarning) + len(v.Options) + len(v.Metrics) + len(v.ExpectedCalls) + len(v.TraceCalls) + len(v.ScoredCalls) +
		len(v.ScoredIndexes) + len(v.Checks) + len(v.Issues)
	if v.FinalAnswer != nil {
		n += len(*v.FinalAnswer) + 16
	}
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), len(b)+n)
		copy(nb, b)
		b = nb
	}
	b = append(b, '{')
	if v.ID != "" {
		b = appendStringField(b, "id", v.ID)
		b = append(b, `"created_at":"`...)
		b = v.CreatedAt.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `",`...)
	}
	if v.RegradeOf != "" {
		b = appendStringField(b, "regrade_of", v.RegradeOf)
	}
	if v.RegradeID != "" {
		b = appendStringField(b, "regrade_id", v.RegradeID)
	}
	b = append(b, `"stored":`...)
	b = strconv.AppendBool(b, v.Stored)
	b = append(b, `,"contract":{`...)
	if v.Contract.Name != "" {
		b = appendStringField(b, "name", v.Contract.Name)
		b = append(b, `"version":`...)
		b = strconv.AppendInt(b, int64(v.Contract.Version), 10)
		b = append(b, ',')
	}
	b = appendStringField(b, "sha256", v.Contract.SHA256)
	b = append(b, `"kind":`...)
	b = appendString(b, v.Contract.Kind)
	b = append(b, "},"...)
	for _, f := range []struct{ k, v string }{{"task_id", v.TaskID}, {"run_id", v.RunID}, {"agent", v.Agent}} {
		if f.v != "" {
			b = appendStringField(b, f.k, f.v)
		}
	}
	if len(v.Labels) > 0 {
		labels := v.labelsJSON // encoded once with the result
		if labels == nil {
			labels, _ = json.Marshal(v.Labels) // a map[string]string always encodes
		}
		b = append(b, `"labels":`...)
		b = append(b, labels...)
		b = append(b, ',')
	}
	b = appendStringField(b, "format", v.Format)
	if v.FormatWarning != "" {
		b = appendStringField(b, "format_warning", v.FormatWarning)
	}
	b = append(b, `"score":`...)
	b = appendFloat(b, v.Score)
	b = appendStringField(append(b, ','), "grade", v.Grade)
	b = append(b, `"passed":`...)
	b = strconv.AppendBool(b, v.Passed)
	b = append(b, `,"min_score":`...)
	b = appendFloat(b, v.MinScore)
	b = append(b, `,"safety_gate":`...)
	b = strconv.AppendBool(b, v.SafetyGate)
	for _, f := range []struct {
		k string
		v json.RawMessage
	}{{"options", v.Options}, {"metrics", v.Metrics}, {"expected_calls", v.ExpectedCalls}, {"trace_calls", v.TraceCalls},
		{"scored_calls", v.ScoredCalls}, {"scored_indexes", v.ScoredIndexes}} {
		b = appendRawField(b, f.k, f.v)
	}
	b = append(b, `,"final_answer":`...)
	if v.FinalAnswer == nil {
		b = append(b, "null"...)
	} else {
		b = appendString(b, *v.FinalAnswer)
	}
	b = appendRawField(b, "checks", v.Checks)
	b = appendRawField(b, "issues", v.Issues)
	return append(b, '}')
}

// appendRawField appends ,"k":raw (null for empty raw).
func appendRawField(b []byte, k string, raw json.RawMessage) []byte {
	b = append(b, ',', '"')
	b = append(b, k...)
	b = append(b, '"', ':')
	if len(raw) == 0 {
		return append(b, "null"...)
	}
	return append(b, bytes.TrimSpace(raw)...)
}

// appendStringField appends "k":"v", (with the trailing comma).
func appendStringField(b []byte, k, v string) []byte {
	b = append(b, '"')
	b = append(b, k...)
	b = append(b, '"', ':')
	return append(appendString(b, v), ',')
}

// appendString appends s as a JSON string, escaped as encoding/json does.
func appendString(b []byte, s string) []byte {
	return jsondoc.AppendString(b, s)
}

// appendFloat appends the score f as encoding/json does.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		panic(fmt.Sprintf("api: non-finite score %v", f)) // the engine never returns one
	}
	return jsondoc.AppendFloat(b, f)
}

// answerBuffers holds buffers for writeEvaluation's answers (*[]byte):
// an answer is written before its handler returns, so its buffer can
// serve the next one.
var answerBuffers sync.Pool

// maxPooledAnswer is the largest buffer answerBuffers keeps, so that one
// large answer does not stay in memory.
const maxPooledAnswer = 256 << 10

// writeEvaluation sends one evaluation as JSON, the answer to r.
func writeEvaluation(w http.ResponseWriter, r *http.Request, status int, v evaluationView) {
	bp, _ := answerBuffers.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	b := v.appendJSON((*bp)[:0])
	sendWhole(w, r, status, b)
	if cap(b) <= maxPooledAnswer {
		*bp = b
		answerBuffers.Put(bp)
	}
}
