package format

import (
	"strconv"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// otelAdapter reads OpenTelemetry spans: OTLP/JSON (an export request
// {"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}, several of them
// as a JSON array or JSON Lines, a list of spans, or a single span), or the
// spans the OpenTelemetry Python SDK prints (ReadableSpan.to_json: one, a
// list, JSON Lines or ConsoleSpanExporter's output). It reads the tool
// spans and model requests of the GenAI conventions, the Vercel AI SDK's
// ai.* spans, OpenInference and OpenLLMetry, joins a request and the tool
// span that ran it into one call, and orders the calls by start time
// (otelTrace; docs/formats.md, section otel).
type otelAdapter struct{}

func (otelAdapter) Name() string { return "otel" }

func isSpan(m jsondoc.Value) bool {
	return m.Get("spanId").Exists() && isArr(m.Get("attributes"))
}

func (otelAdapter) Detect(in *Input) (string, bool) {
	if m, ok := in.Object(); ok {
		if isArr(m.Get("resourceSpans")) {
			return "OTLP/JSON trace data (resourceSpans)" + conventionsOf(in), true
		}
		if isSpan(m) {
			return "a single OpenTelemetry span (OTLP/JSON)" + conventionsOf(in), true
		}
		if isPySpan(m) {
			return "a single OpenTelemetry span as the Python SDK prints it (ReadableSpan.to_json)" + conventionsOf(in), true
		}
		return "", false
	}
	recs := in.Records()
	exports, spans, py := 0, 0, 0
	for _, m := range recs {
		if !isObj(m) {
			return "", false
		}
		if isArr(m.Get("resourceSpans")) {
			exports++
		} else if isSpan(m) {
			spans++
		} else if isPySpan(m) {
			py++
		} else {
			return "", false
		}
	}
	switch {
	case exports+spans+py == 0:
		return "", false
	case py > 0 && exports+spans > 0:
		return "", false // two writings mixed: not one exporter's output
	case py > 0:
		return plural(py, "OpenTelemetry span") + " as the Python SDK prints them (ReadableSpan.to_json, ConsoleSpanExporter)" + conventionsOf(in), true
	case spans == 0:
		return plural(exports, "OTLP/JSON export record") + " (resourceSpans)" + conventionsOf(in), true
	}
	return "a list of " + plural(exports+spans, "OpenTelemetry span") + " (OTLP/JSON)" + conventionsOf(in), true
}

// conventionsOf names the conventions of a document's spans for the
// detection reason (", Vercel AI SDK spans"), or "".
func conventionsOf(in *Input) string {
	var c otelConventions
	var p jsondoc.Parser
	_ = collectSpans(in, &p, func(s genSpan) { spanConventions(s.attrs, &c) })
	if n := c.String(); n != "" {
		return ", " + n
	}
	return ""
}

func (otelAdapter) Parse(in *Input) (engine.Trace, error) {
	var spans []genSpan
	b := in.newBuilder()
	if err := collectSpans(in, b.dec, func(s genSpan) { spans = append(spans, s) }); err != nil {
		return engine.Trace{}, err
	}
	return otelTrace(b, spans), nil
}

// collectSpans gives collect every span of the document, reduced, in
// document order: the spans of OTLP/JSON export records, OTLP/JSON spans,
// and spans as the Python SDK prints them. p reads the values the
// reduction assembles. A span whose trace id and span id were already
// seen is a repeated copy (an exporter's retry, or two processors writing
// the same span to one file) and is left out: the first copy is kept, as
// the OTLP ingest keeps it.
func collectSpans(in *Input, p *jsondoc.Parser, collect func(genSpan)) error {
	seq := 0
	var seen map[spanKey]struct{}
	repeated := func(trace, span jsondoc.Value) bool {
		id := span.Text()
		if id == "" {
			return false
		}
		k := spanKey{trace.Text(), id}
		if _, ok := seen[k]; ok {
			return true
		}
		if seen == nil {
			seen = map[spanKey]struct{}{}
		}
		seen[k] = struct{}{}
		return false
	}
	otlp := func(m jsondoc.Value) error {
		if err := checkOTLPSpan(m); err != nil {
			return err
		}
		if repeated(m.Get("traceId"), m.Get("spanId")) {
			return nil
		}
		collect(otlpSpan(p, m, seq))
		seq++
		return nil
	}
	for _, m := range in.Records() {
		if !isObj(m) {
			return shapeErr("otel", m, "expected an object, not %s", aType(m))
		}
		if rs := m.Get("resourceSpans"); rs.Exists() {
			if !isArr(rs) {
				return shapeErr("otel", rs, "resourceSpans must be an array, not %s", aType(rs))
			}
			if err := otelExport(rs, otlp); err != nil {
				return err
			}
			continue
		}
		if m.Get("spanId").Exists() {
			if err := otlp(m); err != nil {
				return err
			}
			continue
		}
		if isPySpan(m) {
			if err := checkPySpan(m); err != nil {
				return err
			}
			if ctx := m.Get("context"); repeated(ctx.Get("trace_id"), ctx.Get("span_id")) {
				continue
			}
			collect(pySpan(p, m, seq))
			seq++
			continue
		}
		return notFit("otel", m, `not OTLP/JSON: expected an export with "resourceSpans" or a span with "spanId"`)
	}
	return nil
}

// checkOTLPSpan reports, as a *ShapeError, an OTLP/JSON span whose name
// (a tool's name when no attribute gives one) or attributes (the calls,
// their arguments and ids) have the wrong JSON type: attributes must be an
// array of objects with a string key. Absent or null members read as
// none.
func checkOTLPSpan(m jsondoc.Value) error {
	if _, err := str("otel", "name", m.Get("name")); err != nil {
		return err
	}
	attrs := m.Get("attributes")
	if !set(attrs) {
		return nil
	}
	if !isArr(attrs) {
		return shapeErr("otel", attrs, "attributes must be an array, not %s", aType(attrs))
	}
	for _, am := range attrs.Elems() {
		if !isObj(am) {
			return shapeErr("otel", am, "an attribute must be an object, not %s", aType(am))
		}
		k, err := str("otel", "key", am.Get("key"))
		if err != nil {
			return err
		}
		if isNameAttr(k) {
			v := am.Get("value")
			if set(v) && !isObj(v) && v.Kind() != jsondoc.String {
				return shapeErr("otel", v, "the %s attribute must be a string, not %s", k, aType(v))
			}
			if kind, x := anyValueMember(v); kind != "" && kind != "stringValue" {
				return shapeErr("otel", v, "the %s attribute must be a string, not %s", k, anyValueType(kind, x))
			} else if kind == "stringValue" && x.Kind() != jsondoc.String {
				return shapeErr("otel", x, "the %s attribute must be a string, not %s", k, aType(x))
			}
		}
	}
	return nil
}

// isNameAttr reports whether an attribute names a call's tool or gives
// its id in the conventions toolscore reads: its value must be a string.
func isNameAttr(k string) bool {
	switch k {
	case "gen_ai.tool.name", "gen_ai.tool.call.id", "ai.toolCall.name", "ai.toolCall.id",
		"tool.name", "tool.id", "tool_call.id", "traceloop.entity.name":
		return true
	}
	return false
}

// anyValueType names the JSON type an AnyValue member holds, for errors:
// an intValue is "a number", a kvlistValue "an object".
func anyValueType(kind string, x jsondoc.Value) string {
	switch kind {
	case "intValue", "doubleValue":
		return "a number"
	case "boolValue":
		return "a boolean"
	case "arrayValue":
		return "an array"
	case "kvlistValue":
		return "an object"
	case "bytesValue":
		return "bytes"
	}
	return aType(x)
}

// checkPySpan reports, as a *ShapeError, a Python SDK span whose
// attributes name a tool or give a call id (isNameAttr) with a value
// that is not a string.
func checkPySpan(m jsondoc.Value) error {
	for k, v := range m.Get("attributes").Members() {
		if isNameAttr(k) && set(v) && v.Kind() != jsondoc.String {
			return shapeErr("otel", v, "the %s attribute must be a string, not %s", k, aType(v))
		}
	}
	return nil
}

// spanKey identifies a span within a document: its trace id and span id
// as written.
type spanKey struct{ trace, span string }

// otelExport gives collect every span of an export's resourceSpans list.
// Each level must be an object and each list an array; empty lists may be
// left out, as OTLP/JSON allows.
func otelExport(list jsondoc.Value, collect func(jsondoc.Value) error) error {
	for _, rm := range list.Elems() {
		if !isObj(rm) {
			return shapeErr("otel", rm, "a ResourceSpans must be an object, not %s", aType(rm))
		}
		scopes := rm.Get("scopeSpans")
		if !isArr(scopes) && set(scopes) {
			return shapeErr("otel", scopes, "scopeSpans must be an array, not %s", aType(scopes))
		}
		for _, sm := range scopes.Elems() {
			if !isObj(sm) {
				return shapeErr("otel", sm, "a ScopeSpans must be an object, not %s", aType(sm))
			}
			spans := sm.Get("spans")
			if !isArr(spans) && set(spans) {
				return shapeErr("otel", spans, "spans must be an array, not %s", aType(spans))
			}
			for _, s := range spans.Elems() {
				if !isObj(s) {
					return shapeErr("otel", s, "a span must be an object, not %s", aType(s))
				}
				if err := collect(s); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// otelValue converts an OTLP AnyValue to a JSON value: stringValue,
// boolValue, intValue (a string or a number in OTLP/JSON) and doubleValue
// as such, arrayValue as an array, kvlistValue as an object, bytesValue as
// its base64 text; an empty AnyValue as the zero Value. A value that is
// not an AnyValue is taken as it is. p reads the values it assembles.
func otelValue(p *jsondoc.Parser, v jsondoc.Value) jsondoc.Value {
	if !isObj(v) {
		return v
	}
	if v.Len() == 0 {
		return jsondoc.Value{} // an empty AnyValue
	}
	switch k, x := anyValueMember(v); k {
	case "":
		return v
	case "intValue", "doubleValue":
		// OTLP/JSON writes 64-bit integers as strings, and doubles may
		// be "NaN" or "Infinity", which stay strings.
		if s, ok := x.Str(); ok && jsondoc.IsNumber(s) {
			n, _ := p.Parse(s)
			return n
		}
		return x
	case "arrayValue", "kvlistValue":
		n, _ := p.Parse(string(appendOTelValue(nil, p, v)))
		return n
	default:
		return x
	}
}

// anyValueMember returns the first member of an AnyValue object that
// holds its value, or "" when it has none.
func anyValueMember(v jsondoc.Value) (string, jsondoc.Value) {
	for k, x := range v.Members() {
		switch k {
		case "stringValue", "boolValue", "bytesValue", "intValue", "doubleValue", "arrayValue", "kvlistValue":
			return k, x
		}
	}
	return "", jsondoc.Value{}
}

// appendOTelValue appends the JSON text of otelValue(v).
func appendOTelValue(out []byte, p *jsondoc.Parser, v jsondoc.Value) []byte {
	if isObj(v) {
		switch k, x := anyValueMember(v); k {
		case "arrayValue":
			out = append(out, '[')
			for i, e := range x.Get("values").Elems() {
				if i > 0 {
					out = append(out, ',')
				}
				out = appendOTelValue(out, p, e)
			}
			return append(out, ']')
		case "kvlistValue":
			out = append(out, '{')
			for i, e := range x.Get("values").Elems() {
				if i > 0 {
					out = append(out, ',')
				}
				out = jsondoc.AppendString(out, e.Get("key").Text())
				out = append(out, ':')
				out = appendOTelValue(out, p, e.Get("value"))
			}
			return append(out, '}')
		}
	}
	return otelValue(p, v).AppendJSON(out)
}

// nanos reads a startTimeUnixNano given as a decimal string or a number;
// 0 when absent or invalid.
func nanos(v jsondoc.Value) uint64 {
	n, err := strconv.ParseUint(idString(v), 10, 64)
	if err != nil {
		return 0
	}
	return n
}
