package format

import (
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
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
func isPydanticAIMessage(m map[string]any) bool {
	k := getStr(m, "kind")
	if k != "request" && k != "response" {
		return false
	}
	parts, ok := m["parts"].([]any)
	if !ok {
		return false
	}
	for _, p := range parts {
		pm, ok := p.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := pm["part_kind"].(string); !ok {
			return false
		}
	}
	return true
}

func pydanticAIList(in *Input) ([]any, loc) {
	if m, ok := in.Value.(map[string]any); ok && in.Form == FormJSON {
		if list, ok := m["messages"].([]any); ok && !isPydanticAIMessage(m) {
			return list, root("messages")
		}
	}
	return in.Records(), root()
}

func (pydanticAIAdapter) Detect(in *Input) (string, bool) {
	list, _ := pydanticAIList(in)
	if len(list) == 0 {
		return "", false
	}
	n := 0
	for _, r := range list {
		if m, ok := r.(map[string]any); ok && isPydanticAIMessage(m) {
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
	b := newBuilder()
	list, l := pydanticAIList(in)
	for i, r := range list {
		at := l.elem(i)
		m, ok := r.(map[string]any)
		if !ok {
			return engine.Trace{}, shapeErr("pydantic-ai", at.tokens(), "a message must be an object, not %s", aType(r))
		}
		kind := getStr(m, "kind")
		if pydanticAIParts[kind] == nil {
			if _, ok := m["kind"]; !ok {
				return engine.Trace{}, notFit("pydantic-ai", at.tokens(), m, `not a Pydantic AI message: it has no "kind"`)
			}
			return engine.Trace{}, notFit("pydantic-ai", at.tokens("kind"), m["kind"], `not a Pydantic AI message kind ("request" or "response")`)
		}
		parts, ok := m["parts"].([]any)
		if !ok {
			return engine.Trace{}, notFit("pydantic-ai", at.tokens(), m, `a Pydantic AI message needs a "parts" array`)
		}
		var text strings.Builder
		made := false
		for j, p := range parts {
			pm, ok := p.(map[string]any)
			if !ok {
				return engine.Trace{}, shapeErr("pydantic-ai", at.tokens("parts", j), "a part must be an object, not %s", aType(p))
			}
			pk, _ := pm["part_kind"].(string)
			if !pydanticAIParts[kind][pk] {
				return engine.Trace{}, notFit("pydantic-ai", at.tokens("parts", j, "part_kind"), pm["part_kind"], "not a Pydantic AI %s part kind", kind)
			}
			switch pk {
			case "text":
				text.WriteString(getStr(pm, "content"))
			case "tool-call", "builtin-tool-call":
				c := engine.ToolCall{Tool: getStr(pm, "tool_name"), ID: getStr(pm, "tool_call_id")}
				b.setArgs(&c, pm["args"])
				b.add(c)
				if pk == "tool-call" {
					made = true
				}
			case "tool-return", "builtin-tool-return":
				errText := ""
				if getStr(pm, "outcome") == "failed" {
					if errText = errorText(pm["content"]); errText == "" {
						errText = "true"
					}
				}
				b.result(getStr(pm, "tool_call_id"), getStr(pm, "tool_name"), pm["content"], errText)
			case "retry-prompt":
				if getStr(pm, "tool_name") == "" {
					continue // output validation: no call is answered
				}
				errText := errorText(pm["content"])
				if errText == "" {
					errText = "true"
				}
				b.result(getStr(pm, "tool_call_id"), getStr(pm, "tool_name"), pm["content"], errText)
			}
		}
		if kind == "response" {
			b.turn(text.String(), made)
		}
	}
	return b.trace(), nil
}
