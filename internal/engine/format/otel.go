package format

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/internal/jsonvalue"
)

// otelAdapter reads OpenTelemetry GenAI spans in OTLP/JSON: an export
// request {"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}, several
// of them (a JSON array or the JSON Lines a file exporter writes), a list
// of spans, or a single span.
//
// Execute-tool spans (gen_ai.operation.name "execute_tool", or a
// gen_ai.tool.name with no operation) are calls: gen_ai.tool.name (else the
// span name after "execute_tool "), gen_ai.tool.call.id,
// gen_ai.tool.call.arguments (JSON text, or an OTLP kvlist/object taken as
// it is), gen_ai.tool.call.result. A span with status code ERROR is an
// error (its status message, else error.type, else "true"); so is one with
// an error.type attribute. Calls are ordered by startTimeUnixNano, ties in
// document order. The final answer is the text of gen_ai.output.messages
// on the latest-starting inference span (chat, text_completion,
// generate_content; else invoke_agent) when it requested no tool calls.
type otelAdapter struct{}

func (otelAdapter) Name() string { return "otel" }

func isSpan(m map[string]any) bool {
	if _, ok := m["spanId"]; !ok {
		return false
	}
	_, ok := m["attributes"].([]any)
	return ok
}

func (otelAdapter) Detect(in *Input) (string, bool) {
	if m, ok := in.Value.(map[string]any); ok && in.Form == FormJSON {
		if _, ok := m["resourceSpans"].([]any); ok {
			return "OTLP/JSON trace data (resourceSpans)", true
		}
		if isSpan(m) {
			return "a single OpenTelemetry span (OTLP/JSON)", true
		}
		return "", false
	}
	recs := in.Records()
	exports, spans := 0, 0
	for _, r := range recs {
		m, ok := r.(map[string]any)
		if !ok {
			return "", false
		}
		if _, ok := m["resourceSpans"].([]any); ok {
			exports++
		} else if isSpan(m) {
			spans++
		} else {
			return "", false
		}
	}
	if exports+spans == 0 {
		return "", false
	}
	if spans == 0 {
		return plural(exports, "OTLP/JSON export record") + " (resourceSpans)", true
	}
	return "a list of " + plural(exports+spans, "OpenTelemetry span") + " (OTLP/JSON)", true
}

// otelSpan is a span of interest, with its start time and document order.
type otelSpan struct {
	start uint64
	seq   int
	m     map[string]any
}

func (otelAdapter) Parse(in *Input) (engine.Trace, error) {
	var spans []otelSpan
	collect := func(s any) {
		if m, ok := s.(map[string]any); ok {
			spans = append(spans, otelSpan{start: nanos(m["startTimeUnixNano"]), seq: len(spans), m: m})
		}
	}
	for i, r := range in.Records() {
		m, ok := r.(map[string]any)
		if !ok {
			return engine.Trace{}, shapeErr("otel", []any{i}, "expected an object, not %s", aType(r))
		}
		if rs, ok := m["resourceSpans"]; ok {
			list, ok := rs.([]any)
			if !ok {
				return engine.Trace{}, shapeErr("otel", []any{i, "resourceSpans"}, "resourceSpans must be an array, not %s", aType(rs))
			}
			if err := otelExport(list, []any{i, "resourceSpans"}, collect); err != nil {
				return engine.Trace{}, err
			}
			continue
		}
		if _, ok := m["spanId"]; !ok {
			return engine.Trace{}, notFit("otel", []any{i}, m, `not OTLP/JSON: expected an export with "resourceSpans" or a span with "spanId"`)
		}
		collect(m)
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].start < spans[j].start })

	b := newBuilder()
	var answer *otelSpan
	answerRank := 0
	for i := range spans {
		s := &spans[i]
		attrs := getArr(s.m, "attributes")
		op, _ := otelAttr(attrs, "gen_ai.operation.name").(string)
		switch {
		case op == "execute_tool" || (op == "" && otelAttr(attrs, "gen_ai.tool.name") != nil):
			b.add(otelCall(b, s.m, attrs))
		case op == "chat" || op == "text_completion" || op == "generate_content":
			answer, answerRank = s, 2
		case op == "invoke_agent" && answerRank < 2:
			answer, answerRank = s, 1
		}
	}
	if answer != nil {
		b.final = otelAnswer(otelAttr(getArr(answer.m, "attributes"), "gen_ai.output.messages"))
	}
	return b.trace(), nil
}

