package format

import (
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
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
func isResponsesItem(m jsondoc.Value) bool {
	t := m.Get("type").Text()
	if responsesCallTypes[t] {
		return true
	}
	switch t {
	case "function_call_output", "custom_tool_call_output", "computer_call_output", "reasoning", "item_reference":
		return true
	case "message":
		// Output messages carry output_text parts; input messages may use
		// input_text.
		for _, pm := range m.Get("content").Elems() {
			switch pm.Get("type").Text() {
			case "output_text", "input_text", "input_image", "input_file":
				return true
			}
		}
	}
	return false
}

func isResponseObject(m jsondoc.Value) bool {
	if m.Get("object").Text() == "response" {
		return true
	}
	out := m.Get("output")
	return isArr(out) && anyResponsesItem(out)
}

func anyResponsesItem(items jsondoc.Value) bool {
	for _, im := range items.Elems() {
		if isObj(im) && isResponsesItem(im) {
			return true
		}
	}
	return false
}

func (responsesAdapter) Detect(in *Input) (string, bool) {
	if m, ok := in.Object(); ok {
		switch {
		case isResponseObject(m) && set(m.Get("input")):
			return "a saved OpenAI Responses request and response (input and output items)", true
		case isResponseObject(m):
			return "an OpenAI Responses response object (output items)", true
		case set(m.Get("input")):
			if items := m.Get("input"); isArr(items) && anyResponsesItem(items) {
				return `an OpenAI Responses request (typed "input" items)`, true
			}
		case isResponsesItem(m):
			return "a single OpenAI Responses " + m.Get("type").Text() + " item", true
		}
		return "", false
	}
	recs := in.Records()
	if !allObjects(recs) {
		return "", false
	}
	marked := false
	for _, m := range recs {
		switch {
		case isResponsesItem(m) || isResponseObject(m):
			marked = true
		case m.Get("role").Text() != "" && (!set(m.Get("type")) || m.Get("type").Text() == "message"):
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

// checkResponsesItem reports, as a *ShapeError, what keeps m from being a
// Responses item: a "type" of responsesItemTypes (any string when
// anyType), or a message: role user, assistant, system or developer, no
// Chat Completions tool_calls or function_call, content a string or an
// array of Responses content parts.
func checkResponsesItem(m jsondoc.Value, anyType bool) error {
	const f = "openai-responses"
	t := m.Get("type")
	if t.Exists() && !(t.Kind() == jsondoc.String && t.Text() == "message") {
		if t.Kind() != jsondoc.String || (!anyType && !responsesItemTypes[t.Text()]) {
			return notFit(f, t, "not an OpenAI Responses item type")
		}
		return nil
	}
	switch r := m.Get("role"); {
	case !r.Exists():
		return notFit(f, m, `not an OpenAI Responses item: it has no "type" and no "role"`)
	case r.Kind() != jsondoc.String || (r.Text() != "user" && r.Text() != "assistant" && r.Text() != "system" && r.Text() != "developer"):
		return notFit(f, r, `not an OpenAI Responses message: "role" must be user, assistant, system or developer`)
	}
	for _, k := range [...]string{"tool_calls", "function_call", "tool_call_id"} {
		if v := m.Get(k); v.Exists() {
			return shapeErr(f, v, "an OpenAI Responses message has no %q (Chat Completions messages do)", k)
		}
	}
	switch c := m.Get("content"); c.Kind() {
	case jsondoc.String:
	case jsondoc.Array:
		for _, pm := range c.Elems() {
			if !isObj(pm) {
				return shapeErr(f, pm, "a content part must be an object, not %s", aType(pm))
			}
			if !responsesPartTypes[pm.Get("type").Text()] {
				return notFit(f, pm, "not an OpenAI Responses content part (input_text, output_text, refusal, input_image, input_file or input_audio)")
			}
		}
	default:
		if !c.Exists() {
			return shapeErr(f, m, "a message's content must be a string or an array of parts, not %s", aType(c)).under("content")
		}
		return shapeErr(f, c, "a message's content must be a string or an array of parts, not %s", aType(c))
	}
	return nil
}

// checkItems checks every item of list (see checkResponsesItem).
func checkItems(list jsondoc.Value, anyType bool) error {
	for _, m := range list.Elems() {
		if !isObj(m) {
			return shapeErr("openai-responses", m, "an item must be an object, not %s", aType(m))
		}
		if err := checkResponsesItem(m, anyType); err != nil {
			return err
		}
	}
	return nil
}

// responsesItem is an item to read, or (brk) the end of a response's
// output, which ends the agent's turn.
type responsesItem struct {
	v   jsondoc.Value
	brk bool
}

func (responsesAdapter) Parse(in *Input) (engine.Trace, error) {
	var items []responsesItem
	add := func(list jsondoc.Value) {
		for _, e := range list.Elems() {
			items = append(items, responsesItem{v: e})
		}
	}
	v := in.Value()
	switch v.Kind() {
	case jsondoc.Object:
		switch {
		case set(v.Get("input")) || set(v.Get("output")):
			for _, k := range []string{"input", "output"} {
				switch l := v.Get(k); l.Kind() {
				case jsondoc.Invalid, jsondoc.Null:
				case jsondoc.Array:
					if err := checkItems(l, v.Get("object").Text() == "response"); err != nil {
						return engine.Trace{}, err
					}
					add(l)
				case jsondoc.String:
					// A plain-text input prompt; a response's output is
					// always a list.
					if k == "output" {
						return engine.Trace{}, shapeErr("openai-responses", l, "output must be an array of items, not %s", aType(l))
					}
				default:
					return engine.Trace{}, shapeErr("openai-responses", l, "%s must be an array of items, not %s", k, aType(l))
				}
			}
		case v.Get("type").Text() != "" || set(v.Get("role")):
			if err := checkResponsesItem(v, false); err != nil {
				return engine.Trace{}, err
			}
			items = []responsesItem{{v: v}}
		default:
			return engine.Trace{}, notFit("openai-responses", v, "expected a response object, an input/output item list or an item")
		}
	case jsondoc.Array:
		for _, m := range v.Elems() {
			if !isObj(m) {
				return engine.Trace{}, shapeErr("openai-responses", m, "an item must be an object, not %s", aType(m))
			}
			if isResponseObject(m) && m.Get("type").Text() == "" {
				out := m.Get("output")
				if set(out) && !isArr(out) {
					return engine.Trace{}, shapeErr("openai-responses", out, "output must be an array of items, not %s", aType(out))
				}
				if err := checkItems(out, m.Get("object").Text() == "response"); err != nil {
					return engine.Trace{}, err
				}
				items = append(items, responsesItem{brk: true})
				add(out)
				continue
			}
			if err := checkResponsesItem(m, false); err != nil {
				return engine.Trace{}, err
			}
			items = append(items, responsesItem{v: m})
		}
	default:
		return engine.Trace{}, shapeErr("openai-responses", v, "expected a JSON object or array, not %s", aType(v))
	}
	b := in.newBuilder()
	if err := responsesItems("openai-responses", b, items); err != nil {
		return engine.Trace{}, err
	}
	return b.trace(), nil
}

// responsesCallFields reads the tool name, call id and custom input of a
// Responses call item of type t (the name of a built-in tool's call is t
// without "_call"); one of the wrong type is a *ShapeError of format.
func responsesCallFields(format string, m jsondoc.Value, t string) (name, id, input string, err error) {
	switch t {
	case "function_call", "custom_tool_call", "mcp_call":
		if name, err = str(format, "name", m.Get("name")); err != nil {
			return
		}
	default:
		name = strings.TrimSuffix(t, "_call")
	}
	if t != "mcp_call" {
		if id, err = str(format, "call_id", m.Get("call_id")); err != nil {
			return
		}
	}
	if id == "" && t != "function_call" && t != "custom_tool_call" {
		if id, err = str(format, "id", m.Get("id")); err != nil {
			return
		}
	}
	if t == "custom_tool_call" {
		input, err = str(format, "input", m.Get("input"))
	}
	return
}

// responsesItems reads Responses items in order into b; format names the
// adapter in its errors.
func responsesItems(format string, b *builder, items []responsesItem) error {
	var text strings.Builder
	inTurn, made := false, false
	startTurn := func() {
		if !inTurn {
			inTurn, made = true, false
			text.Reset()
		}
	}
	for _, it := range items {
		m := it.v
		if it.brk {
			inTurn = false
			continue
		}
		if !isObj(m) {
			continue
		}
		t := m.Get("type").Text()
		var c engine.ToolCall
		var input string
		if responsesCallTypes[t] {
			var err error
			if c.Tool, c.ID, input, err = responsesCallFields(format, m, t); err != nil {
				return err
			}
		}
		switch {
		case t == "function_call":
			startTurn()
			b.setArgs(&c, m.Get("arguments"))
			b.add(c)
			made = true
		case t == "custom_tool_call":
			startTurn()
			setRaw(&c, input)
			b.add(c)
			made = true
		case t == "mcp_call":
			startTurn()
			b.setArgs(&c, m.Get("arguments"))
			setResult(&c, m.Get("output"))
			c.Error = engine.CallError(errorText(m.Get("error")))
			b.add(c)
			b.done[len(b.done)-1] = true
		case responsesCallTypes[t]:
			startTurn()
			b.setArgs(&c, m.Get("action"))
			b.add(c)
			// Web and file search and the code interpreter run on
			// OpenAI's side within the response; computer and shell
			// calls wait for the client like function calls.
			if t == "computer_call" || t == "local_shell_call" {
				made = true
			}
		case t == "function_call_output" || t == "custom_tool_call_output" || t == "computer_call_output":
			inTurn = false
			id, err := str(format, "call_id", m.Get("call_id"))
			if err != nil {
				return err
			}
			b.result(id, "", m.Get("output"), "")
		case t == "reasoning":
			startTurn()
		case t == "message" || t == "":
			if m.Get("role").Text() == "assistant" {
				startTurn()
				text.WriteString(partsText(m.Get("content"), "output_text", "text"))
			} else if set(m.Get("role")) {
				inTurn = false
			}
		}
	}
	b.turn(text.String(), made)
	return nil
}
