package format

import (
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// The Vercel AI SDK's UIMessage lists (ai 5 on: what useChat holds and
// what chat persistence stores, as toUIMessageStream's onFinish gives
// them): {id, role, parts}. A tool part is typed "tool-NAME" (a static
// tool) or "dynamic-tool" (with toolName), and carries toolCallId, state,
// input (rawInput when the input could not be parsed), output and
// errorText. "step-start" parts separate the steps of one assistant
// message.

// isAISDKUIToolPart reports whether m is a UIMessage tool part: "tool-NAME"
// or "dynamic-tool", with a string toolCallId.
func isAISDKUIToolPart(m jsondoc.Value) bool {
	t := m.Get("type").Text()
	if t != "dynamic-tool" && !strings.HasPrefix(t, "tool-") {
		return false
	}
	return m.Get("toolCallId").Kind() == jsondoc.String
}

// isAISDKUIMessage reports whether m looks like a UIMessage: a role and a
// parts array every element of which is an object with a string type
// (Gemini Contents, the other {role, parts} shape, have untyped parts).
func isAISDKUIMessage(m jsondoc.Value) bool {
	parts := m.Get("parts")
	if m.Get("role").Kind() != jsondoc.String || !isArr(parts) || parts.Len() == 0 || m.Get("content").Exists() {
		return false
	}
	for _, p := range parts.Elems() {
		if p.Get("type").Kind() != jsondoc.String {
			return false
		}
	}
	return true
}

// aiSDKUIList reports whether a message list is read as UIMessages: one
// of its messages has a parts array and no content.
func aiSDKUIList(list []jsondoc.Value) bool {
	for _, m := range list {
		if isArr(m.Get("parts")) && !m.Get("content").Exists() {
			return true
		}
	}
	return false
}

// aiSDKUIDetect recognises a UIMessage list: one message with a UI tool
// part, or every message a UIMessage. It returns the reason, or "".
func aiSDKUIDetect(list []jsondoc.Value) string {
	if len(list) == 0 {
		return ""
	}
	tools, all := 0, true
	for _, m := range list {
		all = all && isAISDKUIMessage(m)
		for _, p := range m.Get("parts").Elems() {
			if isAISDKUIToolPart(p) {
				tools++
			}
		}
	}
	if tools == 0 && !all {
		return ""
	}
	return "a Vercel AI SDK UIMessage list (" + plural(len(list), "message") + ", " + plural(tools, "tool part") + ")"
}

// aiSDKUIMessage reads one UIMessage: each assistant step (the parts
// between step-start parts) is a turn; tool parts are calls with their
// output or error.
func aiSDKUIMessage(b *builder, m jsondoc.Value) error {
	if !isObj(m) {
		return shapeErr("ai-sdk", m, "a message must be an object, not %s", aType(m))
	}
	parts := m.Get("parts")
	if !isArr(parts) {
		if !parts.Exists() {
			return notFit("ai-sdk", m, `not an AI SDK UIMessage: it has no "parts" (a list mixing UIMessages and other messages)`)
		}
		return shapeErr("ai-sdk", parts, "parts must be an array, not %s", aType(parts))
	}
	rv := m.Get("role")
	role := rv.Text()
	switch role {
	case "system", "user", "assistant":
	default:
		if !rv.Exists() {
			return notFit("ai-sdk", m, `not an AI SDK UIMessage: it has no "role"`)
		}
		return notFit("ai-sdk", rv, "not an AI SDK UIMessage role (system, user or assistant)")
	}
	var text strings.Builder
	made, started := false, false
	flush := func() {
		if role == "assistant" && started {
			b.turn(text.String(), made)
		}
		text.Reset()
		made, started = false, false
	}
	for _, pm := range parts.Elems() {
		if !isObj(pm) {
			return shapeErr("ai-sdk", pm, "a part must be an object, not %s", aType(pm))
		}
		tv := pm.Get("type")
		if tv.Kind() != jsondoc.String {
			return notFit("ai-sdk", pm, `a UIMessage part needs a string "type"`)
		}
		t := tv.Text()
		switch {
		case t == "step-start":
			flush()
			started = true
		case t == "text":
			started = true
			text.WriteString(pm.Get("text").Text())
		case t == "dynamic-tool" || strings.HasPrefix(t, "tool-"):
			started = true
			if err := aiSDKUIToolPart(b, pm, t); err != nil {
				return err
			}
			if exec, _ := pm.Get("providerExecuted").Bool(); !exec {
				made = true
			}
		}
	}
	flush()
	return nil
}

// aiSDKUIToolPart adds the call of a UIMessage tool part and its result:
// output for state output-available, an error with errorText for
// output-error, "execution denied" (with the approval's reason) for
// output-denied; other states (input-streaming, input-available,
// approval-requested, approval-responded) have no result yet.
func aiSDKUIToolPart(b *builder, pm jsondoc.Value, t string) error {
	id, ok := pm.Get("toolCallId").Str()
	if !ok {
		return notFit("ai-sdk", pm, `a tool part needs a string "toolCallId"`)
	}
	name := strings.TrimPrefix(t, "tool-")
	if t == "dynamic-tool" {
		nv, ok := pm.Get("toolName").Str()
		if !ok {
			return notFit("ai-sdk", pm, `a dynamic-tool part needs a string "toolName"`)
		}
		name = nv
	}
	c := engine.ToolCall{Tool: name, ID: id}
	args := pm.Get("input")
	if !args.Exists() {
		args = pm.Get("rawInput")
	}
	b.setArgs(&c, args)
	switch pm.Get("state").Text() {
	case "output-available":
		setResult(&c, pm.Get("output"))
	case "output-error":
		e := errorText(pm.Get("errorText"))
		if e == "" {
			e = "true"
		}
		c.Error = engine.CallError(e)
	case "output-denied":
		e := "execution denied"
		if r := pm.Get("approval").Get("reason").Text(); r != "" {
			e += ": " + r
		}
		c.Error = engine.CallError(e)
	}
	b.add(c)
	return nil
}
