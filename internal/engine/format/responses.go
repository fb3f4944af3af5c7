package format

import (
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
)

// responsesAdapter reads OpenAI Responses API traces: a response object
// (its "output" items, after its "input" items when the request was saved
// with it), an object with "input" and/or "output" item lists, a list of
// items (or of response objects), or a single call item.
//
// function_call items are calls (string "arguments" decoded once);
// custom_tool_call items keep their free-text "input" raw; mcp_call items
// carry their own output and error; built-in tool items (web_search_call,
// file_search_call, code_interpreter_call, computer_call, local_shell_call)
// are calls named without the "_call" suffix whose arguments are the item's
// "action" (or {}). function_call_output, custom_tool_call_output and
// computer_call_output items are results joined by call_id. The agent's
// last turn is the last run of assistant messages, reasoning and calls; its
// output_text (and refusal) is the final answer when that run made no call
// that waits for the client (function, custom, computer and shell calls;
// calls OpenAI runs itself, such as web search and MCP, do not count).
type responsesAdapter struct{}

func (responsesAdapter) Name() string { return "openai-responses" }

// responsesCallTypes are the item types that are calls by the agent.
var responsesCallTypes = map[string]bool{
	"function_call": true, "custom_tool_call": true, "mcp_call": true,
	"web_search_call": true, "file_search_call": true, "code_interpreter_call": true,
	"computer_call": true, "local_shell_call": true,
}

// isResponsesItem reports whether m is a Responses item with a type
// specific to that API.
func isResponsesItem(m map[string]any) bool {
	t := getStr(m, "type")
	if responsesCallTypes[t] {
		return true
	}
	switch t {
	case "function_call_output", "custom_tool_call_output", "computer_call_output", "reasoning", "item_reference":
		return true
	case "message":
		// Output messages carry output_text parts; input messages may use
		// input_text.
		for _, p := range getArr(m, "content") {
			pm, _ := p.(map[string]any)
			switch getStr(pm, "type") {
			case "output_text", "input_text", "input_image", "input_file":
				return true
			}
		}
	}
	return false
}

func isResponseObject(m map[string]any) bool {
	if getStr(m, "object") == "response" {
		return true
	}
	out, ok := m["output"].([]any)
	if !ok {
		return false
	}
	return anyResponsesItem(out)
}

func anyResponsesItem(items []any) bool {
	for _, it := range items {
		if im, ok := it.(map[string]any); ok && isResponsesItem(im) {
			return true
		}
	}
	return false
}

func (responsesAdapter) Detect(in *Input) (string, bool) {
	if m, ok := in.Value.(map[string]any); ok && in.Form == FormJSON {
		switch {
		case isResponseObject(m) && m["input"] != nil:
			return "a saved OpenAI Responses request and response (input and output items)", true
		case isResponseObject(m):
			return "an OpenAI Responses response object (output items)", true
		case m["input"] != nil:
			if items, ok := m["input"].([]any); ok && anyResponsesItem(items) {
				return `an OpenAI Responses request (typed "input" items)`, true
			}
		case isResponsesItem(m):
			return "a single OpenAI Responses " + getStr(m, "type") + " item", true
		}
		return "", false
	}
	recs := in.Records()
	if !allObjects(recs) {
		return "", false
	}
	marked := false
	for _, r := range recs {
		m := r.(map[string]any)
		switch {
		case isResponsesItem(m) || isResponseObject(m):
			marked = true
		case getStr(m, "role") != "" && (m["type"] == nil || getStr(m, "type") == "message"):
			// An easy input message {role, content}.
		default:
			return "", false
		}
	}
	if !marked {
		return "", false
	}
	return "a list of " + plural(len(recs), "OpenAI Responses item"), true
}

// responsesItemTypes are the item types of the Responses API. Inside a
// response object (object "response") other types are skipped, as new
// ones appear; elsewhere an unknown type means the document is not
// Responses items.
var responsesItemTypes = map[string]bool{
	"message": true, "function_call": true, "function_call_output": true,
	"custom_tool_call": true, "custom_tool_call_output": true, "mcp_call": true,
	"web_search_call": true, "file_search_call": true, "code_interpreter_call": true,
	"computer_call": true, "computer_call_output": true, "local_shell_call": true,
	"local_shell_call_output": true, "image_generation_call": true, "reasoning": true,
	"item_reference": true, "mcp_list_tools": true, "mcp_approval_request": true,
	"mcp_approval_response": true,
}

// responsesPartTypes are the content part types of Responses messages
// ("text" is accepted too, as some compatible servers write it).
var responsesPartTypes = map[string]bool{
	"input_text": true, "output_text": true, "refusal": true, "input_image": true,
	"input_file": true, "input_audio": true, "text": true,
}

