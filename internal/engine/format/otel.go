package format

import (
	"encoding/json"
	"strconv"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/internal/jsonvalue"
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
	for _, r := range recs {
		m, ok := r.(map[string]any)
		if !ok {
			return "", false
		}
		if _, ok := m["resourceSpans"].([]any); ok {
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
	_ = collectSpans(in, func(s genSpan) { spanConventions(s.attrs, &c) })
	if n := c.String(); n != "" {
		return ", " + n
	}
	return ""
}

func (otelAdapter) Parse(in *Input) (engine.Trace, error) {
	var spans []genSpan
	if err := collectSpans(in, func(s genSpan) { spans = append(spans, s) }); err != nil {
		return engine.Trace{}, err
	}
	return otelTrace(spans), nil
}

// collectSpans gives collect every span of the document, reduced, in
// document order: the spans of OTLP/JSON export records, OTLP/JSON spans,
// and spans as the Python SDK prints them.
func collectSpans(in *Input, collect func(genSpan)) error {
	seq := 0
	otlp := func(s any) {
		if m, ok := s.(map[string]any); ok {
			collect(otlpSpan(m, seq))
			seq++
		}
	}
	for i, r := range in.Records() {
		m, ok := r.(map[string]any)
		if !ok {
			return shapeErr("otel", []any{i}, "expected an object, not %s", aType(r))
		}
		if rs, ok := m["resourceSpans"]; ok {
			list, ok := rs.([]any)
			if !ok {
				return shapeErr("otel", []any{i, "resourceSpans"}, "resourceSpans must be an array, not %s", aType(rs))
			}
			if err := otelExport(list, []any{i, "resourceSpans"}, otlp); err != nil {
				return err
			}
			continue
		}
		if _, ok := m["spanId"]; ok {
			otlp(m)
			continue
		}
		if isPySpan(m) {
			collect(pySpan(m, seq))
			seq++
			continue
		}
		return notFit("otel", []any{i}, m, `not OTLP/JSON: expected an export with "resourceSpans" or a span with "spanId"`)
	}
	return nil
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
