package format

import (
	"cmp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// genSpan is a span of any OpenTelemetry writing (OTLP/JSON, or the
// Python SDK's ReadableSpan.to_json), reduced to what the conventions
// read: its name, times in Unix nanoseconds, attributes as plain JSON
// values, whether it failed and why, and its document order.
type genSpan struct {
	name       string
	start, end uint64
	seq        int
	attrs      map[string]jsondoc.Value
	failed     bool
	errMsg     string // status message / description, else the exception message
	excMsg     string
	hasExc     bool
}

// otlpSpan reduces an OTLP/JSON span; p reads the attribute values it
// assembles.
func otlpSpan(p *jsondoc.Parser, m jsondoc.Value, seq int) genSpan {
	s := genSpan{name: m.Get("name").Text(), start: nanos(m.Get("startTimeUnixNano")), end: nanos(m.Get("endTimeUnixNano")), seq: seq}
	attrs := m.Get("attributes")
	s.attrs = make(map[string]jsondoc.Value, attrs.Len())
	for _, am := range attrs.Elems() {
		if k := am.Get("key").Text(); k != "" {
			if _, dup := s.attrs[k]; !dup {
				s.attrs[k] = otelValue(p, am.Get("value"))
			}
		}
	}
	status := m.Get("status")
	code := idString(status.Get("code"))
	s.failed = code == "2" || code == "STATUS_CODE_ERROR"
	s.errMsg = status.Get("message").Text()
	for _, em := range m.Get("events").Elems() {
		if em.Get("name").Text() != "exception" {
			continue
		}
		s.hasExc = true
		for _, am := range em.Get("attributes").Elems() {
			if am.Get("key").Text() == "exception.message" {
				s.excMsg = otelValue(p, am.Get("value")).Text()
			}
		}
	}
	return s
}

// isPySpan reports whether m is a span as the OpenTelemetry Python SDK's
// ReadableSpan.to_json writes it: a "context" object with a "span_id", a
// "name", and "attributes" an object (or null).
func isPySpan(m jsondoc.Value) bool {
	ctx := m.Get("context")
	if !isObj(ctx) || ctx.Get("span_id").Kind() != jsondoc.String || m.Get("name").Kind() != jsondoc.String {
		return false
	}
	a := m.Get("attributes")
	return isObj(a) || !set(a)
}

// pySpan reduces a Python SDK span: ISO 8601 times, status.status_code
// "ERROR" with its description, events with exception.message.
func pySpan(_ *jsondoc.Parser, m jsondoc.Value, seq int) genSpan {
	s := genSpan{name: m.Get("name").Text(), start: isoNanos(m.Get("start_time").Text()), end: isoNanos(m.Get("end_time").Text()), seq: seq}
	a := m.Get("attributes")
	s.attrs = make(map[string]jsondoc.Value, a.Len())
	for k, v := range a.Members() {
		s.attrs[k] = v
	}
	status := m.Get("status")
	s.failed = status.Get("status_code").Text() == "ERROR"
	s.errMsg = status.Get("description").Text()
	for _, em := range m.Get("events").Elems() {
		if em.Get("name").Text() != "exception" {
			continue
		}
		s.hasExc = true
		s.excMsg = em.Get("attributes").Get("exception.message").Text()
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
// the exception message, else error.type, else "true", without the stack
// trace LangChain's tracers append after a blank line; "" when it did
// not.
func spanErr(s *genSpan) engine.CallError {
	errType := s.attrs["error.type"].Text()
	if !s.failed && !s.hasExc && errType == "" {
		return ""
	}
	for _, t := range []string{s.errMsg, s.excMsg, errType} {
		if t != "" {
			return engine.CallError(langSmithError(t))
		}
	}
	return "true"
}

// otelRequest is a tool call a model asked for in an inference span.
type otelRequest struct {
	id, name string
	args     jsondoc.Value // argument text (a string) or an object
	turn     int           // index into the turns
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
	span *genSpan
	oi   bool // an OpenInference TOOL span
	id   string
	name string
	args jsondoc.Value
	// whole: args is a traceloop.entity.input kept whole (several
	// positional arguments), no argument object: a joined request's
	// arguments are taken instead.
	whole  bool
	result jsondoc.Value
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
func spanConventions(attrs map[string]jsondoc.Value, c *otelConventions) {
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
func otelTrace(b *builder, spans []genSpan) engine.Trace {
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	var turns []otelTurn
	var reqs []otelRequest
	var execs []*otelExec
	toolMsgs := map[string]jsondoc.Value{} // tool_call_id -> the content sent back (OpenInference input messages)
	var rootAnswer *string
	rootRank := 0
	setRoot := func(rank int, v jsondoc.Value) {
		if rank < rootRank {
			return
		}
		if s, ok := v.Str(); ok {
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
		opID := a["ai.operationId"].Text()
		oiKind := a["openinference.span.kind"].Text()
		tlKind := a["traceloop.span.kind"].Text()
		op := a["gen_ai.operation.name"].Text()
		switch {
		case opID == "ai.toolCall":
			// OpenLLMetry's span processor rewrites the AI SDK's spans: it
			// may drop the ai.toolCall.* attributes for gen_ai.tool.*.
			id := cmp.Or(a["ai.toolCall.id"].Text(), a["gen_ai.tool.call.id"].Text())
			name := cmp.Or(a["ai.toolCall.name"].Text(), a["gen_ai.tool.name"].Text())
			args, result := a["ai.toolCall.args"], a["ai.toolCall.result"]
			if !args.Exists() {
				args = a["gen_ai.tool.call.arguments"]
			}
			if !result.Exists() {
				result = a["gen_ai.tool.call.result"]
			}
			execs = append(execs, &otelExec{span: s, id: id, name: name, args: args, result: result, err: spanErr(s)})
		case strings.HasSuffix(opID, ".doGenerate") || strings.HasSuffix(opID, ".doStream"):
			if aiSDKRewritten(a) {
				text, calls := genAIOutput(b.dec, a)
				addTurn(s, text, calls)
				break
			}
			text := a["ai.response.text"].Text()
			addTurn(s, text, aiSDKToolCalls(b.dec, a["ai.response.toolCalls"]))
		case opID == "ai.generateText" || opID == "ai.streamText":
			if aiSDKRewritten(a) {
				if text, calls := genAIOutput(b.dec, a); len(calls) == 0 {
					setRoot(2, b.synth(jsondoc.AppendString(nil, text)))
				}
				break
			}
			if _, ok := a["ai.response.toolCalls"]; !ok {
				setRoot(2, a["ai.response.text"])
			}
		case strings.EqualFold(oiKind, "TOOL"):
			name := a["tool.name"].Text()
			if name == "" {
				name = s.name
			}
			id := cmp.Or(a["tool.id"].Text(), a["tool_call.id"].Text(), a["gen_ai.tool.call.id"].Text())
			args, ok := a["input.value"]
			if !ok {
				args = a["tool.parameters"]
			}
			e := &otelExec{span: s, oi: true, id: id, name: name, args: args, result: a["output.value"], err: spanErr(s)}
			oiToolMessage(b.dec, e)
			execs = append(execs, e)
		case strings.EqualFold(oiKind, "LLM"):
			text, calls := oiOutput(a)
			oiLangChainIDs(b.dec, a["output.value"], calls)
			for i := range calls {
				calls[i].oi = true
			}
			addTurn(s, text, calls)
			oiToolMessages(a, toolMsgs)
		case strings.EqualFold(oiKind, "AGENT") || strings.EqualFold(oiKind, "CHAIN"):
			setRoot(1, a["output.value"])
		case tlKind == "tool":
			name := a["traceloop.entity.name"].Text()
			if name == "" {
				name = strings.TrimSuffix(s.name, ".tool")
			}
			args, whole := traceloopArgs(b.dec, a["traceloop.entity.input"])
			execs = append(execs, &otelExec{span: s, name: name, args: args, whole: whole, result: a["traceloop.entity.output"], err: spanErr(s)})
		case tlKind == "agent" || tlKind == "workflow":
			if v, ok := a["traceloop.entity.output"].Str(); ok {
				if dv, ok := decodeText(b.dec, v); ok {
					setRoot(1, dv)
				}
			}
		case op == "execute_tool" || (op == "" && set(a["gen_ai.tool.name"])):
			name := a["gen_ai.tool.name"].Text()
			if name == "" {
				name = strings.TrimPrefix(s.name, "execute_tool ")
			}
			id := a["gen_ai.tool.call.id"].Text()
			execs = append(execs, &otelExec{span: s, id: id, name: name, args: a["gen_ai.tool.call.arguments"], result: a["gen_ai.tool.call.result"], err: spanErr(s)})
		case op == "chat" || op == "text_completion" || op == "generate_content" || set(a["llm.request.type"]):
			text, calls := genAIOutput(b.dec, a)
			addTurn(s, text, calls)
		case op == "invoke_agent":
			if text, calls := genAIOutput(b.dec, a); len(calls) == 0 {
				setRoot(1, b.synth(jsondoc.AppendString(nil, text)))
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
		var result jsondoc.Value
		e := sl.exec
		if r := sl.req; r != nil {
			c.Tool, c.ID, e = r.name, r.id, r.exec
			args := r.args
			if args.Kind() != jsondoc.String && e != nil && !(e.whole && set(args)) {
				if e.args.Kind() == jsondoc.String || !set(args) {
					args = e.args
				}
			}
			b.setArgs(&c, args)
			if e == nil {
				result = toolMsgs[r.id]
			}
		} else {
			c.Tool, c.ID = e.name, e.id
			b.setArgs(&c, e.args)
		}
		if e != nil {
			if c.ID == "" {
				c.ID = e.id
			}
			if !set(result) {
				result = e.result
			}
			c.Error = e.err
			if c.Error != "" {
				result = jsondoc.Value{}
			}
		}
		setResult(&c, result)
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
			if e.joined || len(byID) > 0 {
				continue
			}
			// No request carries an id (the execution's came from its
			// output): joined by name and turn below.
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

// decodeText reads JSON text with p.
func decodeText(p *jsondoc.Parser, s string) (jsondoc.Value, bool) {
	v, err := p.Parse(s)
	return v, err == nil
}

// aiSDKToolCalls reads the Vercel AI SDK's ai.response.toolCalls: JSON text
// of [{toolCallId, toolName, input}], input the model's argument text
// (generateText in ai 5 and 6) or the parsed object.
func aiSDKToolCalls(p *jsondoc.Parser, v jsondoc.Value) []otelRequest {
	s, ok := v.Str()
	if !ok {
		return nil
	}
	dv, ok := decodeText(p, s)
	if !ok {
		return nil
	}
	var out []otelRequest
	for _, m := range dv.Elems() {
		if !isObj(m) {
			continue
		}
		args := m.Get("input")
		if !args.Exists() {
			args = m.Get("args") // ai 4
		}
		out = append(out, otelRequest{id: m.Get("toolCallId").Text(), name: m.Get("toolName").Text(), args: args})
	}
	return out
}

// genAIOutput reads an inference span's output: the text and tool_call
// parts {id, name, arguments} of gen_ai.output.messages (JSON text or an
// array), else the indexed attributes of the GenAI conventions before
// 0.5.0 (gen_ai.completion.N.content, gen_ai.completion.N.tool_calls.M.{id,
// name, arguments}), which OpenLLMetry wrote.
func genAIOutput(dec *jsondoc.Parser, a map[string]jsondoc.Value) (string, []otelRequest) {
	v := a["gen_ai.output.messages"]
	if s, ok := v.Str(); ok {
		v, _ = decodeText(dec, s)
	}
	var text strings.Builder
	var calls []otelRequest
	if isArr(v) {
		for _, mm := range v.Elems() {
			for _, pm := range mm.Get("parts").Elems() {
				switch pm.Get("type").Text() {
				case "tool_call":
					calls = append(calls, otelRequest{id: idString(pm.Get("id")), name: pm.Get("name").Text(), args: pm.Get("arguments")})
				case "text":
					text.WriteString(pm.Get("content").Text())
				}
			}
		}
		return text.String(), calls
	}
	for n := 0; ; n++ {
		p := "gen_ai.completion." + strconv.Itoa(n)
		content, hasContent := a[p+".content"].Str()
		_, hasRole := a[p+".role"]
		if !hasContent && !hasRole {
			if _, ok := a[p+".tool_calls.0.name"]; !ok {
				break
			}
		}
		text.WriteString(content)
		for m := 0; ; m++ {
			q := p + ".tool_calls." + strconv.Itoa(m)
			name, ok := a[q+".name"].Str()
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
func oiOutput(a map[string]jsondoc.Value) (string, []otelRequest) {
	var text string
	var calls []otelRequest
	for n := 0; ; n++ {
		p := "llm.output_messages." + strconv.Itoa(n) + ".message."
		content, hasContent := a[p+"content"].Str()
		_, hasRole := a[p+"role"]
		if !hasContent && !hasRole {
			break
		}
		if !hasContent {
			content = oiContentsText(a, p)
		}
		text = content
		for m := 0; ; m++ {
			q := p + "tool_calls." + strconv.Itoa(m) + ".tool_call."
			name, ok := a[q+"function.name"].Str()
			if !ok {
				break
			}
			calls = append(calls, otelRequest{id: idString(a[q+"id"]), name: name, args: a[q+"function.arguments"]})
		}
	}
	return text, calls
}

// oiContentsText joins the text parts of a message's multimodal contents
// (p + "contents.N.message_content.{type, text}"), which OpenInference
// writes instead of p + "content" (@arizeai/openinference-vercel does).
func oiContentsText(a map[string]jsondoc.Value, p string) string {
	var sb strings.Builder
	for n := 0; ; n++ {
		q := p + "contents." + strconv.Itoa(n) + ".message_content."
		typ, ok := a[q+"type"].Str()
		if !ok {
			return sb.String()
		}
		if typ == "text" {
			sb.WriteString(a[q+"text"].Text())
		}
	}
}

// oiToolMessages records the tool messages of an OpenInference LLM span's
// input (llm.input_messages.N.message with role tool): their content by
// tool_call_id, the result of a call no TOOL span ran.
func oiToolMessages(a map[string]jsondoc.Value, into map[string]jsondoc.Value) {
	for n := 0; ; n++ {
		p := "llm.input_messages." + strconv.Itoa(n) + ".message."
		role, ok := a[p+"role"].Str()
		if !ok {
			return
		}
		if role != "tool" {
			continue
		}
		if id := a[p+"tool_call_id"].Text(); id != "" {
			if _, seen := into[id]; !seen {
				into[id] = a[p+"content"]
			}
		}
	}
}

// traceloopArgs reads traceloop.entity.input, {"args": [...], "kwargs":
// {...}} as JSON text: the kwargs when there are no positional arguments,
// the one positional argument when it is an object and there are no
// kwargs; otherwise the text is kept whole (it is no argument object) and
// whole is true.
func traceloopArgs(p *jsondoc.Parser, v jsondoc.Value) (args jsondoc.Value, whole bool) {
	s, ok := v.Str()
	if !ok {
		return v, false
	}
	m, ok := decodeText(p, s)
	if !ok || !isObj(m) {
		return v, false
	}
	pos, kw := m.Get("args"), m.Get("kwargs")
	if !isArr(pos) {
		pos = jsondoc.Value{}
	}
	if !isObj(kw) {
		kw = jsondoc.Value{}
	}
	switch {
	case pos.Len() == 0 && kw.Exists():
		return kw, false
	case pos.Len() == 1 && kw.Len() == 0:
		if obj := pos.Index(0); isObj(obj) {
			return obj, false
		}
	case pos.Len() == 0 && !set(m.Get("kwargs")):
		empty, _ := p.Parse("{}")
		return empty, false
	}
	return v, true
}

// oiToolMessage reads the output of an OpenInference TOOL span that holds
// the LangChain ToolMessage the tool returned (the LangChain
// instrumentation's output.value: {"output": ToolMessage}, serialised or
// as a dict): the result is its content, the call id its tool_call_id
// (the span has none), and its status "error" an error.
func oiToolMessage(p *jsondoc.Parser, e *otelExec) {
	text, ok := e.result.Str()
	if !ok || !strings.Contains(text, "tool_call_id") {
		return
	}
	v, ok := decodeText(p, text)
	if !ok {
		return
	}
	if x := v.Get("output"); v.Len() == 1 && set(x) {
		v = x
	}
	m, ok := langChainToolMessage(v)
	if !ok {
		return
	}
	e.result = m.Get("content")
	if e.id == "" {
		e.id = idString(m.Get("tool_call_id"))
	}
	if e.err == "" && m.Get("status").Text() == "error" {
		e.err = engine.CallError(cmp.Or(m.Get("content").Text(), "true"))
	}
}

// oiLangChainIDs gives the requests of an OpenInference LLM span the call
// ids its flattened attributes leave out, from the LangChain generation
// the LangChain instrumentation keeps in output.value
// ({"generations": [[{"message": AIMessage}]]}, the AIMessage serialised
// or as a dict): its tool_calls in order, when their number and names are
// the requests'.
func oiLangChainIDs(p *jsondoc.Parser, out jsondoc.Value, calls []otelRequest) {
	missing := false
	for _, c := range calls {
		missing = missing || c.id == ""
	}
	text, ok := out.Str()
	if !missing || !ok || !strings.Contains(text, "generations") {
		return
	}
	v, ok := decodeText(p, text)
	if !ok {
		return
	}
	msg := v.Get("generations").Index(0).Index(0).Get("message")
	if kw := msg.Get("kwargs"); isObj(kw) {
		msg = kw
	}
	tcs := msg.Get("tool_calls")
	if tcs.Len() != len(calls) {
		return
	}
	for i, tc := range elems(tcs) {
		if tc.Get("name").Text() != calls[i].name {
			return
		}
	}
	for i, tc := range elems(tcs) {
		if calls[i].id == "" {
			calls[i].id = idString(tc.Get("id"))
		}
	}
}

// aiSDKRewritten reports whether an AI SDK model span was rewritten by
// OpenLLMetry's span processor (@traceloop/node-server-sdk): its
// ai.response.* attributes replaced by gen_ai.output.messages.
func aiSDKRewritten(a map[string]jsondoc.Value) bool {
	_, calls := a["ai.response.toolCalls"]
	_, text := a["ai.response.text"]
	return !calls && !text && set(a["gen_ai.output.messages"])
}