// otelExport gives collect every span of an export's resourceSpans list,
// at the place at. Each level must be an object and each list an array;
// empty lists may be left out, as OTLP/JSON allows.
func otelExport(list []any, at []any, collect func(any)) error {
	for i, r := range list {
		rm, ok := r.(map[string]any)
		if !ok {
			return shapeErr("otel", append(at, i), "a ResourceSpans must be an object, not %s", aType(r))
		}
		scopes, ok := rm["scopeSpans"].([]any)
		if !ok && rm["scopeSpans"] != nil {
			return shapeErr("otel", append(at, i, "scopeSpans"), "scopeSpans must be an array, not %s", aType(rm["scopeSpans"]))
		}
		for j, ss := range scopes {
			sm, ok := ss.(map[string]any)
			if !ok {
				return shapeErr("otel", append(at, i, "scopeSpans", j), "a ScopeSpans must be an object, not %s", aType(ss))
			}
			spans, ok := sm["spans"].([]any)
			if !ok && sm["spans"] != nil {
				return shapeErr("otel", append(at, i, "scopeSpans", j, "spans"), "spans must be an array, not %s", aType(sm["spans"]))
			}
			for k, s := range spans {
				if _, ok := s.(map[string]any); !ok {
					return shapeErr("otel", append(at, i, "scopeSpans", j, "spans", k), "a span must be an object, not %s", aType(s))
				}
				collect(s)
			}
		}
	}
	return nil
}

func otelCall(b *builder, m map[string]any, attrs []any) engine.ToolCall {
	var c engine.ToolCall
	c.Tool, _ = otelAttr(attrs, "gen_ai.tool.name").(string)
	if c.Tool == "" {
		c.Tool = strings.TrimPrefix(getStr(m, "name"), "execute_tool ")
	}
	c.ID, _ = otelAttr(attrs, "gen_ai.tool.call.id").(string)
	b.setArgs(&c, otelAttr(attrs, "gen_ai.tool.call.arguments"))
	c.Result = otelAttr(attrs, "gen_ai.tool.call.result")
	status, _ := m["status"].(map[string]any)
	code := idString(status["code"])
	if code == "" {
		code = getStr(status, "code")
	}
	errType, _ := otelAttr(attrs, "error.type").(string)
	if code == "2" || code == "STATUS_CODE_ERROR" || errType != "" {
		c.Error = engine.CallError(getStr(status, "message"))
		if c.Error == "" {
			c.Error = engine.CallError(errType)
		}
		if c.Error == "" {
			c.Error = "true"
		}
	}
	return c
}

// otelAnswer reads the final answer from gen_ai.output.messages (JSON text
// or an array): the text parts of the messages, or nil when a message
// requested tool calls.
func otelAnswer(v any) *string {
	if s, ok := v.(string); ok {
		var d jsonvalue.Decoder
		d.Reset(s, 0)
		dv, err := d.Document()
		if err != nil {
			return nil
		}
		v = dv
	}
	msgs, _ := v.([]any)
	var text strings.Builder
	for _, msg := range msgs {
		mm, _ := msg.(map[string]any)
		for _, p := range getArr(mm, "parts") {
			pm, _ := p.(map[string]any)
			switch getStr(pm, "type") {
			case "tool_call":
				return nil
			case "text":
				text.WriteString(getStr(pm, "content"))
			}
		}
	}
	return visible(text.String())
}

// otelAttr returns the value of the attribute key in an OTLP attribute
// list, converted to a plain JSON value, or nil.
func otelAttr(attrs []any, key string) any {
	for _, a := range attrs {
		am, ok := a.(map[string]any)
		if !ok || getStr(am, "key") != key {
			continue
		}
		return otelValue(am["value"])
	}
	return nil
}

// otelValue converts an OTLP AnyValue to a JSON value: stringValue,
// boolValue, intValue (a string or a number in OTLP/JSON) and doubleValue
// as such, arrayValue as an array, kvlistValue as an object, bytesValue as
// its base64 text. A value that is not an AnyValue is taken as it is.
func otelValue(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if len(m) == 0 {
		return nil // an empty AnyValue
	}
	for k, x := range m {
		switch k {
		case "stringValue", "boolValue", "bytesValue":
			return x
		case "intValue", "doubleValue":
			// OTLP/JSON writes 64-bit integers as strings, and doubles
			// may be "NaN" or "Infinity", which stay strings.
			if s, ok := x.(string); ok && isJSONNumber(s) {
				return json.Number(s)
			}
			return x
		case "arrayValue":
			xm, _ := x.(map[string]any)
			vals := getArr(xm, "values")
			out := make([]any, len(vals))
			for i, e := range vals {
				out[i] = otelValue(e)
			}
			return out
		case "kvlistValue":
			xm, _ := x.(map[string]any)
			vals := getArr(xm, "values")
			out := make(map[string]any, len(vals))
			for _, e := range vals {
				em, _ := e.(map[string]any)
				out[getStr(em, "key")] = otelValue(em["value"])
			}
			return out
		}
	}
	return v
}

// isJSONNumber reports whether s is exactly one JSON number.
func isJSONNumber(s string) bool {
	return jsonvalue.IsNumber(s)
}

// nanos reads a startTimeUnixNano given as a decimal string or a number;
// 0 when absent or invalid.
func nanos(v any) uint64 {
	var s string
	switch t := v.(type) {
	case string:
		s = t
	case json.Number:
		s = string(t)
	default:
		return 0
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0
	}
	return n
}
