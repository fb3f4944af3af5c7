package format

import (
	"github.com/toolscore/toolscore/internal/engine"
)

// openAIAdapter reads OpenAI Chat Completions traces: a chat.completion
// response, a list of messages (or of responses), an object with
// "messages" (a request body, optionally with the response's "choices"), a
// single message, or a single tool call.
//
// Assistant messages give calls from tool_calls (function calls with
// arguments as JSON text or an object; custom tools with free-text input
// kept raw) and the legacy function_call. Role "tool" messages are results
// joined by tool_call_id; legacy role "function" messages are joined by
// name, in order. Only choice 0 of a response counts.
type openAIAdapter struct{}

func (openAIAdapter) Name() string { return "openai" }

func (openAIAdapter) Detect(in *Input) (string, bool) {
	if m, ok := in.Value.(map[string]any); ok && in.Form == FormJSON {
		switch {
		case isChatCompletion(m):
			return "an OpenAI chat.completion object (choices[0].message)", true
		case m["messages"] != nil:
			msgs, ok := m["messages"].([]any)
			if ok && allOpenAIMessages(msgs) {
				return "an object whose \"messages\" are " + plural(len(msgs), "OpenAI chat message"), true
			}
			return "", false
		case isOpenAIMessage(m):
			return "a single OpenAI chat message", true
		case isOpenAIToolCall(m):
			return "a single OpenAI tool call", true
		}
		return "", false
	}
	recs := in.Records()
	if allOpenAIMessages(recs) {
		return "a list of " + plural(len(recs), "OpenAI chat message") + " (role/content)", true
	}
	return "", false
}

func isChatCompletion(m map[string]any) bool {
	if getStr(m, "object") == "chat.completion" {
		return true
	}
	ch := getArr(m, "choices")
	if len(ch) == 0 {
		return false
	}
	c, _ := ch[0].(map[string]any)
	_, ok := c["message"].(map[string]any)
	return ok
}

func isOpenAIMessage(m map[string]any) bool {
	switch getStr(m, "role") {
	case "system", "developer", "user", "assistant", "tool", "function":
		return true
	}
	return false
}

func isOpenAIToolCall(m map[string]any) bool {
	if _, ok := m["role"]; ok {
		return false
	}
	if fn, ok := m["function"].(map[string]any); ok {
		_, ok := fn["name"].(string)
		return ok
	}
	return getStr(m, "type") == "custom" && getObj(m, "custom") != nil
}

func allOpenAIMessages(recs []any) bool {
	if len(recs) == 0 {
		return false
	}
	for _, r := range recs {
		m, ok := r.(map[string]any)
		if !ok || !(isOpenAIMessage(m) || isChatCompletion(m)) {
			return false
		}
	}
	return true
}

func (openAIAdapter) Parse(in *Input) (engine.Trace, error) {
	p := openAIParser{b: newBuilder()}
	var err error
	switch v := in.Value.(type) {
	case map[string]any:
		switch {
		case v["messages"] != nil || isChatCompletion(v):
			if msgs, ok := v["messages"]; ok {
				list, ok := msgs.([]any)
				if !ok {
					return engine.Trace{}, shapeErr("openai", []any{"messages"}, "messages must be an array, not %s", aType(msgs))
				}
				if err = p.messages(list, root("messages")); err != nil {
					return engine.Trace{}, err
				}
			}
			if isChatCompletion(v) {
				err = p.completion(v, root())
			}
		case isOpenAIToolCall(v):
			c := p.toolCall(v)
			p.b.add(c)
		case v["role"] != nil:
			err = p.message(v, root())
		default:
			err = notFit("openai", nil, v, "expected a chat.completion object, a list of messages, a message or a tool call")
		}
	case []any:
		err = p.messages(v, root())
	default:
		err = shapeErr("openai", nil, "expected a JSON object or array, not %s", aType(v))
	}
	if err != nil {
		return engine.Trace{}, err
	}
	return p.b.trace(), nil
}

type openAIParser struct {
	b *builder
}

