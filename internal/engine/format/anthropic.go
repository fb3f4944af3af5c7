package format

import (
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// anthropicAdapter reads Anthropic Messages traces: a response (type
// "message"), a list of messages, an object with "messages" (a request
// body), a single message, or a single tool_use block.
//
// Assistant content blocks of type tool_use (and server_tool_use,
// mcp_tool_use) are calls; tool_result blocks (in user messages) and
// *_tool_result blocks (server tools) are results joined by tool_use_id,
// with is_error. Text blocks make the visible text; thinking and
// redacted_thinking blocks are left out. The final answer is the text of
// the last assistant message when it has no tool_use block (server tools,
// which Anthropic runs within the response, do not count).
type anthropicAdapter struct{}

func (anthropicAdapter) Name() string { return "anthropic" }

func (anthropicAdapter) Detect(in *Input) (string, bool) {
	if m, ok := in.Object(); ok {
		switch {
		case m.Get("type").Text() == "message" && m.Get("role").Text() == "assistant":
			return `an Anthropic Messages response (type "message")`, true
		case isAnthropicCallBlock(m):
			return "a single Anthropic " + m.Get("type").Text() + " block", true
		case set(m.Get("messages")):
			if why, ok := anthropicMessages(elems(m.Get("messages"))); ok {
				return `an object whose "messages" are ` + why, true
			}
			return "", false
		}
		if why, ok := anthropicMessages([]jsondoc.Value{m}); ok {
			return "a single " + strings.TrimPrefix(why, "1 "), true
		}
		return "", false
	}
	if why, ok := anthropicMessages(in.Records()); ok {
		return "a list of " + why, true
	}
	return "", false
}

func isAnthropicCallBlock(m jsondoc.Value) bool {
	switch m.Get("type").Text() {
	case "tool_use", "server_tool_use", "mcp_tool_use":
		return m.Get("name").Kind() == jsondoc.String
	}
	return false
}

// anthropicMessages reports whether msgs are Anthropic messages: every one
// has role user or assistant, and some content block is specific to
// Anthropic (tool_use, tool_result, thinking...), or a message is a
// response object.
func anthropicMessages(msgs []jsondoc.Value) (string, bool) {
	if len(msgs) == 0 {
		return "", false
	}
	marker := ""
	for _, m := range msgs {
		if !isObj(m) {
			return "", false
		}
		switch m.Get("role").Text() {
		case "user", "assistant":
		default:
			return "", false
		}
		if m.Get("type").Text() == "message" {
			marker = `type "message"`
		}
		for _, bm := range m.Get("content").Elems() {
			switch t := bm.Get("type").Text(); t {
			case "tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use", "mcp_tool_use", "mcp_tool_result", "web_search_tool_result":
				if marker == "" {
					marker = t + " blocks"
				}
			}
		}
	}
	if marker == "" {
		return "", false
	}
	return plural(len(msgs), "Anthropic message") + " (" + marker + ")", true
}

func (anthropicAdapter) Parse(in *Input) (engine.Trace, error) {
	b := in.newBuilder()
	var err error
	v := in.Value()
	switch v.Kind() {
	case jsondoc.Object:
		switch {
		case isAnthropicCallBlock(v):
			_, _, err = anthropicBlocks("anthropic", b, []jsondoc.Value{v}, "assistant")
		case set(v.Get("messages")):
			list := v.Get("messages")
			if !isArr(list) {
				return engine.Trace{}, shapeErr("anthropic", list, "messages must be an array, not %s", aType(list))
			}
			err = anthropicList(b, list)
		case set(v.Get("role")) || set(v.Get("content")):
			err = anthropicMessage(b, v)
		default:
			err = notFit("anthropic", v, "expected a message, a list of messages or a tool_use block")
		}
	case jsondoc.Array:
		err = anthropicList(b, v)
	default:
		err = shapeErr("anthropic", v, "expected a JSON object or array, not %s", aType(v))
	}
	if err != nil {
		return engine.Trace{}, err
	}
	return b.trace(), nil
}

func anthropicList(b *builder, list jsondoc.Value) error {
	for _, m := range list.Elems() {
		if !isObj(m) {
			return shapeErr("anthropic", m, "a message must be an object, not %s", aType(m))
		}
		if err := anthropicMessage(b, m); err != nil {
			return err
		}
	}
	return nil
}

// notAnthropicParts are content part types of OpenAI's APIs: a message
// holding one is not an Anthropic message.
var notAnthropicParts = map[string]bool{
	"image_url": true, "input_audio": true, "refusal": true, "file": true,
	"input_text": true, "output_text": true, "input_image": true, "input_file": true,
}

// checkAnthropicMessage reports, as a *ShapeError, what keeps m from being
// an Anthropic message: role "user" or "assistant"; no OpenAI tool_calls or
// function_call; content a string or an array of blocks, each an object
// with a "type" that is not an OpenAI part type.
func checkAnthropicMessage(m jsondoc.Value) error {
	switch r := m.Get("role"); {
	case !r.Exists():
		return notFit("anthropic", m, `not an Anthropic message: it has no "role"`)
	case r.Kind() != jsondoc.String || (r.Text() != "user" && r.Text() != "assistant"):
		return notFit("anthropic", r, `not an Anthropic message: "role" must be "user" or "assistant"`)
	}
	for _, k := range [...]string{"tool_calls", "function_call"} {
		if v := m.Get(k); v.Exists() {
			return shapeErr("anthropic", v, "an Anthropic message has no %q (OpenAI chat messages do)", k)
		}
	}
	switch c := m.Get("content"); c.Kind() {
	case jsondoc.String:
	case jsondoc.Array:
		for _, bm := range c.Elems() {
			if !isObj(bm) {
				return shapeErr("anthropic", bm, "a content block must be an object, not %s", aType(bm))
			}
			t := bm.Get("type")
			if t.Kind() != jsondoc.String {
				return notFit("anthropic", bm, `an Anthropic content block needs a string "type"`)
			}
			if notAnthropicParts[t.Text()] {
				return notFit("anthropic", t, "not an Anthropic content block type (an OpenAI part type)")
			}
		}
	case jsondoc.Invalid:
		return notFit("anthropic", m, `an Anthropic message needs "content"`)
	case jsondoc.Null:
		return shapeErr("anthropic", c, "content must be a string or an array of blocks, not null")
	default:
		return shapeErr("anthropic", c, "content must be a string or an array of blocks, not %s", aType(c))
	}
	return nil
}

func anthropicMessage(b *builder, m jsondoc.Value) error {
	if err := checkAnthropicMessage(m); err != nil {
		return err
	}
	role := m.Get("role").Text()
	switch c := m.Get("content"); c.Kind() {
	case jsondoc.String:
		if role == "assistant" {
			b.turn(c.Text(), false)
		}
	case jsondoc.Array:
		text, made, err := anthropicBlocks("anthropic", b, elems(c), role)
		if err != nil {
			return err
		}
		if role == "assistant" {
			b.turn(text, made)
		}
	}
	return nil
}

// anthropicCallFields reads the tool name and id of a tool_use,
// server_tool_use or mcp_tool_use block; either of the wrong type is a
// *ShapeError of format.
func anthropicCallFields(format string, bm jsondoc.Value) (name, id string, err error) {
	if name, err = str(format, "name", bm.Get("name")); err != nil {
		return "", "", err
	}
	id, err = str(format, "id", bm.Get("id"))
	return name, id, err
}

// anthropicBlocks reads content blocks: calls, results and visible text. It
// returns the text and whether a client tool call (tool_use) was made; a
// call's name or id, or a result's tool_use_id, of the wrong type is a
// *ShapeError of format.
func anthropicBlocks(format string, b *builder, blocks []jsondoc.Value, role string) (string, bool, error) {
	var text strings.Builder
	made := false
	for _, bm := range blocks {
		if !isObj(bm) {
			continue
		}
		switch t := bm.Get("type").Text(); {
		case t == "text":
			text.WriteString(bm.Get("text").Text())
		case t == "tool_use" || t == "server_tool_use" || t == "mcp_tool_use":
			name, id, err := anthropicCallFields(format, bm)
			if err != nil {
				return "", false, err
			}
			c := engine.ToolCall{Tool: name, ID: id}
			b.setArgs(&c, bm.Get("input"))
			b.add(c)
			// Server and MCP-connector tools run on Anthropic's side
			// within the response; only tool_use waits for the client.
			made = made || t == "tool_use"
		case t == "tool_result" || strings.HasSuffix(t, "_tool_result"):
			errText := ""
			content := bm.Get("content")
			if isErr, _ := bm.Get("is_error").Bool(); isErr {
				errText = "true"
				if s := partsText(content, "text"); s != "" {
					errText = s
				}
			}
			if isObj(content) && strings.HasSuffix(content.Get("type").Text(), "_error") {
				// Server tools report errors as a content object such as
				// {"type": "web_search_tool_result_error", "error_code": ...}.
				v, _ := first(content, "error_code", "message")
				if errText = errorText(v); errText == "" {
					errText = "true"
				}
			}
			id, err := str(format, "tool_use_id", bm.Get("tool_use_id"))
			if err != nil {
				return "", false, err
			}
			b.result(id, "", content, errText)
		}
	}
	return text.String(), made, nil
}
