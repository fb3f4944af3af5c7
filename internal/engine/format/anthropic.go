package format

import (
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
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
	if m, ok := in.Value.(map[string]any); ok && in.Form == FormJSON {
		switch {
		case getStr(m, "type") == "message" && getStr(m, "role") == "assistant":
			return `an Anthropic Messages response (type "message")`, true
		case isAnthropicCallBlock(m):
			return "a single Anthropic " + getStr(m, "type") + " block", true
		case m["messages"] != nil:
			msgs, _ := m["messages"].([]any)
			if why, ok := anthropicMessages(msgs); ok {
				return `an object whose "messages" are ` + why, true
			}
			return "", false
		}
		if why, ok := anthropicMessages([]any{m}); ok {
			return "a single " + strings.TrimPrefix(why, "1 "), true
		}
		return "", false
	}
	recs := in.Records()
	if why, ok := anthropicMessages(recs); ok {
		return "a list of " + why, true
	}
	return "", false
}

func isAnthropicCallBlock(m map[string]any) bool {
	switch getStr(m, "type") {
	case "tool_use", "server_tool_use", "mcp_tool_use":
		_, ok := m["name"].(string)
		return ok
	}
	return false
}

// anthropicMessages reports whether msgs are Anthropic messages: every one
// has role user or assistant, and some content block is specific to
// Anthropic (tool_use, tool_result, thinking...), or a message is a
// response object.
func anthropicMessages(msgs []any) (string, bool) {
	if len(msgs) == 0 {
		return "", false
	}
	marker := ""
	for _, e := range msgs {
		m, ok := e.(map[string]any)
		if !ok {
			return "", false
		}
		switch getStr(m, "role") {
		case "user", "assistant":
		default:
			return "", false
		}
		if getStr(m, "type") == "message" {
			marker = `type "message"`
		}
		blocks, _ := m["content"].([]any)
		for _, bl := range blocks {
			bm, _ := bl.(map[string]any)
			switch t := getStr(bm, "type"); t {
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
	b := newBuilder()
	var err error
	switch v := in.Value.(type) {
	case map[string]any:
		switch {
		case isAnthropicCallBlock(v):
			anthropicBlocks(b, []any{v}, "assistant")
		case v["messages"] != nil:
			list, ok := v["messages"].([]any)
			if !ok {
				return engine.Trace{}, shapeErr("anthropic", []any{"messages"}, "messages must be an array, not %s", aType(v["messages"]))
			}
			err = anthropicList(b, list, root("messages"))
		case v["role"] != nil || v["content"] != nil:
			err = anthropicMessage(b, v, root())
		default:
			err = notFit("anthropic", nil, v, "expected a message, a list of messages or a tool_use block")
		}
	case []any:
		err = anthropicList(b, v, root())
	default:
		err = shapeErr("anthropic", nil, "expected a JSON object or array, not %s", aType(v))
	}
	if err != nil {
		return engine.Trace{}, err
	}
	return b.trace(), nil
}

func anthropicList(b *builder, list []any, l loc) error {
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return shapeErr("anthropic", l.elem(i).tokens(), "a message must be an object, not %s", aType(e))
		}
		if err := anthropicMessage(b, m, l.elem(i)); err != nil {
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
func checkAnthropicMessage(m map[string]any, l loc) error {
	switch r, ok := m["role"]; {
	case !ok:
		return notFit("anthropic", l.tokens(), m, `not an Anthropic message: it has no "role"`)
	case r != "user" && r != "assistant":
		return notFit("anthropic", l.tokens("role"), r, `not an Anthropic message: "role" must be "user" or "assistant"`)
	}
	for _, k := range [...]string{"tool_calls", "function_call"} {
		if _, ok := m[k]; ok {
			return shapeErr("anthropic", l.tokens(k), "an Anthropic message has no %q (OpenAI chat messages do)", k)
		}
	}
	switch c := m["content"].(type) {
	case string:
	case []any:
		for j, bl := range c {
			bm, ok := bl.(map[string]any)
			if !ok {
				return shapeErr("anthropic", l.tokens("content", j), "a content block must be an object, not %s", aType(bl))
			}
			t, ok := bm["type"].(string)
			if !ok {
				return notFit("anthropic", l.tokens("content", j), bm, `an Anthropic content block needs a string "type"`)
			}
			if notAnthropicParts[t] {
				return notFit("anthropic", l.tokens("content", j, "type"), t, "not an Anthropic content block type (an OpenAI part type)")
			}
		}
	case nil:
		if _, ok := m["content"]; !ok {
			return notFit("anthropic", l.tokens(), m, `an Anthropic message needs "content"`)
		}
		return shapeErr("anthropic", l.tokens("content"), "content must be a string or an array of blocks, not null")
	default:
		return shapeErr("anthropic", l.tokens("content"), "content must be a string or an array of blocks, not %s", aType(c))
	}
	return nil
}

func anthropicMessage(b *builder, m map[string]any, l loc) error {
	if err := checkAnthropicMessage(m, l); err != nil {
		return err
	}
	role := getStr(m, "role")
	switch c := m["content"].(type) {
	case string:
		if role == "assistant" {
			b.turn(c, false)
		}
	case []any:
		text, made := anthropicBlocks(b, c, role)
		if role == "assistant" {
			b.turn(text, made)
		}
	}
	return nil
}

// anthropicBlocks reads content blocks: calls, results and visible text. It
// returns the text and whether a client tool call (tool_use) was made.
func anthropicBlocks(b *builder, blocks []any, role string) (string, bool) {
	var text strings.Builder
	made := false
	for _, bl := range blocks {
		bm, ok := bl.(map[string]any)
		if !ok {
			continue
		}
		switch t := getStr(bm, "type"); {
		case t == "text":
			text.WriteString(getStr(bm, "text"))
		case t == "tool_use" || t == "server_tool_use" || t == "mcp_tool_use":
			c := engine.ToolCall{Tool: getStr(bm, "name"), ID: getStr(bm, "id")}
			b.setArgs(&c, bm["input"])
			b.add(c)
			// Server and MCP-connector tools run on Anthropic's side
			// within the response; only tool_use waits for the client.
			made = made || t == "tool_use"
		case t == "tool_result" || strings.HasSuffix(t, "_tool_result"):
			errText := ""
			if isErr, _ := bm["is_error"].(bool); isErr {
				errText = "true"
				if s := partsText(bm["content"], "text"); s != "" {
					errText = s
				}
			}
			if e, ok := bm["content"].(map[string]any); ok && strings.HasSuffix(getStr(e, "type"), "_error") {
				// Server tools report errors as a content object such as
				// {"type": "web_search_tool_result_error", "error_code": ...}.
				v, _ := first(e, "error_code", "message")
				if errText = errorText(v); errText == "" {
					errText = "true"
				}
			}
			b.result(getStr(bm, "tool_use_id"), "", bm["content"], errText)
		}
	}
	return text.String(), made
}