func (p *openAIParser) messages(list []any, l loc) error {
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return shapeErr("openai", l.elem(i).tokens(), "a message must be an object, not %s", aType(e))
		}
		var err error
		if _, isMsg := m["role"]; !isMsg && isChatCompletion(m) {
			err = p.completion(m, l.elem(i))
		} else {
			err = p.message(m, l.elem(i))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// completion reads choice 0 of a chat.completion object.
func (p *openAIParser) completion(m map[string]any, l loc) error {
	choices, ok := m["choices"].([]any)
	if !ok {
		return shapeErr("openai", l.tokens("choices"), "choices must be an array")
	}
	for i, c := range choices {
		cm, ok := c.(map[string]any)
		if !ok {
			return shapeErr("openai", l.tokens("choices", i), "a choice must be an object, not %s", aType(c))
		}
		if idx, ok := cm["index"]; ok && idString(idx) != "0" {
			continue
		}
		msg, ok := cm["message"].(map[string]any)
		if !ok {
			return shapeErr("openai", l.tokens("choices", i, "message"), "the choice has no message object")
		}
		return p.message(msg, root(l.tokens("choices", i, "message")...))
	}
	return nil
}

// openAIPartTypes are the content part types of Chat Completions messages;
// "output_text" is accepted too, as some compatible servers write it.
var openAIPartTypes = map[string]bool{
	"text": true, "image_url": true, "input_audio": true, "file": true, "refusal": true, "output_text": true,
}

// checkOpenAIMessage reports, as a *ShapeError, what keeps m from being a
// Chat Completions message: a role of system, developer, user, assistant,
// tool or function; no "type" (Anthropic messages and Responses items have
// one); "content" (an assistant message may have tool_calls,
// function_call or refusal instead) that is a string, null or an array of
// OpenAI content parts.
func checkOpenAIMessage(m map[string]any, l loc) error {
	r, hasRole := m["role"]
	if !hasRole {
		return notFit("openai", l.tokens(), m, `not an OpenAI chat message or chat.completion: it has no "role"`)
	}
	if !isOpenAIMessage(m) {
		return notFit("openai", l.tokens("role"), r, `not an OpenAI chat message: "role" must be system, developer, user, assistant, tool or function`)
	}
	if t, ok := m["type"]; ok {
		return notFit("openai", l.tokens("type"), t, `an OpenAI chat message has no "type" (Anthropic messages and OpenAI Responses items have one)`)
	}
	content, ok := m["content"]
	if !ok {
		if getStr(m, "role") == "assistant" {
			if _, ok := first(m, "tool_calls", "function_call", "refusal", "audio"); ok {
				return nil
			}
		}
		return notFit("openai", l.tokens(), m, `an OpenAI chat message needs "content"`)
	}
	switch c := content.(type) {
	case nil, string:
	case []any:
		for j, part := range c {
			pm, ok := part.(map[string]any)
			if !ok {
				return shapeErr("openai", l.tokens("content", j), "a content part must be an object, not %s", aType(part))
			}
			if t, ok := pm["type"]; !openAIPartTypes[getStr(pm, "type")] {
				if !ok {
					return notFit("openai", l.tokens("content", j), pm, `an OpenAI content part needs a "type"`)
				}
				return notFit("openai", l.tokens("content", j, "type"), t, "not an OpenAI content part type (text, image_url, input_audio, file or refusal)")
			}
		}
	default:
		return shapeErr("openai", l.tokens("content"), "content must be a string, an array of parts or null, not %s", aType(c))
	}
	return nil
}

func (p *openAIParser) message(m map[string]any, l loc) error {
	if err := checkOpenAIMessage(m, l); err != nil {
		return err
	}
	switch getStr(m, "role") {
	case "assistant":
		made := false
		if tcs, ok := m["tool_calls"]; ok && tcs != nil {
			list, ok := tcs.([]any)
			if !ok {
				return shapeErr("openai", l.tokens("tool_calls"), "tool_calls must be an array, not %s", aType(tcs))
			}
			for _, tc := range list {
				tm, _ := tc.(map[string]any)
				p.b.add(p.toolCall(tm))
				made = true
			}
		}
		if fc, ok := m["function_call"].(map[string]any); ok {
			c := engine.ToolCall{Tool: getStr(fc, "name")}
			p.b.setArgs(&c, fc["arguments"])
			p.b.add(c)
			made = true
		}
		text := partsText(m["content"], "text", "output_text")
		if text == "" {
			text = getStr(m, "refusal")
		}
		p.b.turn(text, made)
	case "tool":
		p.b.result(idString(m["tool_call_id"]), "", m["content"], "")
	case "function":
		p.b.result("", getStr(m, "name"), m["content"], "")
	}
	return nil
}

// toolCall reads one tool_calls entry; an entry that is not an object or
// has no function is kept as a call with no name and an argument error, so
// the trace still reads.
func (p *openAIParser) toolCall(tm map[string]any) engine.ToolCall {
	c := engine.ToolCall{ID: idString(tm["id"])}
	if tm == nil {
		c.ArgsError = "the tool call is not an object"
		return c
	}
	if cu, ok := tm["custom"].(map[string]any); ok || getStr(tm, "type") == "custom" {
		c.Tool = getStr(cu, "name")
		setRaw(&c, getStr(cu, "input"))
		return c
	}
	fn, ok := tm["function"].(map[string]any)
	if !ok {
		c.ArgsError = "the tool call has no function"
		return c
	}
	c.Tool = getStr(fn, "name")
	p.b.setArgs(&c, fn["arguments"])
	return c
}
