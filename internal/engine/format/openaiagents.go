package format

import (
	"errors"
	"slices"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
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
//     generation span's last output message gives the final answer;
//   - a JS run state as RunState.toString() writes it (an interrupted run
//     saved to be resumed): its originalInput and generatedItems, read as
//     items. A tool_approval_item (a call waiting for approval) repeats
//     its tool_call_item and is skipped.
//
// A tool that throws is not flagged in the items: its output is the SDK's
// default error text ("An error occurred while running the tool. Please
// try again." and, in Python, " Error: ..."), which this adapter reads as
// an error; so is the JS SDK's output for a call the user rejected ("Tool
// execution was not approved.").
type openAIAgentsAdapter struct{}

func (openAIAgentsAdapter) Name() string { return "openai-agents" }

// agentsErrorPrefixes start the outputs of the SDKs' default tool error
// functions (JS agents-core tool.ts, Python agents/tool.py).
var agentsErrorPrefixes = []string{
	"An error occurred while running the tool.",
	"An error occurred while parsing tool arguments.",
	"Tool execution was not approved.", // JS: a call the user rejected (TOOL_APPROVAL_REJECTION_MESSAGE)
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
// "stream", "items" (JS protocol items or RunItems, possibly mixed with
// another SDK's, which Parse then locates) or "python" (Responses items
// carrying the default tool error text), or "".
func agentsKind(in *Input) string {
	if m, ok := in.Object(); ok && isAgentsRunState(m) {
		return "state"
	}
	recs := in.Records()
	if len(recs) == 0 {
		return ""
	}
	export, stream, items, agents, errOut := true, true, true, false, false
	for _, m := range recs {
		if !isObj(m) {
			return ""
		}
		if !isAgentsExport(m) {
			export = false
		}
		t := m.Get("type").Text()
		if !agentsStreamEvents[t] {
			stream = false
		}
		switch {
		case agentsRunItemTypes[t], t == "function_call_result":
			agents = true
		case t == "function_call":
			if m.Get("callId").Exists() {
				agents = true
			}
		case t == "function_call_output":
			if isAgentsErrorText(m.Get("output").Text()) {
				errOut = true
			}
		case agentsItemTypes[t]:
		case t == "" && m.Get("role").Exists():
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
		return "items"
	case items && errOut:
		return "python"
	}
	return ""
}

// isAgentsExport reports whether m is a trace export body, a trace or a
// span of one.
func isAgentsExport(m jsondoc.Value) bool {
	if data := m.Get("data"); isArr(data) && data.Len() > 0 {
		for _, d := range data.Elems() {
			if o := d.Get("object").Text(); o != "trace" && o != "trace.span" {
				return false
			}
		}
		return true
	}
	o := m.Get("object").Text()
	return o == "trace.span" || (o == "trace" && m.Get("workflow_name").Exists())
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
	case "state":
		m, _ := in.Object()
		return "an OpenAI Agents SDK run state (RunState.toString(), " + plural(m.Get("generatedItems").Len(), "generated item") + ")", true
	}
	return "", false
}

func agentsFunctionSpans(in *Input) int {
	n := 0
	for _, s := range agentsSpans(in) {
		if s.v.Get("span_data").Get("type").Text() == "function" {
			n++
		}
	}
	return n
}

func (openAIAgentsAdapter) Parse(in *Input) (engine.Trace, error) {
	if m, ok := in.Object(); ok && isAgentsRunState(m) {
		return agentsRunState(m)
	}
	recs := in.Records()
	if len(recs) > 0 {
		if isAgentsExport(recs[0]) {
			return agentsExport(in)
		}
		if agentsStreamEvents[recs[0].Get("type").Text()] {
			return agentsStream(in)
		}
	}
	b := in.newBuilder()
	for _, r := range recs {
		if err := agentsItem(b, r); err != nil {
			return engine.Trace{}, err
		}
	}
	return b.trace(), nil
}

// agentsItem reads one protocol item or RunItem.
func agentsItem(b *builder, m jsondoc.Value) error {
	if !isObj(m) {
		return shapeErr("openai-agents", m, "an item must be an object, not %s", aType(m))
	}
	tv := m.Get("type")
	t := tv.Text()
	if agentsRunItemTypes[t] {
		if t == "tool_approval_item" {
			// The approval request for a call its tool_call_item holds.
			return nil
		}
		raw, ok := first(m, "rawItem", "raw_item")
		if !ok {
			return notFit("openai-agents", m, `a RunItem needs "rawItem"`)
		}
		return agentsItem(b, raw)
	}
	if t == "" {
		if !m.Get("role").Exists() {
			return notFit("openai-agents", m, `not an OpenAI Agents SDK item: it has no "type" or "role"`)
		}
		t = "message"
	} else if !agentsItemTypes[t] {
		return notFit("openai-agents", tv, "not an OpenAI Agents SDK item type")
	}
	switch t {
	case "message":
		for _, k := range [...]string{"tool_calls", "function_call", "tool_call_id"} {
			if v := m.Get(k); v.Exists() {
				return shapeErr("openai-agents", v, "an OpenAI Agents SDK message item has no %q (it is a Chat Completions message)", k)
			}
		}
		for _, p := range m.Get("content").Elems() {
			if !agentsContentTypes[p.Get("type").Text()] {
				return notFit("openai-agents", p, "not an OpenAI Agents SDK content part (input_text, output_text, refusal, input_image, input_file, audio, ...)")
			}
		}
		if m.Get("role").Text() == "assistant" {
			b.turn(partsText(m.Get("content"), "output_text", "text", "input_text"), false)
		}
	case "function_call", "custom_tool_call":
		name, err := str("openai-agents", "name", m.Get("name"))
		if err != nil {
			return err
		}
		id, err := agentsCallID(m)
		if err != nil {
			return err
		}
		c := engine.ToolCall{Tool: name, ID: id}
		if t == "custom_tool_call" {
			input, err := str("openai-agents", "input", m.Get("input"))
			if err != nil {
				return err
			}
			setRaw(&c, input)
		} else {
			b.setArgs(&c, m.Get("arguments"))
		}
		b.add(c)
		b.turn("", true)
	case "hosted_tool_call":
		name, err := str("openai-agents", "name", m.Get("name"))
		if err != nil {
			return err
		}
		id, err := str("openai-agents", "id", m.Get("id"))
		if err != nil {
			return err
		}
		c := engine.ToolCall{Tool: name, ID: id}
		b.setArgs(&c, m.Get("arguments"))
		if out := m.Get("output"); out.Exists() {
			setResult(&c, out)
			k := b.add(c)
			b.done[k] = true
			break
		}
		b.add(c)
	case "function_call_result", "function_call_output", "custom_tool_call_output":
		id, err := agentsCallID(m)
		if err != nil {
			return err
		}
		res := agentsOutput(m.Get("output"))
		errText := ""
		if s, ok := res.Str(); ok && isAgentsErrorText(s) {
			errText = s
		}
		b.result(id, "", res, errText)
	}
	return nil
}

// agentsCallID reads an item's callId (call_id in the Python SDK's
// items); one of the wrong type is a *ShapeError.
func agentsCallID(m jsondoc.Value) (string, error) {
	v, key, _ := firstKey(m, "callId", "call_id")
	return idOf("openai-agents", key, v)
}

// agentsOutput unwraps a tool output: {type: "text", text} (and the
// protocol's input_text) is its text; a string or anything else is kept.
func agentsOutput(v jsondoc.Value) jsondoc.Value {
	if t := v.Get("type").Text(); t == "text" || t == "input_text" {
		if s := v.Get("text"); s.Kind() == jsondoc.String {
			return s
		}
	}
	return v
}

// agentsStream reads the events of a streamed run.
func agentsStream(in *Input) (engine.Trace, error) {
	b := in.newBuilder()
	var raw []jsondoc.Value
	items := 0
	for _, m := range in.Records() {
		if !isObj(m) {
			return engine.Trace{}, shapeErr("openai-agents", m, "an event must be an object, not %s", aType(m))
		}
		switch tv := m.Get("type"); tv.Text() {
		case "run_item_stream_event":
			items++
			if err := agentsItem(b, m.Get("item")); err != nil {
				return engine.Trace{}, err
			}
		case "raw_model_stream_event":
			if ev := m.Get("data").Get("event"); strings.HasPrefix(ev.Get("type").Text(), "response.") {
				raw = append(raw, ev)
			}
		case "agent_updated_stream_event":
		default:
			return engine.Trace{}, notFit("openai-agents", tv, "not an OpenAI Agents SDK stream event type (raw_model_stream_event, run_item_stream_event, agent_updated_stream_event)")
		}
	}
	if items == 0 && len(raw) > 0 {
		// Only the model's own events were kept: read them as a Responses
		// stream.
		t, err := responsesStreamAdapter{}.Parse(&Input{Form: FormJSONLines, recs: raw, src: in.src})
		var se *ShapeError
		if errors.As(err, &se) {
			se.Format = "openai-agents" // the format read, not the one lent
		}
		return t, err
	}
	return b.trace(), nil
}

// agentsSpan is a span of a trace export.
type agentsSpan struct{ v jsondoc.Value }

// agentsSpans lists the spans of a trace export document: the "data" of
// each body, or the records themselves.
func agentsSpans(in *Input) []agentsSpan {
	var out []agentsSpan
	for _, m := range in.Records() {
		if data := m.Get("data"); isArr(data) {
			for _, d := range data.Elems() {
				if d.Get("object").Text() == "trace.span" {
					out = append(out, agentsSpan{d})
				}
			}
		} else if m.Get("object").Text() == "trace.span" {
			out = append(out, agentsSpan{m})
		}
	}
	return out
}

// agentsExport reads a trace export payload.
func agentsExport(in *Input) (engine.Trace, error) {
	for _, r := range in.Records() {
		if !isObj(r) || !isAgentsExport(r) {
			return engine.Trace{}, notFit("openai-agents", r, `not an OpenAI Agents SDK trace export: expected {"data": [...]} of traces and spans, or a span`)
		}
	}
	spans := agentsSpans(in)
	slices.SortStableFunc(spans, func(a, c agentsSpan) int {
		return strings.Compare(a.v.Get("started_at").Text(), c.v.Get("started_at").Text())
	})
	b := in.newBuilder()
	var final *string
	for _, s := range spans {
		data := s.v.Get("span_data")
		if !isObj(data) {
			if !data.Exists() {
				return engine.Trace{}, notFit("openai-agents", s.v, "a span needs a span_data object")
			}
			return engine.Trace{}, notFit("openai-agents", data, "a span needs a span_data object")
		}
		switch data.Get("type").Text() {
		case "function":
			name, err := str("openai-agents", "name", data.Get("name"))
			if err != nil {
				return engine.Trace{}, err
			}
			c := engine.ToolCall{Tool: name}
			b.setArgs(&c, data.Get("input"))
			setResult(&c, data.Get("output"))
			if e := s.v.Get("error"); isObj(e) {
				c.Error = engine.CallError(agentsSpanError(e))
			}
			k := b.add(c)
			b.done[k] = true
			final = nil
		case "handoff":
			// The model called the handoff's tool; the span keeps only the
			// agents, so the call is named as the SDK names a handoff tool
			// by default, with no arguments and no result.
			c := engine.ToolCall{Tool: agentsHandoffTool(data.Get("to_agent").Text(), strings.HasSuffix(s.v.Get("started_at").Text(), "Z"))}
			b.setArgs(&c, jsondoc.Value{})
			if e := s.v.Get("error"); isObj(e) {
				c.Error = engine.CallError(agentsSpanError(e))
			}
			k := b.add(c)
			b.done[k] = true
			final = nil
		case "generation":
			if out := data.Get("output"); isArr(out) && out.Len() > 0 {
				if last := out.Index(out.Len() - 1); last.Get("role").Text() == "assistant" {
					final = nil
					if !last.Get("tool_calls").Exists() {
						final = visible(partsText(last.Get("content"), "text", "output_text"))
					}
				}
			}
		}
	}
	t := b.trace()
	t.FinalAnswer = final
	return t, nil
}

// agentsHandoffTool is the default tool name of a handoff to agent: JS
// (agents-core getTransferMessage / toFunctionToolName) replaces every
// UTF-16 code unit other than ASCII letters and digits with "_"; Python
// (transform_string_function_style) replaces every character other than
// letters, digits and "_" and lowercases. js says the span came from the
// JS SDK (its times are toISOString's, ending in "Z").
func agentsHandoffTool(agent string, js bool) string {
	var sb strings.Builder
	sb.WriteString("transfer_to_")
	for _, r := range agent {
		switch {
		case r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			if !js && r <= 'Z' && r >= 'A' {
				r += 'a' - 'A'
			}
			sb.WriteRune(r)
		case r == '_' && !js:
			sb.WriteByte('_')
		case js && r > 0xFFFF:
			sb.WriteString("__")
		default:
			sb.WriteByte('_')
		}
	}
	return sb.String()
}

// agentsSpanError is a span error's text: its data's error when the SDK
// kept it, else its message.
func agentsSpanError(e jsondoc.Value) string {
	if s := e.Get("data").Get("error").Text(); s != "" && !strings.Contains(s, "redacted") {
		return s
	}
	if s := e.Get("message").Text(); s != "" {
		return s
	}
	return "true"
}

// isAgentsRunState reports whether m is a JS run state as
// RunState.toString() writes it (what an app saves to resume an
// interrupted run): "$schemaVersion", "currentAgent" and a
// "generatedItems" array.
func isAgentsRunState(m jsondoc.Value) bool {
	return m.Get("$schemaVersion").Kind() == jsondoc.String && m.Get("currentAgent").Exists() && isArr(m.Get("generatedItems"))
}

// agentsRunState reads a run state: its originalInput (a string, or
// protocol items) and its generatedItems (RunItems), in order.
func agentsRunState(m jsondoc.Value) (engine.Trace, error) {
	b := newBuilder()
	if in := m.Get("originalInput"); isArr(in) {
		for _, it := range in.Elems() {
			if err := agentsItem(b, it); err != nil {
				return engine.Trace{}, err
			}
		}
	}
	for _, it := range m.Get("generatedItems").Elems() {
		if err := agentsItem(b, it); err != nil {
			return engine.Trace{}, err
		}
	}
	return b.trace(), nil
}
