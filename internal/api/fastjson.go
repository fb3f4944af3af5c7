package api

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/toolscore/toolscore/internal/engine"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// This file holds the request hot path's JSON work that encoding/json does
// slowly through reflection: encoding trace calls (plain JSON values in
// maps) and splitting the top-level request object in one pass. Both give
// exactly what encoding/json gives (tests compare them), and anything
// unusual falls back to encoding/json.

// appendJSONValue appends a decoded JSON value as encoding/json would
// (engine.AppendJSONValue), and returns encoding/json's error for a value
// it refuses.
func appendJSONValue(b []byte, v any) ([]byte, error) {
	if out, ok := engine.AppendJSONValue(b, v); ok {
		return out, nil
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, out...), nil
}

// appendToolCall appends c as encoding/json encodes an engine.ToolCall
// (TestAppendToolCall keeps the two in step, field by field).
func appendToolCall(b []byte, c *engine.ToolCall) ([]byte, error) {
	var err error
	b = append(b, `{"tool":`...)
	b = jsondoc.AppendString(b, c.Tool)
	b = append(b, `,"args":`...)
	if b, err = appendJSONValue(b, c.Args); err != nil {
		return nil, err
	}
	if c.ID != "" {
		b = append(b, `,"id":`...)
		b = jsondoc.AppendString(b, c.ID)
	}
	if c.Result != nil {
		b = append(b, `,"result":`...)
		if b, err = appendJSONValue(b, c.Result); err != nil {
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

// splitObject walks the members of the JSON object in data in one pass,
// calling fn with each key (without quotes) and raw value. It reports false
// when data is not a simple object (a key with escapes, bad structure,
// trailing data) or fn returns false; values are only delimited, not
// validated, so callers must decode or validate them.
func splitObject(data []byte, fn func(key string, val []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return skipSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return false
		}
		start := i + 1
		end := start
		for end < len(data) && data[end] != '"' {
			if data[end] == '\\' || data[end] < 0x20 {
				return false
			}
			end++
		}
		if end >= len(data) {
			return false
		}
		key := data[start:end]
		i = skipSpace(data, end+1)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipSpace(data, i+1)
		vend := skipValue(data, i)
		if vend < 0 || !fn(string(key), data[i:vend]) {
			return false
		}
		i = skipSpace(data, vend)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return skipSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at i, or -1.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				if i = skipString(data, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	start := i
	for i < len(data) && data[i] != ',' && data[i] != '}' && data[i] != ']' &&
		data[i] != ' ' && data[i] != '\t' && data[i] != '\n' && data[i] != '\r' {
		i++
	}
	if i == start {
		return -1
	}
	return i
}

// skipString returns the end of the JSON string starting at data[i] == '"',
// or -1.
func skipString(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// plainString returns the content of a JSON string literal without escapes
// or control characters, and false for anything else.
func plainString(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' {
		return "", false
	}
	s := val[1 : len(val)-1]
	for _, c := range s {
		if c == '\\' || c == '"' || c < 0x20 {
			return "", false
		}
	}
	if !utf8.Valid(s) {
		return "", false
	}
	return string(s), true
}

// decodeFast fills req from data in one pass when data is a plain request
// object; it reports false (leaving req partly filled) for anything else,
// and the caller then decodes with decodeStrict, which reports the precise
// problem. The raw fields (contract, gold, trace, forbidden) are not
// validated here: the engine parses each of them later.
func decodeFast(data []byte, req *evaluationRequest) bool {
	str := func(val []byte, dst *string) bool {
		if s, ok := plainString(val); ok {
			*dst = s
			return true
		}
		return json.Unmarshal(val, dst) == nil
	}
	return splitObject(data, func(key string, val []byte) bool {
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
