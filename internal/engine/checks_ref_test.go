package engine

// errorResult as it was before it read texts without decoding them
// (checks.go at commit a199f9a, renamed), kept as the reference the
// engine must agree with on random texts (TestErrorResultMatchesReference,
// FuzzErrorResult).

import (
	"bytes"
	"encoding/json"
	"strings"
)

// refErrorResult reports whether a tool result reads as an error although the
// trace did not flag one (docs/checks.md "tool-errors"): a text that
// starts, after white space, with "error:" in any case ("Error: payment
// declined"), or a JSON object whose top-level "error" member is set (not
// null, false, "", 0, {} or []), given as an object or as a text holding
// one ({"error": "card declined"}). Time is linear in the result's size.
func refErrorResult(v any) bool {
	switch x := v.(type) {
	case string:
		t := trimSpace(x)
		if hasPrefixFold(t, "error:") {
			return true
		}
		if !strings.HasPrefix(t, "{") {
			return false
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(t), &obj) != nil {
			return false
		}
		raw, ok := obj["error"]
		if !ok {
			return false
		}
		switch string(bytes.TrimSpace(raw)) {
		case "null", "false", `""`, "0", "{}", "[]":
			return false
		}
		return !refEmptyJSONContainer(raw)
	case map[string]any:
		e, ok := x["error"]
		if !ok {
			return false
		}
		switch y := e.(type) {
		case nil:
			return false
		case bool:
			return y
		case string:
			return y != ""
		case json.Number:
			return y != "0"
		case map[string]any:
			return len(y) > 0
		case []any:
			return len(y) > 0
		}
		return true
	}
	return false
}

// refEmptyJSONContainer reports whether raw is {} or [] with white space
// inside.
func refEmptyJSONContainer(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	if len(t) < 2 || !(t[0] == '{' && t[len(t)-1] == '}' || t[0] == '[' && t[len(t)-1] == ']') {
		return false
	}
	return len(bytes.TrimSpace(t[1:len(t)-1])) == 0
}
