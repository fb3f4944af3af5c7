package format

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/internal/jsonvalue"
)

// genSpan is a span of any OpenTelemetry writing (OTLP/JSON, or the
// Python SDK's ReadableSpan.to_json), reduced to what the conventions
// read: its name, times in Unix nanoseconds, attributes as plain JSON
// values, whether it failed and why, and its document order.
type genSpan struct {
	name       string
	start, end uint64
	seq        int
	attrs      map[string]any
	failed     bool
	errMsg     string // status message / description, else the exception message
	excMsg     string
	hasExc     bool
}

// otlpSpan reduces an OTLP/JSON span.
func otlpSpan(m map[string]any, seq int) genSpan {
	s := genSpan{name: getStr(m, "name"), start: nanos(m["startTimeUnixNano"]), end: nanos(m["endTimeUnixNano"]), seq: seq}
	attrs := getArr(m, "attributes")
	s.attrs = make(map[string]any, len(attrs))
	for _, a := range attrs {
		if am, ok := a.(map[string]any); ok {
			if k := getStr(am, "key"); k != "" {
				if _, dup := s.attrs[k]; !dup {
					s.attrs[k] = otelValue(am["value"])
				}
			}
		}
	}
	status, _ := m["status"].(map[string]any)
	code := idString(status["code"])
	if code == "" {
		code = getStr(status, "code")
	}
	s.failed = code == "2" || code == "STATUS_CODE_ERROR"
	s.errMsg = getStr(status, "message")
	for _, e := range getArr(m, "events") {
		em, _ := e.(map[string]any)
		if getStr(em, "name") != "exception" {
			continue
		}
		s.hasExc = true
		for _, a := range getArr(em, "attributes") {
			am, _ := a.(map[string]any)
			if getStr(am, "key") == "exception.message" {
				s.excMsg, _ = otelValue(am["value"]).(string)
			}
		}
	}
	return s
}

// isPySpan reports whether m is a span as the OpenTelemetry Python SDK's
// ReadableSpan.to_json writes it: a "context" object with a "span_id", a
// "name", and "attributes" an object (or null).
func isPySpan(m map[string]any) bool {
	ctx, ok := m["context"].(map[string]any)
	if !ok {
		return false
	}
	if _, ok := ctx["span_id"].(string); !ok {
		return false
	}
	if _, ok := m["name"].(string); !ok {
		return false
	}
	switch m["attributes"].(type) {
	case map[string]any, nil:
		return true
	}
	return false
}

// pySpan reduces a Python SDK span: ISO 8601 times, status.status_code
// "ERROR" with its description, events with exception.message.
func pySpan(m map[string]any, seq int) genSpan {
	s := genSpan{name: getStr(m, "name"), start: isoNanos(getStr(m, "start_time")), end: isoNanos(getStr(m, "end_time")), seq: seq}
	s.attrs, _ = m["attributes"].(map[string]any)
	if s.attrs == nil {
		s.attrs = map[string]any{}
	}
	status, _ := m["status"].(map[string]any)
	s.failed = getStr(status, "status_code") == "ERROR"
	s.errMsg = getStr(status, "description")
	for _, e := range getArr(m, "events") {
		em, _ := e.(map[string]any)
		if getStr(em, "name") != "exception" {
			continue
		}
		s.hasExc = true
		s.excMsg, _ = getObj(em, "attributes")["exception.message"].(string)
	}
	return s
}

// isoNanos parses an ISO 8601 time as the Python SDK writes it
// ("2026-12-01T10:28:36.918438Z") into Unix nanoseconds; 0 when invalid.
func isoNanos(s string) uint64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.UnixNano() < 0 {
		return 0
	}
	return uint64(t.UnixNano())
}

