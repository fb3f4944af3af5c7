package format

import (
	"strconv"
	"strings"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// noCallsNoter is an adapter that explains, better than unreadToolContent
// can, why a document it read gave no calls (LangSmith: llm runs asked
// for tools that were never traced).
type noCallsNoter interface {
	// noCalls returns the note for a document that read with 0 calls, or
	// "" when there is nothing to say.
	noCalls(in *Input) string
}

// toolWords are the words of a member name (or an OTLP attribute key),
// lowercased and with "_", "-" and "." left out, that name a tool call or
// its result in some trace format: tool_calls, toolCallId, tool_use_id,
// tool_result, functionCall, function_response, ai.toolCall.name,
// gen_ai.tool.call.id, tool.name, tool_name, tool-return.
var toolWords = []string{"toolcall", "tooluse", "toolresult", "toolreturn", "functioncall", "functionresponse", "toolname"}

// maxUnreadShown is how many places unreadToolContent names.
const maxUnreadShown = 2

// unreadToolContent looks through a document that read with 0 calls for
// values that look like tool calls or their results, which the format
// that read it therefore did not read: a member (or an OTLP/JSON
// attribute {key, value}) whose name holds one of toolWords and whose
// value is not empty, a "type" / "part_kind" / "kind" member whose value
// holds one, or a span kind of TOOL. It returns the note for the
// format's reason, naming the first places ("tool.name at /resourceSpans/
// 0/.../attributes/0"; "line L: /pointer" for JSON Lines and SSE), or ""
// when there is none. Tool definitions (tools, functions, tool_choice,
// ai.prompt.tools, llm.tools.N.tool.json_schema) and request options
// (tool_choice, parallel_tool_calls, max_tool_calls) are not counted.
func unreadToolContent(in *Input, format string) string {
	n := 0
	var shown []string
	note := func(name string, at jsondoc.Value) {
		n++
		if len(shown) < maxUnreadShown {
			se := shapeErr(format, at, "")
			in.locate(se)
			where := se.Pointer
			if where == "" {
				where = "/"
			}
			if se.Line > 0 {
				where = "line " + strconv.Itoa(se.Line) + ": " + where
			}
			shown = append(shown, name+" at "+where)
		}
	}
	var walk func(v jsondoc.Value)
	walk = func(v jsondoc.Value) {
		switch v.Kind() {
		case jsondoc.Array:
			for _, e := range v.Elems() {
				walk(e)
			}
		case jsondoc.Object:
			// An OTLP/JSON attribute: {"key": "tool.name", "value": {...}}.
			if k, ok := v.Get("key").Str(); ok && v.Get("value").Kind() == jsondoc.Object {
				if toolKey(k) && !emptyValue(otelAnyValue(v.Get("value"))) {
					note(k, v)
					return
				}
				if toolSpanKind(k, otelAnyValue(v.Get("value"))) {
					note(k+" "+otelAnyValue(v.Get("value")).Text(), v)
					return
				}
			}
			for k, m := range v.Members() {
				switch {
				case toolKey(k) && !emptyValue(m):
					note(k, m)
				case (k == "type" || k == "part_kind" || k == "kind") && toolKey(m.Text()):
					note(k+" "+m.Text(), m)
				case toolSpanKind(k, m):
					note(k+" "+m.Text(), m)
				default:
					walk(m)
				}
			}
		}
	}
	walk(in.value)
	if n == 0 {
		return ""
	}
	msg := "the trace has no calls, though " + plural(n, "value") + " in it look like tool calls or results that the " + format + " format does not read: " + strings.Join(shown, ", ")
	if n > len(shown) {
		msg += ", ..."
	}
	if n == 1 {
		msg = strings.Replace(msg, "look like", "looks like", 1)
	}
	return msg
}

// toolKey reports whether a member name names a tool call or result
// (toolWords) and not a tool definition or choice.
func toolKey(k string) bool {
	if len(k) < 7 {
		return false
	}
	norm := strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', '.':
			return -1
		}
		if 'A' <= r && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, k)
	for _, w := range []string{"definition", "choice", "parallel", "max"} {
		if strings.Contains(norm, w) {
			return false // tool definitions and request options
		}
	}
	for _, w := range toolWords {
		if strings.Contains(norm, w) {
			return true
		}
	}
	return false
}

// toolSpanKind reports whether a member is the span kind of a tool span
// (openinference.span.kind TOOL, traceloop.span.kind tool).
func toolSpanKind(k string, v jsondoc.Value) bool {
	return strings.HasSuffix(k, "span.kind") && strings.EqualFold(v.Text(), "tool")
}

// otelAnyValue is the value inside an OTLP/JSON AnyValue ({"stringValue":
// ...} and the like), or the zero Value.
func otelAnyValue(v jsondoc.Value) jsondoc.Value {
	_, inner := anyValueMember(v)
	return inner
}

// emptyValue reports whether a value says nothing: absent, null, false,
// an empty array or object, or a string that is empty, white space or the
// JSON text of one of those.
func emptyValue(v jsondoc.Value) bool {
	switch v.Kind() {
	case jsondoc.Invalid, jsondoc.Null:
		return true
	case jsondoc.Bool:
		b, _ := v.Bool()
		return !b
	case jsondoc.Array, jsondoc.Object:
		return v.Len() == 0
	case jsondoc.String:
		switch strings.TrimSpace(v.Text()) {
		case "", "[]", "{}", "null", "false":
			return true
		}
	}
	return false
}