// checkResponsesItem reports, as a *ShapeError at the place at, what keeps
// m from being a Responses item: a "type" of responsesItemTypes (any string
// when anyType), or a message: role user, assistant, system or developer,
// no Chat Completions tool_calls or function_call, content a string or an
// array of Responses content parts.
func checkResponsesItem(m map[string]any, at []any, anyType bool) error {
	const f = "openai-responses"
	t, hasType := m["type"]
	if hasType && t != "message" {
		ts, ok := t.(string)
		if !ok || (!anyType && !responsesItemTypes[ts]) {
			return notFit(f, append(at, "type"), t, "not an OpenAI Responses item type")
		}
		return nil
	}
	switch r, ok := m["role"]; {
	case !ok:
		return notFit(f, at, m, `not an OpenAI Responses item: it has no "type" and no "role"`)
	case r != "user" && r != "assistant" && r != "system" && r != "developer":
		return notFit(f, append(at, "role"), r, `not an OpenAI Responses message: "role" must be user, assistant, system or developer`)
	}
	for _, k := range [...]string{"tool_calls", "function_call", "tool_call_id"} {
		if _, ok := m[k]; ok {
			return shapeErr(f, append(at, k), "an OpenAI Responses message has no %q (Chat Completions messages do)", k)
		}
	}
	switch c := m["content"].(type) {
	case string:
	case []any:
		for j, part := range c {
			pm, ok := part.(map[string]any)
			if !ok {
				return shapeErr(f, append(at, "content", j), "a content part must be an object, not %s", aType(part))
			}
			if !responsesPartTypes[getStr(pm, "type")] {
				return notFit(f, append(at, "content", j), pm, "not an OpenAI Responses content part (input_text, output_text, refusal, input_image, input_file or input_audio)")
			}
		}
	default:
		return shapeErr(f, append(at, "content"), "a message's content must be a string or an array of parts, not %s", aType(c))
	}
	return nil
}

// checkItems checks every item of list (see checkResponsesItem); base is
// the list's place.
func checkItems(list []any, base []any, anyType bool) error {
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return shapeErr("openai-responses", append(base[:len(base):len(base)], i), "an item must be an object, not %s", aType(e))
		}
		if err := checkResponsesItem(m, append(base[:len(base):len(base)], i), anyType); err != nil {
			return err
		}
	}
	return nil
}

func (responsesAdapter) Parse(in *Input) (engine.Trace, error) {
	var items []any
	switch v := in.Value.(type) {
	case map[string]any:
		switch {
		case v["input"] != nil || v["output"] != nil:
			for _, k := range []string{"input", "output"} {
				switch l := v[k].(type) {
				case nil:
				case []any:
					if err := checkItems(l, []any{k}, getStr(v, "object") == "response"); err != nil {
						return engine.Trace{}, err
					}
					items = append(items, l...)
				case string:
					// A plain-text input prompt.
				default:
					return engine.Trace{}, shapeErr("openai-responses", []any{k}, "%s must be an array of items, not %s", k, aType(l))
				}
			}
		case getStr(v, "type") != "" || v["role"] != nil:
			if err := checkResponsesItem(v, nil, false); err != nil {
				return engine.Trace{}, err
			}
			items = []any{v}
		default:
			return engine.Trace{}, notFit("openai-responses", nil, v, "expected a response object, an input/output item list or an item")
		}
	case []any:
		for i, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				return engine.Trace{}, shapeErr("openai-responses", []any{i}, "an item must be an object, not %s", aType(e))
			}
			if isResponseObject(m) && getStr(m, "type") == "" {
				out, _ := m["output"].([]any)
				if err := checkItems(out, []any{i, "output"}, getStr(m, "object") == "response"); err != nil {
					return engine.Trace{}, err
				}
				items = append(items, turnBreak{})
				items = append(items, out...)
				continue
			}
			if err := checkResponsesItem(m, []any{i}, false); err != nil {
				return engine.Trace{}, err
			}
			items = append(items, m)
		}
	default:
		return engine.Trace{}, shapeErr("openai-responses", nil, "expected a JSON object or array, not %s", aType(v))
	}
	b := newBuilder()
	responsesItems(b, items)
	return b.trace(), nil
}

// turnBreak, placed between items, ends the agent's turn: it separates the
// outputs of two responses.
type turnBreak struct{}

// responsesItems reads Responses items in order into b.
func responsesItems(b *builder, items []any) {
	var text strings.Builder
	inTurn, made := false, false
	startTurn := func() {
		if !inTurn {
			inTurn, made = true, false
			text.Reset()
		}
	}
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			if _, ok := it.(turnBreak); ok {
				inTurn = false
			}
			continue
		}
		switch t := getStr(m, "type"); {
		case t == "function_call":
			startTurn()
			c := engine.ToolCall{Tool: getStr(m, "name"), ID: getStr(m, "call_id")}
			b.setArgs(&c, m["arguments"])
			b.add(c)
			made = true
		case t == "custom_tool_call":
			startTurn()
			c := engine.ToolCall{Tool: getStr(m, "name"), ID: getStr(m, "call_id")}
			setRaw(&c, getStr(m, "input"))
			b.add(c)
			made = true
		case t == "mcp_call":
			startTurn()
			c := engine.ToolCall{Tool: getStr(m, "name"), ID: getStr(m, "id")}
			b.setArgs(&c, m["arguments"])
			c.Result = m["output"]
			c.Error = engine.CallError(errorText(m["error"]))
			b.add(c)
			b.done[len(b.done)-1] = true
		case responsesCallTypes[t]:
			startTurn()
			id := getStr(m, "call_id")
			if id == "" {
				id = getStr(m, "id")
			}
			c := engine.ToolCall{Tool: strings.TrimSuffix(t, "_call"), ID: id}
			b.setArgs(&c, m["action"])
			b.add(c)
			// Web and file search and the code interpreter run on
			// OpenAI's side within the response; computer and shell
			// calls wait for the client like function calls.
			if t == "computer_call" || t == "local_shell_call" {
				made = true
			}
		case t == "function_call_output" || t == "custom_tool_call_output" || t == "computer_call_output":
			inTurn = false
			b.result(getStr(m, "call_id"), "", m["output"], "")
		case t == "reasoning":
			startTurn()
		case t == "message" || t == "":
			if getStr(m, "role") == "assistant" {
				startTurn()
				text.WriteString(partsText(m["content"], "output_text", "text"))
			} else if m["role"] != nil {
				inTurn = false
			}
		}
	}
	b.turn(text.String(), made)
}
