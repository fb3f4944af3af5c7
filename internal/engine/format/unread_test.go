package format

import (
	"testing"
)

// TestNoCallsWarning: a document that reads with 0 calls although it holds
// tool-call content the format does not read says so in Parsed.Warning,
// and the reason ends with the same note; a document without such content
// (text only, tool definitions, request options) gets none.
func TestNoCallsWarning(t *testing.T) {
	tests := []struct {
		name, doc, format, forced, warning string
	}{
		{
			name: "otlp spans of no convention",
			doc: `{"resourceSpans":[{"scopeSpans":[{"spans":[
 {"traceId":"a","spanId":"1","name":"tool search","startTimeUnixNano":"1","attributes":[{"key":"tool.name","value":{"stringValue":"search"}},{"key":"tool.arguments","value":{"stringValue":"{}"}}]},
 {"traceId":"a","spanId":"2","name":"llm","startTimeUnixNano":"0","attributes":[{"key":"llm.output_messages.0.message.tool_calls.0.tool_call.function.name","value":{"stringValue":"search"}}]}]}]}]}`,
			format:  "otel",
			warning: "the trace has no calls, though 2 values in it look like tool calls or results that the otel format does not read: tool.name at /resourceSpans/0/scopeSpans/0/spans/0/attributes/0, llm.output_messages.0.message.tool_calls.0.tool_call.function.name at /resourceSpans/0/scopeSpans/0/spans/1/attributes/0",
		},
		{
			name:    "a tool span kind without a reading",
			doc:     `{"traceId":"a","spanId":"1","name":"x","attributes":[{"key":"myvendor.span.kind","value":{"stringValue":"TOOL"}}]}`,
			format:  "otel",
			warning: "the trace has no calls, though 1 value in it looks like tool calls or results that the otel format does not read: myvendor.span.kind TOOL at /attributes/0",
		},
		{
			name:    "python console spans",
			doc:     "{\"name\": \"run tool\", \"context\": {\"span_id\": \"0x1\"}, \"attributes\": {\"tool_call.function.name\": \"search\"}}\n{\"name\": \"chat\", \"context\": {\"span_id\": \"0x2\"}, \"attributes\": {\"a\": 1}}\n",
			format:  "otel",
			warning: "the trace has no calls, though 1 value in it looks like tool calls or results that the otel format does not read: tool_call.function.name at line 1: /attributes/tool_call.function.name",
		},
		{
			name:    "openai tool results without their calls",
			doc:     `[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"c1","content":"42"},{"role":"tool","tool_call_id":"c2","content":"43"},{"role":"tool","tool_call_id":"c3","content":"44"}]`,
			format:  "openai",
			warning: "the trace has no calls, though 3 values in it look like tool calls or results that the openai format does not read: tool_call_id at /1/tool_call_id, tool_call_id at /2/tool_call_id, ...",
		},
		{
			name:    "anthropic tool results without their calls",
			doc:     `[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}]`,
			format:  "anthropic",
			warning: "the trace has no calls, though 2 values in it look like tool calls or results that the anthropic format does not read: type tool_result at /0/content/0/type, tool_use_id at /0/content/0/tool_use_id",
		},
		{
			name:    "gemini function responses without their calls",
			doc:     `{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"output":1}}}]}]}`,
			format:  "gemini",
			warning: "the trace has no calls, though 1 value in it looks like tool calls or results that the gemini format does not read: functionResponse at /contents/0/parts/0/functionResponse",
		},
		{
			name:    "responses outputs without their calls",
			doc:     `[{"type":"function_call_output","call_id":"c1","output":"ok"}]`,
			format:  "openai-responses",
			warning: "the trace has no calls, though 1 value in it looks like tool calls or results that the openai-responses format does not read: type function_call_output at /0/type",
		},
		{
			name:    "forced: the note follows the request",
			doc:     `[{"role":"tool","tool_call_id":"c1","content":"42"}]`,
			forced:  "openai",
			format:  "openai",
			warning: "the trace has no calls, though 1 value in it looks like tool calls or results that the openai format does not read: tool_call_id at /0/tool_call_id",
		},
		{
			name:   "text only, with tool definitions and options",
			doc:    `{"model":"m","tools":[{"type":"function","function":{"name":"search","parameters":{}}}],"tool_choice":"auto","parallel_tool_calls":true,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello","tool_calls":[]}]}`,
			format: "openai",
		},
		{
			name:   "otel spans with definitions only",
			doc:    `{"traceId":"a","spanId":"1","name":"ai.generateText.doGenerate","attributes":[{"key":"ai.operationId","value":{"stringValue":"ai.generateText.doGenerate"}},{"key":"ai.prompt.tools","value":{"arrayValue":{"values":[{"stringValue":"{\"name\":\"search\"}"}]}}},{"key":"ai.prompt.toolChoice","value":{"stringValue":"{\"type\":\"auto\"}"}},{"key":"ai.response.toolCalls","value":{"stringValue":"[]"}},{"key":"ai.response.text","value":{"stringValue":"hi"}},{"key":"llm.tools.0.tool.json_schema","value":{"stringValue":"{}"}},{"key":"gen_ai.tool.definitions","value":{"stringValue":"[{}]"}}]}`,
			format: "otel",
		},
		{
			name:   "langchain message with empty tool calls",
			doc:    `[{"type":"ai","content":"hi","tool_calls":[],"invalid_tool_calls":[],"tool_call_chunks":null}]`,
			format: "langchain",
		},
	}
	for _, tc := range tests {
		p, err := Parse([]byte(tc.doc), tc.forced)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if p.Format != tc.format || len(p.Trace.Calls) != 0 {
			t.Errorf("%s: read as %s with %d calls, want %s with 0", tc.name, p.Format, len(p.Trace.Calls), tc.format)
		}
		if p.Warning != tc.warning {
			t.Errorf("%s: warning\n got %q\nwant %q", tc.name, p.Warning, tc.warning)
		}
		if tc.warning != "" && (len(p.Reason) < len(tc.warning) || p.Reason[len(p.Reason)-len(tc.warning)-2:] != "; "+tc.warning) {
			t.Errorf("%s: reason %q does not end with the warning", tc.name, p.Reason)
		}
		if tc.warning == "" && p.Warning != "" {
			t.Errorf("%s: reason %q", tc.name, p.Reason)
		}
	}
	// A document with calls gets no note, whatever else it holds.
	p, err := Parse([]byte(`[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"zz","content":"x"}]`), "")
	if err != nil || len(p.Trace.Calls) != 1 || p.Warning != "" {
		t.Errorf("calls: %+v, %v", p, err)
	}
}
