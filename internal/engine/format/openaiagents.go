package format

import (
	"slices"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
)

// openAIAgentsAdapter reads the OpenAI Agents SDK (JavaScript
// @openai/agents and Python openai-agents, which share the item protocol):
//   - run items: result.history / result.newItems / result.to_input_list()
//     (protocol items "function_call" with callId or call_id and the
//     arguments text, "function_call_result" / "function_call_output" with
//     output as text or {type: "text", text}, "message"), also wrapped as
//     RunItems ({type: "tool_call_item" | "tool_call_output_item" |
//     "message_output_item" ..., rawItem});
//   - the events of a streamed run (run_item_stream_event with its item;
//     raw_model_stream_event, whose Responses events are read only when the
//     stream holds no run item event);
//   - the trace export payload ({"data": [{"object": "trace.span",
//     span_data: {type: "function", name, input, output}, error}]}, also as
//     JSON Lines or a bare list of spans): function spans are calls in
//     order of started_at, an error on the span makes an error; a
//     generation span's last output message gives the final answer.
//
// A tool that throws is not flagged in the items: its output is the SDK's
// default error text ("An error occurred while running the tool. Please
// try again." and, in Python, " Error: ..."), which this adapter reads as
// an error.
type openAIAgentsAdapter struct{}

func (openAIAgentsAdapter) Name() string { return "openai-agents" }

// agentsErrorPrefixes start the outputs of the SDKs' default tool error
// functions (JS agents-core tool.ts, Python agents/tool.py).
var agentsErrorPrefixes = []string{
	"An error occurred while running the tool.",
	"An error occurred while parsing tool arguments.",
}

// agentsRunItemTypes are the RunItem wrapper types (JSON: {type, rawItem}).
var agentsRunItemTypes = map[string]bool{
	"message_output_item": true, "tool_call_item": true, "tool_call_output_item": true, "reasoning_item": true,
	"handoff_call_item": true, "handoff_output_item": true, "tool_approval_item": true,
	"mcp_list_tools_item": true, "mcp_approval_request_item": true, "mcp_approval_response_item": true,
	"compaction_item": true, "tool_search_call_item": true, "tool_search_output_item": true,
}

// agentsItemTypes are the protocol item types of the Agents SDK (its
// AgentInputItem union and the Responses items Python keeps).
var agentsItemTypes = map[string]bool{
	"message": true, "function_call": true, "function_call_result": true, "function_call_output": true,
	"hosted_tool_call": true, "computer_call": true, "computer_call_result": true, "computer_call_output": true,
	"shell_call": true, "shell_call_output": true, "apply_patch_call": true, "apply_patch_call_output": true,
	"local_shell_call": true, "local_shell_call_output": true, "custom_tool_call": true, "custom_tool_call_output": true,
	"reasoning": true, "compaction": true, "unknown": true, "tool_search_call": true, "tool_search_output": true,
	"web_search_call": true, "file_search_call": true, "code_interpreter_call": true, "image_generation_call": true,
	"mcp_call": true, "mcp_list_tools": true, "mcp_approval_request": true, "mcp_approval_response": true,
}

// agentsContentTypes are the content part types of message items.
var agentsContentTypes = map[string]bool{
	"input_text": true, "output_text": true, "text": true, "refusal": true, "input_image": true,
	"input_file": true, "input_audio": true, "audio": true, "image": true, "file": true,
}

var agentsStreamEvents = map[string]bool{"raw_model_stream_event": true, "run_item_stream_event": true, "agent_updated_stream_event": true}

// agentsKind says which of the SDK's shapes a document is: "export",
// "stream", "items" (JS protocol items or RunItems) or "python" (Responses
// items carrying the default tool error text), or "".
func agentsKind(in *Input) string {
	recs := in.Records()
	if len(recs) == 0 {
		return ""
	}
	export, stream, items, agents, errOut := true, true, true, false, false
	for _, r := range recs {
		m, ok := r.(map[string]any)
		if !ok {
			return ""
		}
		if !isAgentsExport(m) {
			export = false
		}
		if !agentsStreamEvents[getStr(m, "type")] {
			stream = false
		}
		t := getStr(m, "type")
		switch {
		case agentsRunItemTypes[t]:
			agents = true
		case t == "function_call_result":
			agents = true
		case t == "function_call":
			if _, ok := m["callId"]; ok {
				agents = true
			}
		case t == "function_call_output":
			if s, ok := m["output"].(string); ok && isAgentsErrorText(s) {
				errOut = true
			}
		case agentsItemTypes[t]:
		case t == "" && m["role"] != nil:
		default:
			items = false
		}
	}
	switch {
	case export:
		return "export"
	case stream:
		return "stream"
	case agents:
		// Items of another SDK among the Agents SDK's: Parse locates them.
		return "items"
	case items && errOut:
		return "python"
	}
	return ""
}