// spanErr is the error text of a span that failed (status ERROR, an
// exception event, or an error.type attribute): the status message, else
// the exception message, else error.type, else "true"; "" when it did not.
func spanErr(s *genSpan) engine.CallError {
	errType, _ := s.attrs["error.type"].(string)
	if !s.failed && !s.hasExc && errType == "" {
		return ""
	}
	for _, t := range []string{s.errMsg, s.excMsg, errType} {
		if t != "" {
			return engine.CallError(t)
		}
	}
	return "true"
}

// otelRequest is a tool call a model asked for in an inference span.
type otelRequest struct {
	id, name string
	args     any // argument text (string) or an object
	turn     int // index into the turns
	exec     *otelExec
	oi       bool // from an OpenInference LLM span
}

// otelTurn is one inference span: its calls and text.
type otelTurn struct {
	start, end uint64
	seq        int
	text       string
	calls      int
}

// otelExec is an executed tool: a tool span of one of the conventions.
type otelExec struct {
	span   *genSpan
	oi     bool // an OpenInference TOOL span
	id     string
	name   string
	args   any
	result any
	err    engine.CallError
	joined bool
}

// otelConventions records which conventions a trace's spans follow, for
// the detection reason.
type otelConventions struct {
	aiSDK, openInference, openLLMetry, genAI bool
}

// String names the conventions seen, as in "Vercel AI SDK spans".
func (c otelConventions) String() string {
	var names []string
	if c.aiSDK {
		names = append(names, "Vercel AI SDK")
	}
	if c.openInference {
		names = append(names, "OpenInference")
	}
	if c.openLLMetry {
		names = append(names, "OpenLLMetry")
	}
	if c.genAI {
		names = append(names, "OpenTelemetry GenAI")
	}
	if len(names) == 0 {
		return ""
	}
	return strings.Join(names, " + ") + " spans"
}

// spanConventions reports the conventions of one span's attributes.
func spanConventions(attrs map[string]any, c *otelConventions) {
	if _, ok := attrs["ai.operationId"]; ok {
		c.aiSDK = true
	}
	if _, ok := attrs["openinference.span.kind"]; ok {
		c.openInference = true
	}
	if _, ok := attrs["traceloop.span.kind"]; ok {
		c.openLLMetry = true
	}
	if _, ok := attrs["gen_ai.operation.name"]; ok {
		c.genAI = true
	} else if _, ok := attrs["gen_ai.tool.name"]; ok {
		c.genAI = true
	}
}

