package format

import (
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// pydanticAIAdapter reads Pydantic AI message histories, as
// result.all_messages_json() (ModelMessagesTypeAdapter.dump_json) writes
// them: a list of ModelRequest ({"kind": "request"}) and ModelResponse
// ({"kind": "response"}) objects whose parts carry a "part_kind" (also as
// JSON Lines, or under "messages").
//
// Response "tool-call" parts are calls (tool_name, args as an object or as
// the model's JSON text, tool_call_id). Request "tool-return" parts answer
// them by tool_call_id (content is the result; outcome "failed" makes an
// error), and "retry-prompt" parts with a tool_name are error results (the
// tool raised ModelRetry, or its arguments failed validation: content is
// the message or the list of validation errors). The final answer is the
// text parts of the last response when it made no tool call.
type pydanticAIAdapter struct{}

func (pydanticAIAdapter) Name() string { return "pydantic-ai" }

// isPydanticAIMessage reports whether m is a ModelRequest or ModelResponse.
func isPydanticAIMessage(m jsondoc.Value) bool {
	k := m.Get("kind").Text()
	if k != "request" && k != "response" {
		return false
	}
	parts := m.Get("parts")
	if !isArr(parts) {
		return false
	}
	for _, p := range parts.Elems() {
		if p.Get("part_kind").Kind() != jsondoc.String {
			return false
		}
	}
	return true
}

// pydanticAIList returns the messages of a document: its records, or the
// "messages" of a lone object.
func pydanticAIList(in *Input) []jsondoc.Value {
	if m, ok := in.Object(); ok && !isPydanticAIMessage(m) {
		if list := m.Get("messages"); isArr(list) {
			return elems(list)
		}
	}
	return in.Records()
}

func (pydanticAIAdapter) Detect(in *Input) (string, bool) {
	list := pydanticAIList(in)
	n := 0
	for _, r := range list {
		if isPydanticAIMessage(r) {
			n++
		}
	}
	switch {
	case n == 0:
		return "", false
	case n < len(list):
		// Half fits: claimed so that Parse names the record that does not.
		return "a Pydantic AI message history in part (" + plural(n, "message") + " of " + plural(len(list), "record") + ")" + formSuffix(in.Form), true
	}
	return "a Pydantic AI message history (" + plural(len(list), "message") + ", kind request/response)" + formSuffix(in.Form), true
}

// pydanticAIParts are the part kinds of requests and responses.
var pydanticAIParts = map[string]map[string]bool{
	"request": {
		"system-prompt": true, "user-prompt": true, "tool-return": true, "retry-prompt": true,
		"builtin-tool-return": true, "instruction": true, "tool-availability-delta": true,
	},
	"response": {
		"text": true, "tool-call": true, "builtin-tool-call": true, "builtin-tool-return": true,
		"thinking": true, "file": true, "compaction": true,
	},
}

func (pydanticAIAdapter) Parse(in *Input) (engine.Trace, error) {
	b := in.newBuilder()
	for _, m := range pydanticAIList(in) {
		if !isObj(m) {
			return engine.Trace{}, shapeErr("pydantic-ai", m, "a message must be an object, not %s", aType(m))
		}
		kv := m.Get("kind")
		kind := kv.Text()
		if pydanticAIParts[kind] == nil {
			if !kv.Exists() {
				return engine.Trace{}, notFit("pydantic-ai", m, `not a Pydantic AI message: it has no "kind"`)
			}
			return engine.Trace{}, notFit("pydantic-ai", kv, `not a Pydantic AI message kind ("request" or "response")`)
		}
		parts := m.Get("parts")
		if !isArr(parts) {
			return engine.Trace{}, notFit("pydantic-ai", m, `a Pydantic AI message needs a "parts" array`)
		}
		var text strings.Builder
		made := false
		for _, pm := range parts.Elems() {
			if !isObj(pm) {
				return engine.Trace{}, shapeErr("pydantic-ai", pm, "a part must be an object, not %s", aType(pm))
			}
			pk := pm.Get("part_kind")
			if !pydanticAIParts[kind][pk.Text()] {
				if !pk.Exists() {
					return engine.Trace{}, notFit("pydantic-ai", pm, `a Pydantic AI part needs a "part_kind"`)
				}
				return engine.Trace{}, notFit("pydantic-ai", pk, "not a Pydantic AI %s part kind", kind)
			}
			id, err := str("pydantic-ai", "tool_call_id", pm.Get("tool_call_id"))
			if err != nil {
				return engine.Trace{}, err
			}
			tool, err := str("pydantic-ai", "tool_name", pm.Get("tool_name"))
			if err != nil {
				return engine.Trace{}, err
			}
			switch pk.Text() {
			case "text":
				text.WriteString(pm.Get("content").Text())
			case "tool-call", "builtin-tool-call":
				c := engine.ToolCall{Tool: tool, ID: id}
				b.setArgs(&c, pm.Get("args"))
				b.add(c)
				if pk.Text() == "tool-call" {
					made = true
				}
			case "tool-return", "builtin-tool-return":
				errText := ""
				if pm.Get("outcome").Text() == "failed" {
					if errText = errorText(pm.Get("content")); errText == "" {
						errText = "true"
					}
				}
				b.result(id, tool, pm.Get("content"), errText)
			case "retry-prompt":
				if tool == "" {
					continue // output validation: no call is answered
				}
				errText := errorText(pm.Get("content"))
				if errText == "" {
					errText = "true"
				}
				b.result(id, tool, pm.Get("content"), errText)
			}
		}
		if kind == "response" {
			b.turn(text.String(), made)
		}
	}
	return b.trace(), nil
}
