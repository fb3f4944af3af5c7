package format

import (
	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
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
	if m, ok := in.Object(); ok {
		switch {
		case isChatCompletion(m):
			return "an OpenAI chat.completion object (choices[0].message)", true
		case set(m.Get("messages")):
			msgs := m.Get("messages")
			if isArr(msgs) && allOpenAIMessages(elems(msgs)) {
				return "an object whose \"messages\" are " + plural(msgs.Len(), "OpenAI chat message"), true
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
	if completions, ok := openAIRecords(recs); ok {
		return "a list of " + openAIListItems(len(recs), completions), true
	}
	return "", false
}

// openAIListItems describes a list of n OpenAI chat messages and
// chat.completion responses as Parse reads it, completions of them read
// as chat.completion objects (openAIRecords): "3 OpenAI chat messages
// (role/content)", "2 OpenAI chat.completion objects (choices[0].message
// of each)", or both counts.
func openAIListItems(n, completions int) string {
	switch messages := n - completions; {
	case completions == 0:
		return plural(messages, "OpenAI chat message") + " (role/content)"
	case messages == 0:
		return plural(completions, "OpenAI chat.completion object") + " (choices[0].message of each)"
	default:
		return plural(messages, "OpenAI chat message") + " and " + plural(completions, "chat.completion object") + " (choices[0].message of each), in order"
	}
}

// elems returns an array's elements (nil for anything else).
func elems(v jsondoc.Value) []jsondoc.Value {
	if !isArr(v) {
		return nil
	}
	out := make([]jsondoc.Value, 0, v.Len())
	for _, e := range v.Elems() {
		out = append(out, e)
	}
	return out
}

func isChatCompletion(m jsondoc.Value) bool {
	if m.Get("object").Text() == "chat.completion" {
		return true
	}
	ch := m.Get("choices")
	if !isArr(ch) || ch.Len() == 0 {
		return false
	}
	return isObj(ch.Index(0).Get("message"))
}

func isOpenAIMessage(m jsondoc.Value) bool { return isOpenAIRole(m.Get("role").Text()) }

// isOpenAIRole reports whether r is the role of a Chat Completions
// message.
func isOpenAIRole(r string) bool {
	switch r {
	case "system", "developer", "user", "assistant", "tool", "function":
		return true
	}
	return false
}

func isOpenAIToolCall(m jsondoc.Value) bool {
	if m.Get("role").Exists() {
		return false
	}
	if fn := m.Get("function"); isObj(fn) {
		return fn.Get("name").Kind() == jsondoc.String
	}
	return m.Get("type").Text() == "custom" && isObj(m.Get("custom"))
}

// allOpenAIMessages reports whether recs is a non-empty list of OpenAI
// chat messages and chat.completion objects.
func allOpenAIMessages(recs []jsondoc.Value) bool {
	_, ok := openAIRecords(recs)
	return ok
}

// openAIRecords reports whether recs is a non-empty list of objects each an
// OpenAI chat message (isOpenAIMessage) or a chat.completion object, and
// counts those Parse reads as chat.completion objects, for their choice
// 0: the ones without a "role". Each element's "role" is looked up once.
func openAIRecords(recs []jsondoc.Value) (completions int, ok bool) {
	if len(recs) == 0 {
		return 0, false
	}
	for _, m := range recs {
		if !isObj(m) {
			return 0, false
		}
		role := m.Get("role")
		if isOpenAIRole(role.Text()) {
			continue
		}
		if !isChatCompletion(m) {
			return 0, false
		}
		if !role.Exists() {
			completions++
		}
	}
	return completions, true
}

func (openAIAdapter) Parse(in *Input) (engine.Trace, error) {
	p := openAIParser{b: in.newBuilder(), format: "openai"}
	var err error
	v := in.Value()
	switch v.Kind() {
	case jsondoc.Object:
		switch {
		case set(v.Get("messages")) || isChatCompletion(v):
			if msgs := v.Get("messages"); msgs.Exists() {
				if !isArr(msgs) {
					return engine.Trace{}, shapeErr("openai", msgs, "messages must be an array, not %s", aType(msgs))
				}
				if err = p.messages(msgs); err != nil {
					return engine.Trace{}, err
				}
			}
			if isChatCompletion(v) {
				err = p.completion(v)
			}
		case isOpenAIToolCall(v):
			var c engine.ToolCall
			if c, err = p.toolCall(v); err == nil {
				p.b.add(c)
			}
		case set(v.Get("role")):
			err = p.message(v)
		default:
			err = notFit("openai", v, "expected a chat.completion object, a list of messages, a message or a tool call")
		}
	case jsondoc.Array:
		err = p.messages(v)
	default:
		err = shapeErr("openai", v, "expected a JSON object or array, not %s", aType(v))
	}
	if err != nil {
		return engine.Trace{}, err
	}
	return p.b.trace(), nil
}

type openAIParser struct {
	b *builder
	// format names the adapter in shape errors of tool calls: "openai",
	// or another adapter that reads OpenAI-style calls (langchain).
	format string
}

func (p *openAIParser) messages(list jsondoc.Value) error {
	for _, m := range list.Elems() {
		if !isObj(m) {
			return shapeErr("openai", m, "a message must be an object, not %s", aType(m))
		}
		var err error
		f := readOpenAIMsg(m)
		if !f.role.Exists() && isChatCompletion(m) {
			err = p.completion(m)
		} else {
			err = p.messageOf(m, &f)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// completion reads choice 0 of a chat.completion object.
func (p *openAIParser) completion(m jsondoc.Value) error {
	choices := m.Get("choices")
	if !isArr(choices) {
		return shapeErr("openai", m, "choices must be an array").under("choices")
	}
	for _, cm := range choices.Elems() {
		if !isObj(cm) {
			return shapeErr("openai", cm, "a choice must be an object, not %s", aType(cm))
		}
		if idx := cm.Get("index"); idx.Exists() && idString(idx) != "0" {
			continue
		}
		msg := cm.Get("message")
		if !isObj(msg) {
			return shapeErr("openai", cm, "the choice has no message object").under("message")
		}
		return p.message(msg)
	}
	return nil
}

// openAIPartTypes are the content part types of Chat Completions messages;
// "output_text" is accepted too, as some compatible servers write it.
var openAIPartTypes = map[string]bool{
	"text": true, "image_url": true, "input_audio": true, "file": true, "refusal": true, "output_text": true,
}

// openAIMsg is the members of a message that the adapter reads, found in
// one pass over its members (each the value Get would return: a repeated
// key's last one; the zero Value when absent).
type openAIMsg struct {
	role, typ, content, toolCalls, functionCall, refusal, audio, toolCallID, name jsondoc.Value
}

// readOpenAIMsg reads the members of m the adapter looks at.
func readOpenAIMsg(m jsondoc.Value) (f openAIMsg) {
	for k, v := range m.Members() {
		switch k {
		case "role":
			f.role = v
		case "type":
			f.typ = v
		case "content":
			f.content = v
		case "tool_calls":
			f.toolCalls = v
		case "function_call":
			f.functionCall = v
		case "refusal":
			f.refusal = v
		case "audio":
			f.audio = v
		case "tool_call_id":
			f.toolCallID = v
		case "name":
			f.name = v
		}
	}
	return f
}

// checkOpenAIMessage reports, as a *ShapeError, what keeps m (whose members
// are f) from being a Chat Completions message: a role of system,
// developer, user, assistant, tool or function; no "type" (Anthropic
// messages and Responses items have one); "content" (an assistant message
// may have tool_calls, function_call, refusal or audio instead) that is a
// string, null or an array of OpenAI content parts.
func checkOpenAIMessage(m jsondoc.Value, f *openAIMsg) error {
	r := f.role
	if !r.Exists() {
		return notFit("openai", m, `not an OpenAI chat message or chat.completion: it has no "role"`)
	}
	switch r.Text() {
	case "system", "developer", "user", "assistant", "tool", "function":
	default:
		return notFit("openai", r, `not an OpenAI chat message: "role" must be system, developer, user, assistant, tool or function`)
	}
	if t := f.typ; t.Exists() {
		return notFit("openai", t, `an OpenAI chat message has no "type" (Anthropic messages and OpenAI Responses items have one)`)
	}
	content := f.content
	if !content.Exists() {
		if r.Text() == "assistant" && (f.toolCalls.Exists() || f.functionCall.Exists() || f.refusal.Exists() || f.audio.Exists()) {
			return nil
		}
		return notFit("openai", m, `an OpenAI chat message needs "content"`)
	}
	switch content.Kind() {
	case jsondoc.Null, jsondoc.String:
	case jsondoc.Array:
		for _, pm := range content.Elems() {
			if !isObj(pm) {
				return shapeErr("openai", pm, "a content part must be an object, not %s", aType(pm))
			}
			if t := pm.Get("type"); !openAIPartTypes[t.Text()] {
				if !t.Exists() {
					return notFit("openai", pm, `an OpenAI content part needs a "type"`)
				}
				return notFit("openai", t, "not an OpenAI content part type (text, image_url, input_audio, file or refusal)")
			}
		}
	default:
		return shapeErr("openai", content, "content must be a string, an array of parts or null, not %s", aType(content))
	}
	return nil
}

func (p *openAIParser) message(m jsondoc.Value) error {
	f := readOpenAIMsg(m)
	return p.messageOf(m, &f)
}

// messageOf reads the message m whose members are f.
func (p *openAIParser) messageOf(m jsondoc.Value, f *openAIMsg) error {
	if err := checkOpenAIMessage(m, f); err != nil {
		return err
	}
	switch f.role.Text() {
	case "assistant":
		made := false
		if tcs := f.toolCalls; set(tcs) {
			if !isArr(tcs) {
				return shapeErr("openai", tcs, "tool_calls must be an array, not %s", aType(tcs))
			}
			for _, tc := range tcs.Elems() {
				c, err := p.toolCall(tc)
				if err != nil {
					return err
				}
				p.b.add(c)
				made = true
			}
		}
		if fc := f.functionCall; isObj(fc) {
			name, err := str(p.format, "name", fc.Get("name"))
			if err != nil {
				return err
			}
			c := engine.ToolCall{Tool: name}
			p.b.setArgs(&c, fc.Get("arguments"))
			p.b.add(c)
			made = true
		}
		text := partsText(f.content, "text", "output_text")
		if text == "" {
			text = f.refusal.Text()
		}
		p.b.turn(text, made)
	case "tool":
		id, err := idOf(p.format, "tool_call_id", f.toolCallID)
		if err != nil {
			return err
		}
		p.b.result(id, "", f.content, "")
	case "function":
		name, err := str(p.format, "name", f.name)
		if err != nil {
			return err
		}
		p.b.result("", name, f.content, "")
	}
	return nil
}

// toolCall reads one tool_calls entry; an entry that is not an object or
// has no function is kept as a call with no name and an argument error, so
// the trace still reads. A name, id or custom input of the wrong type is a
// *ShapeError.
func (p *openAIParser) toolCall(tm jsondoc.Value) (engine.ToolCall, error) {
	if !isObj(tm) {
		return engine.ToolCall{ArgsError: "the tool call is not an object"}, nil
	}
	var id, custom, typ, fn jsondoc.Value
	for k, v := range tm.Members() {
		switch k {
		case "id":
			id = v
		case "custom":
			custom = v
		case "type":
			typ = v
		case "function":
			fn = v
		}
	}
	cid, err := idOf(p.format, "id", id)
	if err != nil {
		return engine.ToolCall{}, err
	}
	c := engine.ToolCall{ID: cid}
	if isObj(custom) || typ.Text() == "custom" {
		if c.Tool, err = str(p.format, "name", custom.Get("name")); err != nil {
			return engine.ToolCall{}, err
		}
		input, err := str(p.format, "input", custom.Get("input"))
		if err != nil {
			return engine.ToolCall{}, err
		}
		setRaw(&c, input)
		return c, nil
	}
	if !isObj(fn) {
		c.ArgsError = "the tool call has no function"
		return c, nil
	}
	var name, args jsondoc.Value
	for k, v := range fn.Members() {
		switch k {
		case "name":
			name = v
		case "arguments":
			args = v
		}
	}
	if c.Tool, err = str(p.format, "name", name); err != nil {
		return engine.ToolCall{}, err
	}
	p.b.setArgs(&c, args)
	return c, nil
}