// otelTrace reads the calls and the final answer of spans (any order):
// docs/formats.md, section otel.
func otelTrace(spans []genSpan) engine.Trace {
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	b := newBuilder()
	var turns []otelTurn
	var reqs []otelRequest
	var execs []*otelExec
	toolMsgs := map[string]any{} // tool_call_id -> the content sent back (OpenInference input messages)
	var rootAnswer *string
	rootRank := 0
	setRoot := func(rank int, v any) {
		if rank < rootRank {
			return
		}
		if s, ok := v.(string); ok {
			rootAnswer, rootRank = visible(s), rank
		}
	}
	addTurn := func(s *genSpan, text string, calls []otelRequest) {
		t := len(turns)
		turns = append(turns, otelTurn{start: s.start, end: s.end, seq: s.seq, text: text, calls: len(calls)})
		for _, c := range calls {
			c.turn = t
			reqs = append(reqs, c)
		}
	}
	for i := range spans {
		s := &spans[i]
		a := s.attrs
		opID, _ := a["ai.operationId"].(string)
		oiKind, _ := a["openinference.span.kind"].(string)
		tlKind, _ := a["traceloop.span.kind"].(string)
		op, _ := a["gen_ai.operation.name"].(string)
		switch {
		case opID == "ai.toolCall":
			id, _ := a["ai.toolCall.id"].(string)
			name, _ := a["ai.toolCall.name"].(string)
			execs = append(execs, &otelExec{span: s, id: id, name: name, args: a["ai.toolCall.args"], result: a["ai.toolCall.result"], err: spanErr(s)})
		case strings.HasSuffix(opID, ".doGenerate") || strings.HasSuffix(opID, ".doStream"):
			text, _ := a["ai.response.text"].(string)
			addTurn(s, text, aiSDKToolCalls(a["ai.response.toolCalls"]))
		case opID == "ai.generateText" || opID == "ai.streamText":
			if _, ok := a["ai.response.toolCalls"]; !ok {
				setRoot(2, a["ai.response.text"])
			}
		case strings.EqualFold(oiKind, "TOOL"):
			name, _ := a["tool.name"].(string)
			if name == "" {
				name = s.name
			}
			id, _ := a["tool.id"].(string)
			if id == "" {
				id, _ = a["tool_call.id"].(string)
			}
			args, ok := a["input.value"]
			if !ok {
				args = a["tool.parameters"]
			}
			execs = append(execs, &otelExec{span: s, oi: true, id: id, name: name, args: args, result: a["output.value"], err: spanErr(s)})
		case strings.EqualFold(oiKind, "LLM"):
			text, calls := oiOutput(a)
			for i := range calls {
				calls[i].oi = true
			}
			addTurn(s, text, calls)
			oiToolMessages(a, toolMsgs)
		case strings.EqualFold(oiKind, "AGENT") || strings.EqualFold(oiKind, "CHAIN"):
			setRoot(1, a["output.value"])
		case tlKind == "tool":
			name, _ := a["traceloop.entity.name"].(string)
			if name == "" {
				name = strings.TrimSuffix(s.name, ".tool")
			}
			execs = append(execs, &otelExec{span: s, name: name, args: traceloopArgs(a["traceloop.entity.input"]), result: a["traceloop.entity.output"], err: spanErr(s)})
		case tlKind == "agent" || tlKind == "workflow":
			if v, ok := a["traceloop.entity.output"].(string); ok {
				if dv, ok := decodeText(v); ok {
					setRoot(1, dv)
				}
			}
		case op == "execute_tool" || (op == "" && a["gen_ai.tool.name"] != nil):
			name, _ := a["gen_ai.tool.name"].(string)
			if name == "" {
				name = strings.TrimPrefix(s.name, "execute_tool ")
			}
			id, _ := a["gen_ai.tool.call.id"].(string)
			execs = append(execs, &otelExec{span: s, id: id, name: name, args: a["gen_ai.tool.call.arguments"], result: a["gen_ai.tool.call.result"], err: spanErr(s)})
		case op == "chat" || op == "text_completion" || op == "generate_content" || a["llm.request.type"] != nil:
			text, calls := genAIOutput(a)
			addTurn(s, text, calls)
		case op == "invoke_agent":
			if text, calls := genAIOutput(a); len(calls) == 0 {
				setRoot(1, text)
			}
		}
	}

	joinExecs(turns, reqs, execs)
	// OpenInference: when a trace has TOOL spans, they are the calls (an
	// LLM span's request only lends its id to the TOOL span it joins).
	oiTools := false
	for _, e := range execs {
		oiTools = oiTools || e.oi
	}
	if oiTools {
		kept := reqs[:0]
		for _, r := range reqs {
			if !r.oi || r.exec != nil {
				kept = append(kept, r)
			}
		}
		reqs = kept
	}

	// The calls: the requests in turn order, each with its execution; an
	// execution no request was waiting for takes its place by start time.
	type slot struct {
		start uint64
		seq   int
		req   *otelRequest
		exec  *otelExec
	}
	slots := make([]slot, 0, len(reqs)+len(execs))
	for i := range reqs {
		t := turns[reqs[i].turn]
		slots = append(slots, slot{start: t.start, seq: t.seq, req: &reqs[i]})
	}
	for _, e := range execs {
		if !e.joined {
			slots = append(slots, slot{start: e.span.start, seq: e.span.seq, exec: e})
		}
	}
	sort.SliceStable(slots, func(i, j int) bool {
		if slots[i].start != slots[j].start {
			return slots[i].start < slots[j].start
		}
		return slots[i].seq < slots[j].seq
	})
	for _, sl := range slots {
		var c engine.ToolCall
		e := sl.exec
		if r := sl.req; r != nil {
			c.Tool, c.ID, e = r.name, r.id, r.exec
			args := r.args
			if _, text := args.(string); !text && e != nil {
				if _, etext := e.args.(string); etext || args == nil {
					args = e.args
				}
			}
			b.setArgs(&c, args)
			if e == nil {
				c.Result = toolMsgs[r.id]
			}
		} else {
			c.Tool, c.ID = e.name, e.id
			b.setArgs(&c, e.args)
		}
		if e != nil {
			if c.ID == "" {
				c.ID = e.id
			}
			if c.Result == nil {
				c.Result = e.result
			}
			c.Error = e.err
			if c.Error != "" {
				c.Result = nil
			}
		}
		b.add(c)
	}

	// The final answer: the latest inference turn's text when it asked for
	// no tool calls; with no inference span, the run's own output.
	if len(turns) > 0 {
		last := turns[0]
		for _, t := range turns[1:] {
			if t.start > last.start || (t.start == last.start && t.seq > last.seq) {
				last = t
			}
		}
		b.turn(last.text, last.calls > 0)
	} else {
		b.final = rootAnswer
	}
	return b.trace()
}

