package api

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// This file holds the request hot path's JSON work that encoding/json does
// slowly through reflection, on the JSON layer (internal/jsondoc):
// encoding trace calls and splitting the top-level request object in one
// pass. Both give exactly what encoding/json gives (tests compare them),
// and anything unusual falls back to encoding/json.

// appendToolCall appends c as encoding/json encodes an engine.ToolCall
// (TestAppendToolCall keeps the two in step, field by field).
func appendToolCall(b []byte, c *engine.ToolCall) ([]byte, error) {
	var err error
	b = append(b, `{"tool":`...)
	b = jsondoc.AppendString(b, c.Tool)
	b = append(b, `,"args":`...)
	if b, err = jsondoc.AppendAny(b, c.Args); err != nil {
		return nil, err
	}
	if c.ID != "" {
		b = append(b, `,"id":`...)
		b = jsondoc.AppendString(b, c.ID)
	}
	if c.HasResult() {
		b = append(b, `,"result":`...)
		if b, err = jsondoc.AppendAny(b, c.Result); err != nil {
			return nil, err
		}
	}
	if c.Error != "" {
		b = append(b, `,"error":`...)
		b = jsondoc.AppendString(b, string(c.Error))
	}
	if c.ArgsRaw != "" {
		b = append(b, `,"args_raw":`...)
		b = jsondoc.AppendString(b, c.ArgsRaw)
	}
	if c.ArgsError != "" {
		b = append(b, `,"args_error":`...)
		b = jsondoc.AppendString(b, c.ArgsError)
	}
	return append(b, '}'), nil
}

// plainString returns the text of a JSON string literal (valid JSON, as
// jsondoc.ObjectMembersBytes gives it), and false for any other value.
func plainString(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(val, '\\') < 0 && utf8.Valid(val) {
		return string(val[1 : len(val)-1]), true
	}
	v, err := jsondoc.Parse(val)
	if err != nil {
		return "", false
	}
	return v.Str()
}

// decodeFast fills req from data in one pass (jsondoc.ObjectMembersBytes,
// which validates the whole body) when data is a request object with only
// known keys; it reports false (leaving req partly filled) for anything
// else, and the caller then decodes with decodeStrict, which reports the
// precise problem.
func decodeFast(data []byte, req *evaluationRequest) bool {
	str := func(val []byte, dst *string) bool {
		if s, ok := plainString(val); ok {
			*dst = s
			return true
		}
		return json.Unmarshal(val, dst) == nil
	}
	return jsondoc.ObjectMembersBytes(data, func(key string, val []byte) bool {
		switch key {
		case "contract":
			req.Contract = val
		case "gold":
			req.Gold = val
		case "trace":
			req.Trace = val
		case "forbidden":
			req.Forbidden = val
		case "format":
			return str(val, &req.Format)
		case "task_id":
			return str(val, &req.TaskID)
		case "run_id":
			return str(val, &req.RunID)
		case "agent":
			return str(val, &req.Agent)
		case "final_answer":
			req.FinalAnswer = nil
			if string(val) == "null" {
				return true
			}
			var s string
			if !str(val, &s) {
				return false
			}
			req.FinalAnswer = &s
		case "strict":
			switch string(val) {
			case "true", "false":
				req.Strict = string(val) == "true"
			default:
				return false
			}
		case "safety_gate":
			switch string(val) {
			case "true", "false":
				b := string(val) == "true"
				req.SafetyGate = &b
			case "null":
				req.SafetyGate = nil
			default:
				return false
			}
		case "labels":
			req.Labels = nil
			return json.Unmarshal(val, &req.Labels) == nil
		case "weights":
			req.Weights = nil
			return json.Unmarshal(val, &req.Weights) == nil
		case "min_score":
			req.MinScore = nil
			return json.Unmarshal(val, &req.MinScore) == nil
		default:
			return false
		}
		return true
	})
}
