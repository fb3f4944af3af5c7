package format

import (
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// aiSDKAdapter reads the Vercel AI SDK (package "ai", v4 to v7) as users
// save it: a ModelMessage list (result.response.messages, and from v7 on
// result.responseMessages), alone or as {"messages": [...]}, and a steps
// dump (result.steps: JSON.stringify of the step objects, whose content
// parts hold the calls from v5 on; or the step fields text, toolCalls,
// toolResults picked by hand).
//
// Messages: assistant "tool-call" parts are calls (toolCallId, toolName,
// input; v4 args); "tool-result" parts answer them by toolCallId, with
// output {type: json | text | content, value} as the result and error-json
// / error-text (or v4 isError) making an error; execution-denied is an
// error too. Steps: "tool-call" and "tool-result" parts (output taken as
// the tool returned it), "tool-error" parts (error, saved as {} by
// JSON.stringify). The final answer is the text of the last assistant
// message or step when it made no tool call.
//
// UIMessage lists (ai 5 on, useChat and chat persistence: aisdk_ui.go)
// and the UI message stream (a chat route's response: aisdk_uistream.go)
// are read too: tool-NAME / dynamic-tool parts are calls with their
// output or errorText, each step-start begins a turn.
//
// Detection claims a list as soon as one message holds an AI SDK tool
// part, so that a list mixing two SDKs' messages gets Parse's located error
// rather than another format's reading.
type aiSDKAdapter struct{}

func (aiSDKAdapter) Name() string { return "ai-sdk" }

// aiSDKMessageParts are the content part types of ModelMessages, v4 to v7.
var aiSDKMessageParts = map[string]bool{
	"text": true, "reasoning": true, "redacted-reasoning": true, "image": true, "file": true,
	"tool-call": true, "tool-result": true, "tool-approval-request": true, "tool-approval-response": true,
	"custom": true, "source": true,
}

// aiSDKStepParts are the content part types of a step (v5 on).
var aiSDKStepParts = map[string]bool{
	"text": true, "reasoning": true, "source": true, "file": true, "tool-call": true, "tool-result": true,
	"tool-error": true, "tool-approval-request": true, "tool-output-denied": true, "custom": true,
}

// isAISDKToolPart reports whether m is an AI SDK tool-call or tool-result
// part: a hyphenated type and a toolCallId, which no provider format has.
func isAISDKToolPart(m jsondoc.Value) bool {
	switch m.Get("type").Text() {
	case "tool-call", "tool-result", "tool-error":
		return m.Get("toolCallId").Kind() == jsondoc.String
	}
	return false
}

// isAISDKStep reports whether m looks like a step of result.steps.
func isAISDKStep(m jsondoc.Value) bool {
	if isArr(m.Get("content")) && m.Get("finishReason").Exists() {
		return true
	}
	return isArr(m.Get("toolCalls")) && isArr(m.Get("toolResults")) && !m.Get("role").Exists()
}

// aiSDKMessages returns the message list of a document, or nil.
func aiSDKMessages(in *Input) []jsondoc.Value {
	if m, ok := in.Object(); ok {
		if list := m.Get("messages"); isArr(list) {
			return elems(list)
		}
		return nil
	}
	return in.Records()
}

func aiSDKSteps(in *Input) bool {
	recs := in.Records()
	if len(recs) == 0 {
		return false
	}
	for _, r := range recs {
		if !isAISDKStep(r) {
			return false
		}
	}
	return true
}

func (aiSDKAdapter) Detect(in *Input) (string, bool) {
	if aiSDKSteps(in) {
		return streamReason(in, len(in.Records()), "Vercel AI SDK step") + " (result.steps)", true
	}
	if r := aiSDKUIStreamDetect(in); r != "" {
		return r, true
	}
	list := aiSDKMessages(in)
	if r := aiSDKUIDetect(list); r != "" {
		return r, true
	}
	n := 0
	for _, m := range list {
		for _, p := range m.Get("content").Elems() {
			if isAISDKToolPart(p) {
				n++
			}
		}
	}
	if n == 0 {
		return "", false
	}
	return "a Vercel AI SDK ModelMessage list (" + plural(len(list), "message") + ", " + plural(n, "tool part") + ")", true
}

func (aiSDKAdapter) Parse(in *Input) (engine.Trace, error) {
	b := in.newBuilder()
	if recs := in.Records(); len(recs) > 0 && isAISDKStep(recs[0]) {
		for _, r := range recs {
			if err := aiSDKStep(b, r); err != nil {
				return engine.Trace{}, err
			}
		}
		return b.trace(), nil
	}
	if recs := in.Records(); len(recs) > 0 {
		if c, _ := aiSDKUIChunk(recs[0]); c && !recs[0].Get("role").Exists() {
			return aiSDKUIStream(in)
		}
	}
	list := aiSDKMessages(in)
	if list == nil {
		return engine.Trace{}, notFit("ai-sdk", in.Value(), `expected a ModelMessage list, {"messages": [...]} or a steps list`)
	}
	if aiSDKUIList(list) {
		for _, m := range list {
			if err := aiSDKUIMessage(b, m); err != nil {
				return engine.Trace{}, err
			}
		}
		return b.trace(), nil
	}
	for _, m := range list {
		if err := aiSDKMessage(b, m); err != nil {
			return engine.Trace{}, err
		}
	}
	return b.trace(), nil
}

// aiSDKMessage reads one ModelMessage.
func aiSDKMessage(b *builder, m jsondoc.Value) error {
	if !isObj(m) {
		return shapeErr("ai-sdk", m, "a message must be an object, not %s", aType(m))
	}
	rv := m.Get("role")
	role := rv.Text()
	switch role {
	case "system", "user", "assistant", "tool":
	default:
		if !rv.Exists() {
			return notFit("ai-sdk", m, `not an AI SDK ModelMessage: it has no "role"`)
		}
		return notFit("ai-sdk", rv, "not an AI SDK message role (system, user, assistant or tool)")
	}
	for _, k := range [...]string{"tool_calls", "function_call", "tool_call_id", "parts"} {
		if v := m.Get(k); v.Exists() {
			return shapeErr("ai-sdk", v, "an AI SDK ModelMessage has no %q (it is another SDK's message)", k)
		}
	}
	content := m.Get("content")
	switch content.Kind() {
	case jsondoc.Invalid:
		return notFit("ai-sdk", m, `an AI SDK ModelMessage needs "content"`)
	case jsondoc.String:
		if role == "assistant" {
			b.turn(content.Text(), false)
		}
		return nil
	case jsondoc.Array:
	default:
		return shapeErr("ai-sdk", content, "content must be a string or an array of parts, not %s", aType(content))
	}
	var text strings.Builder
	made := false
	for _, pm := range content.Elems() {
		if !isObj(pm) {
			return shapeErr("ai-sdk", pm, "a content part must be an object, not %s", aType(pm))
		}
		tv := pm.Get("type")
		if !aiSDKMessageParts[tv.Text()] {
			if !tv.Exists() {
				return notFit("ai-sdk", pm, `an AI SDK content part needs a "type"`)
			}
			return notFit("ai-sdk", tv, "not an AI SDK content part type (text, reasoning, image, file, tool-call, tool-result, ...)")
		}
		switch tv.Text() {
		case "text":
			if role == "assistant" {
				text.WriteString(pm.Get("text").Text())
			}
		case "tool-call":
			if err := aiSDKToolCallPart(b, pm); err != nil {
				return err
			}
			if exec, _ := pm.Get("providerExecuted").Bool(); !exec {
				made = true
			}
		case "tool-result":
			id, err := str("ai-sdk", "toolCallId", pm.Get("toolCallId"))
			if err != nil {
				return err
			}
			res, errText := aiSDKOutput(pm)
			b.result(id, "", res, errText)
		}
	}
	if role == "assistant" {
		b.turn(text.String(), made)
	}
	return nil
}

// aiSDKToolCallPart adds the call of a tool-call part (input, or v4 args).
func aiSDKToolCallPart(b *builder, pm jsondoc.Value) error {
	id, ok := pm.Get("toolCallId").Str()
	if !ok {
		return notFit("ai-sdk", pm, `a tool-call part needs a string "toolCallId"`)
	}
	name, err := str("ai-sdk", "toolName", pm.Get("toolName"))
	if err != nil {
		return err
	}
	c := engine.ToolCall{Tool: name, ID: id}
	args, _ := first(pm, "input", "args")
	b.setArgs(&c, args)
	b.add(c)
	return nil
}

// aiSDKOutput reads a ModelMessage tool-result part: its result and error
// text ("" for success).
func aiSDKOutput(pm jsondoc.Value) (jsondoc.Value, string) {
	if out := pm.Get("output"); isObj(out) {
		switch out.Get("type").Text() {
		case "error-text", "error-json":
			e := errorText(out.Get("value"))
			if e == "" {
				e = "true"
			}
			return out.Get("value"), e
		case "execution-denied":
			e := "execution denied"
			if r := out.Get("reason").Text(); r != "" {
				e += ": " + r
			}
			return jsondoc.Value{}, e
		case "json", "text", "content":
			return out.Get("value"), ""
		}
		return out, ""
	}
	res := pm.Get("result") // v4
	if isErr, _ := pm.Get("isError").Bool(); isErr {
		e := errorText(res)
		if e == "" {
			e = "true"
		}
		return res, e
	}
	return res, ""
}

// aiSDKStep reads one step of result.steps: its content parts (v5 on) or
// its toolCalls, toolResults and text (v4, or picked fields).
func aiSDKStep(b *builder, m jsondoc.Value) error {
	if !isObj(m) {
		return shapeErr("ai-sdk", m, "a step must be an object, not %s", aType(m))
	}
	if !isAISDKStep(m) {
		return notFit("ai-sdk", m, `not an AI SDK step: it needs "content" and "finishReason", or "toolCalls" and "toolResults"`)
	}
	if content := m.Get("content"); isArr(content) {
		var text strings.Builder
		made := false
		for _, pm := range content.Elems() {
			if !isObj(pm) {
				return shapeErr("ai-sdk", pm, "a content part must be an object, not %s", aType(pm))
			}
			tv := pm.Get("type")
			if !aiSDKStepParts[tv.Text()] {
				if !tv.Exists() {
					return notFit("ai-sdk", pm, `an AI SDK content part needs a "type"`)
				}
				return notFit("ai-sdk", tv, "not an AI SDK step content part type (text, reasoning, tool-call, tool-result, tool-error, ...)")
			}
			id, err := str("ai-sdk", "toolCallId", pm.Get("toolCallId"))
			if err != nil {
				return err
			}
			switch tv.Text() {
			case "text":
				text.WriteString(pm.Get("text").Text())
			case "tool-call":
				if err := aiSDKToolCallPart(b, pm); err != nil {
					return err
				}
				if exec, _ := pm.Get("providerExecuted").Bool(); !exec {
					made = true
				}
			case "tool-result":
				b.result(id, "", pm.Get("output"), "")
			case "tool-error":
				e := errorText(pm.Get("error"))
				if e == "" || e == "{}" {
					e = "true"
				}
				b.result(id, "", jsondoc.Value{}, e)
			case "tool-output-denied":
				b.result(id, "", jsondoc.Value{}, "execution denied")
			}
		}
		b.turn(text.String(), made)
		return nil
	}
	calls := m.Get("toolCalls")
	for _, pm := range calls.Elems() {
		if !isObj(pm) {
			return shapeErr("ai-sdk", pm, "a tool call must be an object, not %s", aType(pm))
		}
		if err := aiSDKToolCallPart(b, pm); err != nil {
			return err
		}
	}
	for _, pm := range m.Get("toolResults").Elems() {
		if !isObj(pm) {
			return shapeErr("ai-sdk", pm, "a tool result must be an object, not %s", aType(pm))
		}
		id, err := str("ai-sdk", "toolCallId", pm.Get("toolCallId"))
		if err != nil {
			return err
		}
		res, _ := first(pm, "output", "result")
		b.result(id, "", res, "")
	}
	b.turn(m.Get("text").Text(), calls.Len() > 0)
	return nil
}