// isAgentsExport reports whether m is a trace export body, a trace or a
// span of one.
func isAgentsExport(m map[string]any) bool {
	if data, ok := m["data"].([]any); ok && len(data) > 0 {
		for _, d := range data {
			dm, ok := d.(map[string]any)
			if !ok {
				return false
			}
			if o := getStr(dm, "object"); o != "trace" && o != "trace.span" {
				return false
			}
		}
		return true
	}
	o := getStr(m, "object")
	return o == "trace.span" || (o == "trace" && m["workflow_name"] != nil)
}

func isAgentsErrorText(s string) bool {
	for _, p := range agentsErrorPrefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func (openAIAgentsAdapter) Detect(in *Input) (string, bool) {
	n := len(in.Records())
	switch agentsKind(in) {
	case "export":
		return "an OpenAI Agents SDK trace export (" + plural(agentsFunctionSpans(in), "function span") + ")", true
	case "stream":
		return streamReason(in, n, "OpenAI Agents SDK stream event"), true
	case "items":
		return streamReason(in, n, "OpenAI Agents SDK run item"), true
	case "python":
		return streamReason(in, n, "OpenAI Agents SDK input item") + " (a tool output has the SDK's default error text)", true
	}
	return "", false
}

func agentsFunctionSpans(in *Input) int {
	n := 0
	for _, s := range agentsSpans(in) {
		if getStr(getObj(s.m, "span_data"), "type") == "function" {
			n++
		}
	}
	return n
}

func (openAIAgentsAdapter) Parse(in *Input) (engine.Trace, error) {
	recs := in.Records()
	if len(recs) > 0 {
		if m, ok := recs[0].(map[string]any); ok {
			if isAgentsExport(m) {
				return agentsExport(in)
			}
			if agentsStreamEvents[getStr(m, "type")] {
				return agentsStream(in)
			}
		}
	}
	b := newBuilder()
	for i, r := range recs {
		if err := agentsItem(b, r, root().elem(i)); err != nil {
			return engine.Trace{}, err
		}
	}
	return b.trace(), nil
}

// agentsItem reads one protocol item or RunItem.
func agentsItem(b *builder, v any, l loc) error {
	m, ok := v.(map[string]any)
	if !ok {
		return shapeErr("openai-agents", l.tokens(), "an item must be an object, not %s", aType(v))
	}
	t := getStr(m, "type")
	if agentsRunItemTypes[t] {
		raw, ok := m["rawItem"]
		if !ok {
			raw, ok = m["raw_item"]
		}
		if !ok {
			return notFit("openai-agents", l.tokens(), m, `a RunItem needs "rawItem"`)
		}
		return agentsItem(b, raw, root(append(l.tokens(), "rawItem")...))
	}
	if t == "" {
		if _, ok := m["role"]; !ok {
			return notFit("openai-agents", l.tokens(), m, `not an OpenAI Agents SDK item: it has no "type" or "role"`)
		}
		t = "message"
	}
	if !agentsItemTypes[t] {
		return notFit("openai-agents", l.tokens("type"), m["type"], "not an OpenAI Agents SDK item type")
	}
	switch t {
	case "message":
		for _, k := range [...]string{"tool_calls", "function_call", "tool_call_id"} {
			if _, ok := m[k]; ok {
				return shapeErr("openai-agents", l.tokens(k), "an OpenAI Agents SDK message item has no %q (it is a Chat Completions message)", k)
			}
		}
		if parts, ok := m["content"].([]any); ok {
			for j, p := range parts {
				pm, _ := p.(map[string]any)
				if !agentsContentTypes[getStr(pm, "type")] {
					return notFit("openai-agents", l.tokens("content", j), p, "not an OpenAI Agents SDK content part (input_text, output_text, refusal, input_image, input_file, audio, ...)")
				}
			}
		}
		if getStr(m, "role") == "assistant" {
			b.turn(partsText(m["content"], "output_text", "text", "input_text"), false)
		}
	case "function_call", "custom_tool_call":
		id, _ := first(m, "callId", "call_id")
		c := engine.ToolCall{Tool: getStr(m, "name"), ID: idString(id)}
		if t == "custom_tool_call" {
			setRaw(&c, getStr(m, "input"))
		} else {
			b.setArgs(&c, m["arguments"])
		}
		b.add(c)
		b.turn("", true)
	case "hosted_tool_call":
		c := engine.ToolCall{Tool: getStr(m, "name"), ID: getStr(m, "id")}
		b.setArgs(&c, m["arguments"])
		k := b.add(c)
		if out, ok := m["output"]; ok {
			b.done[k] = true
			b.calls[k].Result = out
		}
	case "function_call_result", "function_call_output", "custom_tool_call_output":
		id, _ := first(m, "callId", "call_id")
		res := agentsOutput(m["output"])
		errText := ""
		if s, ok := res.(string); ok && isAgentsErrorText(s) {
			errText = s
		}
		b.result(idString(id), "", res, errText)
	}
	return nil
}

// agentsOutput unwraps a tool output: {type: "text", text} (and the
// protocol's input_text) is its text; a string or anything else is kept.
func agentsOutput(v any) any {
	if m, ok := v.(map[string]any); ok {
		if t := getStr(m, "type"); t == "text" || t == "input_text" {
			if s, ok := m["text"].(string); ok {
				return s
			}
		}
	}
	return v
}

// agentsStream reads the events of a streamed run.
func agentsStream(in *Input) (engine.Trace, error) {
	b := newBuilder()
	var raw []any
	items := 0
	for i, r := range in.Records() {
		m, ok := r.(map[string]any)
		if !ok {
			return engine.Trace{}, shapeErr("openai-agents", []any{i}, "an event must be an object, not %s", aType(r))
		}
		switch t := getStr(m, "type"); t {
		case "run_item_stream_event":
			items++
			if err := agentsItem(b, m["item"], root(i, "item")); err != nil {
				return engine.Trace{}, err
			}
		case "raw_model_stream_event":
			if ev, ok := getObj(m, "data")["event"].(map[string]any); ok && strings.HasPrefix(getStr(ev, "type"), "response.") {
				raw = append(raw, ev)
			}
		case "agent_updated_stream_event":
		default:
			return engine.Trace{}, notFit("openai-agents", []any{i, "type"}, m["type"], "not an OpenAI Agents SDK stream event type (raw_model_stream_event, run_item_stream_event, agent_updated_stream_event)")
		}
	}
	if items == 0 && len(raw) > 0 {
		// Only the model's own events were kept: read them as a Responses
		// stream.
		return responsesStreamAdapter{}.Parse(&Input{Value: raw, Form: FormJSONLines})
	}
	return b.trace(), nil
}

// agentsSpan is a span of a trace export and its place in the document.
type agentsSpan struct {
	m   map[string]any
	at  []any
	pos int
}

// agentsSpans lists the spans of a trace export document: the "data" of
// each body, or the records themselves.
func agentsSpans(in *Input) []agentsSpan {
	var out []agentsSpan
	for i, r := range in.Records() {
		m, _ := r.(map[string]any)
		if data, ok := m["data"].([]any); ok {
			for j, d := range data {
				if dm, ok := d.(map[string]any); ok && getStr(dm, "object") == "trace.span" {
					out = append(out, agentsSpan{dm, []any{i, "data", j}, len(out)})
				}
			}
		} else if getStr(m, "object") == "trace.span" {
			out = append(out, agentsSpan{m, []any{i}, len(out)})
		}
	}
	return out
}

// agentsExport reads a trace export payload.
func agentsExport(in *Input) (engine.Trace, error) {
	for i, r := range in.Records() {
		m, ok := r.(map[string]any)
		if !ok || !isAgentsExport(m) {
			return engine.Trace{}, notFit("openai-agents", []any{i}, r, `not an OpenAI Agents SDK trace export: expected {"data": [...]} of traces and spans, or a span`)
		}
	}
	spans := agentsSpans(in)
	slices.SortStableFunc(spans, func(a, c agentsSpan) int {
		return strings.Compare(getStr(a.m, "started_at"), getStr(c.m, "started_at"))
	})
	b := newBuilder()
	var final *string
	for _, s := range spans {
		data, ok := s.m["span_data"].(map[string]any)
		if !ok {
			return engine.Trace{}, notFit("openai-agents", append(s.at, "span_data"), s.m["span_data"], "a span needs a span_data object")
		}
		switch getStr(data, "type") {
		case "function":
			c := engine.ToolCall{Tool: getStr(data, "name")}
			b.setArgs(&c, data["input"])
			c.Result = data["output"]
			if e, ok := s.m["error"].(map[string]any); ok {
				c.Error = engine.CallError(agentsSpanError(e))
			}
			k := b.add(c)
			b.done[k] = true
			final = nil
		case "generation":
			if out, ok := data["output"].([]any); ok && len(out) > 0 {
				if last, ok := out[len(out)-1].(map[string]any); ok && getStr(last, "role") == "assistant" {
					final = nil
					if _, calls := last["tool_calls"]; !calls {
						final = visible(partsText(last["content"], "text", "output_text"))
					}
				}
			}
		}
	}
	t := b.trace()
	t.FinalAnswer = final
	return t, nil
}

// agentsSpanError is a span error's text: its data's error when the SDK
// kept it, else its message.
func agentsSpanError(e map[string]any) string {
	if s := getStr(getObj(e, "data"), "error"); s != "" && !strings.Contains(s, "redacted") {
		return s
	}
	if s := getStr(e, "message"); s != "" {
		return s
	}
	return "true"
}