// joinExecs joins each executed tool to the request it ran: by call id
// when the execution has one, else to the first waiting request of the
// same name in the latest turn that started before the execution (the
// model turn that asked for it).
func joinExecs(turns []otelTurn, reqs []otelRequest, execs []*otelExec) {
	byID := map[string][]int{}
	for i, r := range reqs {
		if r.id != "" {
			byID[r.id] = append(byID[r.id], i)
		}
	}
	for _, e := range execs {
		if e.id != "" {
			for _, i := range byID[e.id] {
				if reqs[i].exec == nil {
					reqs[i].exec, e.joined = e, true
					break
				}
			}
			continue
		}
		// The asking turn: the latest that started before the tool and has
		// a waiting request of its name; a turn starting in the same
		// instant only when none did (some SDKs write start times in whole
		// milliseconds, and end times are set when a promise settles, so
		// they do not order a span and its tool).
		pick := func(strict bool) int {
			best := -1
			for i := range reqs {
				r := &reqs[i]
				if r.exec != nil || r.name != e.name {
					continue
				}
				ts := turns[r.turn].start
				if ts > e.span.start || (strict && ts == e.span.start) {
					continue
				}
				if best < 0 || ts > turns[reqs[best].turn].start {
					best = i
				}
			}
			return best
		}
		i := pick(true)
		if i < 0 {
			i = pick(false)
		}
		if i >= 0 {
			reqs[i].exec, e.joined = e, true
		}
	}
}

func decodeText(s string) (any, bool) {
	var d jsonvalue.Decoder
	d.Reset(s, 0)
	v, err := d.Document()
	return v, err == nil
}

// aiSDKToolCalls reads the Vercel AI SDK's ai.response.toolCalls: JSON text
// of [{toolCallId, toolName, input}], input the model's argument text
// (generateText in ai 5 and 6) or the parsed object.
func aiSDKToolCalls(v any) []otelRequest {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	dv, ok := decodeText(s)
	if !ok {
		return nil
	}
	list, _ := dv.([]any)
	var out []otelRequest
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		args, ok := m["input"]
		if !ok {
			args = m["args"] // ai 4
		}
		out = append(out, otelRequest{id: getStr(m, "toolCallId"), name: getStr(m, "toolName"), args: args})
	}
	return out
}

