package format

import (
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
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
func isAISDKToolPart(m map[string]any) bool {
	t := getStr(m, "type")
	if t != "tool-call" && t != "tool-result" && t != "tool-error" {
		return false
	}
	_, ok := m["toolCallId"].(string)
	return ok
}

// isAISDKStep reports whether m looks like a step of result.steps.
func isAISDKStep(m map[string]any) bool {
	if _, ok := m["content"].([]any); ok {
		if _, ok := m["finishReason"]; ok {
			return true
		}
	}
	_, tc := m["toolCalls"].([]any)
	_, tr := m["toolResults"].([]any)
	if tc && tr {
		_, hasRole := m["role"]
		return !hasRole
	}
	return false
}

// Detection claims a list as soon as one message holds an AI SDK tool
// part, so that a list mixing two SDKs' messages gets Parse's located error
// rather than another format's reading.

// aiSDKMessages returns the message list of a document, or nil.
func aiSDKMessages(in *Input) ([]any, loc) {
	if m, ok := in.Value.(map[string]any); ok && in.Form == FormJSON {
		if list, ok := m["messages"].([]any); ok {
			return list, root("messages")
		}
		return nil, root()
	}
	return in.Records(), root()
}

func (aiSDKAdapter) Detect(in *Input) (string, bool) {
	recs := in.Records()
	if len(recs) > 0 {
		steps := true
		for _, r := range recs {
			m, ok := r.(map[string]any)
			if !ok || !isAISDKStep(m) {
				steps = false
				break
			}
		}
		if steps {
			return streamReason(in, len(recs), "Vercel AI SDK step") + " (result.steps)", true
		}
	}
	list, _ := aiSDKMessages(in)
	n := 0
	for _, r := range list {
		m, _ := r.(map[string]any)
		for _, p := range getArr(m, "content") {
			if pm, ok := p.(map[string]any); ok && isAISDKToolPart(pm) {
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
	b := newBuilder()
	recs := in.Records()
	if len(recs) > 0 {
		if m, ok := recs[0].(map[string]any); ok && isAISDKStep(m) {
			for i, r := range recs {
				if err := aiSDKStep(b, r, root().elem(i)); err != nil {
					return engine.Trace{}, err
				}
			}
			return b.trace(), nil
		}
	}
	list, l := aiSDKMessages(in)
	if list == nil {
		return engine.Trace{}, notFit("ai-sdk", nil, in.Value, "expected a ModelMessage list, {\"messages\": [...]} or a steps list")
	}
	for i, r := range list {
		if err := aiSDKMessage(b, r, l.elem(i)); err != nil {
			return engine.Trace{}, err
		}
	}
	return b.trace(), nil
}

// aiSDKMessage reads one ModelMessage.
func aiSDKMessage(b *builder, v any, l loc) error {
	m, ok := v.(map[string]any)
	if !ok {
		return shapeErr("ai-sdk", l.tokens(), "a message must be an object, not %s", aType(v))
	}
	role, _ := m["role"].(string)
	switch role {
	case "system", "user", "assistant", "tool":
	case "":
		return notFit("ai-sdk", l.tokens(), m, `not an AI SDK ModelMessage: it has no "role"`)
	default:
		return notFit("ai-sdk", l.tokens("role"), role, "not an AI SDK message role (system, user, assistant or tool)")
	}
	for _, k := range [...]string{"tool_calls", "function_call", "tool_call_id", "parts"} {
		if _, ok := m[k]; ok {
			return shapeErr("ai-sdk", l.tokens(k), "an AI SDK ModelMessage has no %q (it is another SDK's message)", k)
		}
	}
	content, ok := m["content"]
	if !ok {
		return notFit("ai-sdk", l.tokens(), m, `an AI SDK ModelMessage needs "content"`)
	}
	switch c := content.(type) {
	case string:
		if role == "assistant" {
			b.turn(c, false)
		}
		return nil
	case []any:
		var text strings.Builder
		made := false
		for j, p := range c {
			pm, ok := p.(map[string]any)
			if !ok {
				return shapeErr("ai-sdk", l.tokens("content", j), "a content part must be an object, not %s", aType(p))
			}
			typ, _ := pm["type"].(string)
			if !aiSDKMessageParts[typ] {
				return notFit("ai-sdk", l.tokens("content", j, "type"), pm["type"], "not an AI SDK content part type (text, reasoning, image, file, tool-call, tool-result, ...)")
			}
			switch typ {
			case "text":
				if role == "assistant" {
					text.WriteString(getStr(pm, "text"))
				}
			case "tool-call":
				if err := aiSDKToolCallPart(b, pm, l.tokens("content", j)); err != nil {
					return err
				}
				if exec, _ := pm["providerExecuted"].(bool); !exec {
					made = true
				}
			case "tool-result":
				res, errText := aiSDKOutput(pm)
				b.result(getStr(pm, "toolCallId"), "", res, errText)
			}
		}
		if role == "assistant" {
			b.turn(text.String(), made)
		}
		return nil
	}
	return shapeErr("ai-sdk", l.tokens("content"), "content must be a string or an array of parts, not %s", aType(content))
}

// aiSDKToolCallPart adds the call of a tool-call part (input, or v4 args).
func aiSDKToolCallPart(b *builder, pm map[string]any, at []any) error {
	id, ok := pm["toolCallId"].(string)
	if !ok {
		return notFit("ai-sdk", at, pm, `a tool-call part needs a string "toolCallId"`)
	}
	c := engine.ToolCall{Tool: getStr(pm, "toolName"), ID: id}
	args, _ := first(pm, "input", "args")
	b.setArgs(&c, args)
	b.add(c)
	return nil
}

// aiSDKOutput reads a ModelMessage tool-result part: its result and error
// text ("" for success).
func aiSDKOutput(pm map[string]any) (any, string) {
	if out, ok := pm["output"].(map[string]any); ok {
		switch typ := getStr(out, "type"); typ {
		case "error-text", "error-json":
			e := errorText(out["value"])
			if e == "" {
				e = "true"
			}
			return out["value"], e
		case "execution-denied":
			e := "execution denied"
			if r := getStr(out, "reason"); r != "" {
				e += ": " + r
			}
			return nil, e
		case "json", "text", "content":
			return out["value"], ""
		}
		return out, ""
	}
	res := pm["result"] // v4
	if isErr, _ := pm["isError"].(bool); isErr {
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
func aiSDKStep(b *builder, v any, l loc) error {
	m, ok := v.(map[string]any)
	if !ok {
		return shapeErr("ai-sdk", l.tokens(), "a step must be an object, not %s", aType(v))
	}
	if !isAISDKStep(m) {
		return notFit("ai-sdk", l.tokens(), m, `not an AI SDK step: it needs "content" and "finishReason", or "toolCalls" and "toolResults"`)
	}
	if content, ok := m["content"].([]any); ok {
		var text strings.Builder
		made := false
		for j, p := range content {
			pm, ok := p.(map[string]any)
			if !ok {
				return shapeErr("ai-sdk", l.tokens("content", j), "a content part must be an object, not %s", aType(p))
			}
			typ, _ := pm["type"].(string)
			if !aiSDKStepParts[typ] {
				return notFit("ai-sdk", l.tokens("content", j, "type"), pm["type"], "not an AI SDK step content part type (text, reasoning, tool-call, tool-result, tool-error, ...)")
			}
			switch typ {
			case "text":
				text.WriteString(getStr(pm, "text"))
			case "tool-call":
				if err := aiSDKToolCallPart(b, pm, l.tokens("content", j)); err != nil {
					return err
				}
				if exec, _ := pm["providerExecuted"].(bool); !exec {
					made = true
				}
			case "tool-result":
				b.result(getStr(pm, "toolCallId"), "", pm["output"], "")
			case "tool-error":
				e := errorText(pm["error"])
				if e == "" || e == "{}" {
					e = "true"
				}
				b.result(getStr(pm, "toolCallId"), "", nil, e)
			case "tool-output-denied":
				b.result(getStr(pm, "toolCallId"), "", nil, "execution denied")
			}
		}
		b.turn(text.String(), made)
		return nil
	}
	calls := getArr(m, "toolCalls")
	for j, tc := range calls {
		pm, ok := tc.(map[string]any)
		if !ok {
			return shapeErr("ai-sdk", l.tokens("toolCalls", j), "a tool call must be an object, not %s", aType(tc))
		}
		if err := aiSDKToolCallPart(b, pm, l.tokens("toolCalls", j)); err != nil {
			return err
		}
	}
	for j, tr := range getArr(m, "toolResults") {
		pm, ok := tr.(map[string]any)
		if !ok {
			return shapeErr("ai-sdk", l.tokens("toolResults", j), "a tool result must be an object, not %s", aType(tr))
		}
		res, _ := first(pm, "output", "result")
		b.result(getStr(pm, "toolCallId"), "", res, "")
	}
	text, _ := m["text"].(string)
	b.turn(text, len(calls) > 0)
	return nil
}