// genAIOutput reads an inference span's output: the text and tool_call
// parts {id, name, arguments} of gen_ai.output.messages (JSON text or an
// array), else the indexed attributes of the GenAI conventions before
// 0.5.0 (gen_ai.completion.N.content, gen_ai.completion.N.tool_calls.M.{id,
// name, arguments}), which OpenLLMetry wrote.
func genAIOutput(a map[string]any) (string, []otelRequest) {
	v := a["gen_ai.output.messages"]
	if s, ok := v.(string); ok {
		v, _ = decodeText(s)
	}
	var text strings.Builder
	var calls []otelRequest
	if msgs, ok := v.([]any); ok {
		for _, msg := range msgs {
			mm, _ := msg.(map[string]any)
			for _, p := range getArr(mm, "parts") {
				pm, _ := p.(map[string]any)
				switch getStr(pm, "type") {
				case "tool_call":
					calls = append(calls, otelRequest{id: idString(pm["id"]), name: getStr(pm, "name"), args: pm["arguments"]})
				case "text":
					text.WriteString(getStr(pm, "content"))
				}
			}
		}
		return text.String(), calls
	}
	for n := 0; ; n++ {
		p := "gen_ai.completion." + strconv.Itoa(n)
		content, hasContent := a[p+".content"].(string)
		_, hasRole := a[p+".role"]
		if !hasContent && !hasRole {
			if _, ok := a[p+".tool_calls.0.name"]; !ok {
				break
			}
		}
		text.WriteString(content)
		for m := 0; ; m++ {
			q := p + ".tool_calls." + strconv.Itoa(m)
			name, ok := a[q+".name"].(string)
			if !ok {
				break
			}
			calls = append(calls, otelRequest{id: idString(a[q+".id"]), name: name, args: a[q+".arguments"]})
		}
	}
	return text.String(), calls
}

// oiOutput reads an OpenInference LLM span's output messages: the last
// message's content, and every llm.output_messages.N.message.tool_calls.M
// .tool_call.{id, function.name, function.arguments}.
func oiOutput(a map[string]any) (string, []otelRequest) {
	var text string
	var calls []otelRequest
	for n := 0; ; n++ {
		p := "llm.output_messages." + strconv.Itoa(n) + ".message."
		content, hasContent := a[p+"content"].(string)
		_, hasRole := a[p+"role"]
		if !hasContent && !hasRole {
			break
		}
		text = content
		for m := 0; ; m++ {
			q := p + "tool_calls." + strconv.Itoa(m) + ".tool_call."
			name, ok := a[q+"function.name"].(string)
			if !ok {
				break
			}
			calls = append(calls, otelRequest{id: idString(a[q+"id"]), name: name, args: a[q+"function.arguments"]})
		}
	}
	return text, calls
}

// oiToolMessages records the tool messages of an OpenInference LLM span's
// input (llm.input_messages.N.message with role tool): their content by
// tool_call_id, the result of a call no TOOL span ran.
func oiToolMessages(a map[string]any, into map[string]any) {
	for n := 0; ; n++ {
		p := "llm.input_messages." + strconv.Itoa(n) + ".message."
		role, ok := a[p+"role"].(string)
		if !ok {
			return
		}
		if role != "tool" {
			continue
		}
		if id, _ := a[p+"tool_call_id"].(string); id != "" {
			if _, seen := into[id]; !seen {
				into[id] = a[p+"content"]
			}
		}
	}
}

// traceloopArgs reads traceloop.entity.input, {"args": [...], "kwargs":
// {...}} as JSON text: the kwargs when there are no positional arguments,
// the one positional argument when it is an object and there are no
// kwargs; otherwise the text is kept whole (it is no argument object).
func traceloopArgs(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	dv, ok := decodeText(s)
	if !ok {
		return s
	}
	m, ok := dv.(map[string]any)
	if !ok {
		return s
	}
	pos, _ := m["args"].([]any)
	kw, _ := m["kwargs"].(map[string]any)
	switch {
	case len(pos) == 0 && kw != nil:
		return kw
	case len(pos) == 1 && len(kw) == 0:
		if obj, ok := pos[0].(map[string]any); ok {
			return obj
		}
	case len(pos) == 0 && m["kwargs"] == nil:
		return map[string]any{}
	}
	return s
}
