package format

import (
	"errors"
	"testing"

	"github.com/toolscore/toolscore/internal/engine"
)

// TestWrongTypedField checks that a member naming a tool, a call's
// arguments, a call list or a call id that is present with the wrong JSON
// type is a *ShapeError at that member, never read as absent (a call to
// tool "", arguments {}, 0 calls). auto says the document is detected as
// the format, so the same error comes without --format.
func TestWrongTypedField(t *testing.T) {
	tests := []struct {
		format, doc string
		auto        bool
		// wantErr is the exact error text, wantPtr its pointer.
		wantErr, wantPtr string
	}{
		{format: "openai", auto: true, doc: `[{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":5,"arguments":"{}"}}]}]`,
			wantPtr: "/0/tool_calls/0/function/name", wantErr: `openai: /0/tool_calls/0/function/name: name must be a string, not a number`},
		{format: "openai", auto: true, doc: `[{"role":"assistant","content":null,"tool_calls":[{"id":{},"type":"function","function":{"name":"a","arguments":"{}"}}]}]`,
			wantPtr: "/0/tool_calls/0/id", wantErr: `openai: /0/tool_calls/0/id: id must be a string or a number, not an object`},
		{format: "openai", auto: true, doc: `[{"role":"assistant","content":null,"function_call":{"name":true,"arguments":"{}"}}]`,
			wantPtr: "/0/function_call/name", wantErr: `openai: /0/function_call/name: name must be a string, not a boolean`},
		{format: "openai", auto: true, doc: `[{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"custom","custom":{"name":"a","input":{}}}]}]`,
			wantPtr: "/0/tool_calls/0/custom/input", wantErr: `openai: /0/tool_calls/0/custom/input: input must be a string, not an object`},
		{format: "openai", auto: true, doc: `[{"role":"tool","tool_call_id":["a"],"content":"x"}]`,
			wantPtr: "/0/tool_call_id", wantErr: `openai: /0/tool_call_id: tool_call_id must be a string or a number, not an array`},
		{format: "openai", doc: `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":[],"arguments":"{}"}}]}}]}`,
			wantPtr: "/choices/0/message/tool_calls/0/function/name", wantErr: `openai: /choices/0/message/tool_calls/0/function/name: name must be a string, not an array`},
		{format: "openai-stream", auto: true, doc: "data: {\"object\":\"chat.completion.chunk\",\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":5,\"arguments\":\"\"}}]}}]}\n\n",
			wantPtr: "/choices/0/delta/tool_calls/0/function/name", wantErr: `openai-stream: line 1: /choices/0/delta/tool_calls/0/function/name: name must be a string, not a number`},
		{format: "openai-stream", auto: true, doc: "data: {\"object\":\"chat.completion.chunk\",\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"a\",\"arguments\":5}}]}}]}\n\n",
			wantPtr: "/choices/0/delta/tool_calls/0/function/arguments", wantErr: `openai-stream: line 1: /choices/0/delta/tool_calls/0/function/arguments: arguments must be a string or an object, not a number`},
		{format: "openai-stream", auto: true, doc: "data: {\"object\":\"chat.completion.chunk\",\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":\"x\"}}]}\n\n",
			wantPtr: "/choices/0/delta/tool_calls", wantErr: `openai-stream: line 1: /choices/0/delta/tool_calls: tool_calls must be an array, not a string`},

		{format: "langchain", auto: true, doc: `[{"type":"human","content":"q"},{"type":"ai","content":"","tool_calls":"x"}]`,
			wantPtr: "/1/tool_calls", wantErr: `langchain: /1/tool_calls: tool_calls must be an array, not a string`},
		{format: "langchain", auto: true, doc: `[{"type":"ai","content":"","tool_calls":[{"name":5,"args":{},"id":"a"}]}]`,
			wantPtr: "/0/tool_calls/0/name", wantErr: `langchain: /0/tool_calls/0/name: name must be a string, not a number`},
		{format: "langchain", auto: true, doc: `[{"type":"ai","content":"","invalid_tool_calls":{}}]`,
			wantPtr: "/0/invalid_tool_calls", wantErr: `langchain: /0/invalid_tool_calls: invalid_tool_calls must be an array, not an object`},
		{format: "langchain", auto: true, doc: `[{"lc":1,"type":"constructor","id":["langchain_core","messages","AIMessage"],"kwargs":{"content":"","tool_calls":[{"name":"a","args":{},"id":true}]}}]`,
			wantPtr: "/0/kwargs/tool_calls/0/id", wantErr: `langchain: /0/kwargs/tool_calls/0/id: id must be a string or a number, not a boolean`},
		{format: "openai-responses", auto: true, doc: `{"object":"response","output":"x"}`,
			wantPtr: "/output", wantErr: `openai-responses: /output: output must be an array of items, not a string`},
		{format: "openai-responses", doc: `[{"object":"response","output":{}}]`,
			wantPtr: "/0/output", wantErr: `openai-responses: /0/output: output must be an array of items, not an object`},
		{format: "openai-responses", auto: true, doc: `[{"role":"user","content":"q"},{"type":"function_call","call_id":"c1","name":5,"arguments":"{}"}]`,
			wantPtr: "/1/name", wantErr: `openai-responses: /1/name: name must be a string, not a number`},
		{format: "openai-responses", doc: `[{"type":"function_call","call_id":1,"name":"a","arguments":"{}"}]`,
			wantPtr: "/0/call_id", wantErr: `openai-responses: /0/call_id: call_id must be a string, not a number`},
		{format: "openai-responses", doc: `[{"type":"custom_tool_call","call_id":"c1","name":"a","input":{}}]`,
			wantPtr: "/0/input", wantErr: `openai-responses: /0/input: input must be a string, not an object`},
		{format: "openai-responses", auto: true, doc: `[{"type":"function_call_output","call_id":{},"output":"r"}]`,
			wantPtr: "/0/call_id", wantErr: `openai-responses: /0/call_id: call_id must be a string, not an object`},
		{format: "openai-responses-stream", auto: true, doc: "data: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"id\":\"fc\",\"call_id\":\"c\",\"name\":5,\"arguments\":\"\"}}\n\n",
			wantPtr: "/item/name", wantErr: `openai-responses-stream: line 1: /item/name: name must be a string, not a number`},
		{format: "openai-responses-stream", auto: true, doc: "data: {\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc\",\"delta\":5}\n\n",
			wantPtr: "/delta", wantErr: `openai-responses-stream: line 1: /delta: delta must be a string, not a number`},

		{format: "anthropic", auto: true, doc: `[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":5,"input":{}}]}]`,
			wantPtr: "/0/content/0/name", wantErr: `anthropic: /0/content/0/name: name must be a string, not a number`},
		{format: "anthropic", auto: true, doc: `[{"role":"assistant","content":[{"type":"tool_use","id":7,"name":"a","input":{}}]}]`,
			wantPtr: "/0/content/0/id", wantErr: `anthropic: /0/content/0/id: id must be a string, not a number`},
		{format: "anthropic", auto: true, doc: `[{"role":"user","content":[{"type":"tool_result","tool_use_id":["t1"],"content":"r"}]}]`,
			wantPtr: "/0/content/0/tool_use_id", wantErr: `anthropic: /0/content/0/tool_use_id: tool_use_id must be a string, not an array`},
		{format: "anthropic-stream", auto: true, doc: "{\"type\":\"message_start\",\"message\":{\"role\":\"assistant\",\"content\":[]}}\n{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"a\",\"input\":{}}}\n{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":5}}\n",
			wantPtr: "/delta/partial_json", wantErr: `anthropic-stream: line 3: /delta/partial_json: partial_json must be a string, not a number`},
		{format: "anthropic-stream", auto: true, doc: "{\"type\":\"message_start\",\"message\":{\"role\":\"assistant\",\"content\":[]}}\n{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":null,\"input\":{}}}\n{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":{},\"input\":{}}}\n",
			wantPtr: "/content_block/name", wantErr: `anthropic-stream: line 3: /content_block/name: name must be a string, not an object`},
		{format: "gemini", auto: true, doc: `[{"role":"model","parts":[{"functionCall":{"name":5,"args":{}}}]}]`,
			wantPtr: "/0/parts/0/functionCall/name", wantErr: `gemini: /0/parts/0/functionCall/name: name must be a string, not a number`},
		{format: "gemini", doc: `[{"role":"model","parts":[{"function_call":"a"}]}]`,
			wantPtr: "/0/parts/0/function_call", wantErr: `gemini: /0/parts/0/function_call: function_call must be an object, not a string`},
		{format: "gemini", auto: true, doc: `{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"a","id":{},"response":{}}}]}]}`,
			wantPtr: "/contents/0/parts/0/functionResponse/id", wantErr: `gemini: /contents/0/parts/0/functionResponse/id: id must be a string or a number, not an object`},
		{format: "gemini-stream", auto: true, doc: `[{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":false,"args":{}}}]},"finishReason":"STOP"}]}]`,
			wantPtr: "/0/candidates/0/content/parts/0/functionCall/name", wantErr: `gemini-stream: /0/candidates/0/content/parts/0/functionCall/name: name must be a string, not a boolean`},
		{format: "google-adk", doc: `[{"author":5,"invocationId":"e-1","content":{"role":"model","parts":[{"functionCall":{"name":"a","args":{}}}]}}]`,
			wantPtr: "/0/author", wantErr: `google-adk: /0/author: author must be a string, not a number`},
		{format: "google-adk", doc: `{"author":[],"invocationId":"e-1"}`,
			wantPtr: "/author", wantErr: `google-adk: /author: author must be a string, not an array`},
		{format: "google-adk", auto: true, doc: `[{"author":"a","invocationId":"e-1","content":{"role":"model","parts":[{"functionCall":{"id":"c","name":5,"args":{}}}]}}]`,
			wantPtr: "/0/content/parts/0/functionCall/name", wantErr: `google-adk: /0/content/parts/0/functionCall/name: name must be a string, not a number`},

		{format: "mcp", auto: true, doc: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":\"x\"}\n",
			wantPtr: "/params", wantErr: `mcp: /params: params must be an object, not a string`},
		{format: "mcp", auto: true, doc: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":5,\"arguments\":{}}}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}\n",
			wantPtr: "/params/name", wantErr: `mcp: line 1: /params/name: name must be a string, not a number`},
		{format: "mcp", auto: true, doc: `[{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{"name":"a","arguments":{}}}]`,
			wantPtr: "/0/id", wantErr: `mcp: /0/id: id must be a string or a number, not an object`},
		{format: "mcp-log", auto: true, doc: `{"direction":"client_to_server","message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}}`,
			wantPtr: "/message/params", wantErr: `mcp-log: /message/params: params must be an object, not an array`},
		{format: "langsmith", auto: true, doc: `{"run_type":"chain","inputs":{},"child_runs":[{"run_type":"tool","name":5,"inputs":{"q":1},"child_runs":[]}]}`,
			wantPtr: "/child_runs/0/name", wantErr: `langsmith: /child_runs/0/name: name must be a string, not a number`},
		{format: "langsmith", auto: true, doc: `{"run_type":"tool","name":"a","inputs":{},"extra":{"tool_call_id":{}}}`,
			wantPtr: "/extra/tool_call_id", wantErr: `langsmith: /extra/tool_call_id: tool_call_id must be a string or a number, not an object`},

		{format: "ai-sdk", auto: true, doc: `[{"role":"assistant","content":[{"type":"tool-call","toolCallId":"c1","toolName":5,"input":{}}]}]`,
			wantPtr: "/0/content/0/toolName", wantErr: `ai-sdk: /0/content/0/toolName: toolName must be a string, not a number`},
		{format: "ai-sdk", doc: `[{"role":"tool","content":[{"type":"tool-result","toolCallId":7,"toolName":"a","output":{"type":"text","value":"r"}}]}]`,
			wantPtr: "/0/content/0/toolCallId", wantErr: `ai-sdk: /0/content/0/toolCallId: toolCallId must be a string, not a number`},
		{format: "ai-sdk", auto: true, doc: `[{"content":[{"type":"tool-call","toolCallId":"c1","toolName":null,"input":{}},{"type":"tool-result","toolCallId":["c1"],"output":"r"}],"finishReason":"tool-calls"}]`,
			wantPtr: "/0/content/1/toolCallId", wantErr: `ai-sdk: /0/content/1/toolCallId: toolCallId must be a string, not an array`},
		{format: "ai-sdk", auto: true, doc: `[{"toolCalls":[{"toolCallId":"c1","toolName":"a","args":{}}],"toolResults":[{"toolCallId":1,"result":"r"}],"text":""}]`,
			wantPtr: "/0/toolResults/0/toolCallId", wantErr: `ai-sdk: /0/toolResults/0/toolCallId: toolCallId must be a string, not a number`},
		{format: "ai-sdk", auto: true, doc: "data: {\"type\":\"start\"}\n\ndata: {\"type\":\"tool-input-start\",\"toolCallId\":\"c1\",\"toolName\":5}\n\n",
			wantPtr: "/toolName", wantErr: `ai-sdk: line 3: /toolName: toolName must be a string, not a number`},
		{format: "ai-sdk", auto: true, doc: "data: {\"type\":\"start\"}\n\ndata: {\"type\":\"tool-input-start\",\"toolCallId\":\"c1\",\"toolName\":\"a\"}\n\ndata: {\"type\":\"tool-input-delta\",\"toolCallId\":\"c1\",\"inputTextDelta\":{}}\n\n",
			wantPtr: "/inputTextDelta", wantErr: `ai-sdk: line 5: /inputTextDelta: inputTextDelta must be a string, not an object`},

		{format: "openai-agents", auto: true, doc: `[{"type":"function_call","callId":"c1","name":5,"arguments":"{}"}]`,
			wantPtr: "/0/name", wantErr: `openai-agents: /0/name: name must be a string, not a number`},
		{format: "openai-agents", auto: true, doc: `[{"type":"function_call_result","callId":{},"name":"a","output":{"type":"text","text":"r"}}]`,
			wantPtr: "/0/callId", wantErr: `openai-agents: /0/callId: callId must be a string or a number, not an object`},
		{format: "openai-agents", auto: true, doc: `[{"type":"tool_call_item","rawItem":{"type":"function_call","callId":"c1","name":"a","arguments":"{}"}},{"type":"tool_call_output_item","rawItem":{"type":"function_call_result","callId":true,"output":"r"}}]`,
			wantPtr: "/1/rawItem/callId", wantErr: `openai-agents: /1/rawItem/callId: callId must be a string or a number, not a boolean`},
		{format: "openai-agents", auto: true, doc: `{"data":[{"object":"trace.span","id":"s1","trace_id":"t1","span_data":{"type":"function","name":[],"input":"{}","output":"r"}}]}`,
			wantPtr: "/data/0/span_data/name", wantErr: `openai-agents: /data/0/span_data/name: name must be a string, not an array`},

		{format: "pydantic-ai", auto: true, doc: `[{"kind":"response","parts":[{"part_kind":"tool-call","tool_name":5,"args":{},"tool_call_id":"c1"}]}]`,
			wantPtr: "/0/parts/0/tool_name", wantErr: `pydantic-ai: /0/parts/0/tool_name: tool_name must be a string, not a number`},
		{format: "pydantic-ai", auto: true, doc: `[{"kind":"request","parts":[{"part_kind":"tool-return","tool_name":"a","content":"r","tool_call_id":1}]}]`,
			wantPtr: "/0/parts/0/tool_call_id", wantErr: `pydantic-ai: /0/parts/0/tool_call_id: tool_call_id must be a string, not a number`},
		{format: "otel", auto: true, doc: `{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":"01","name":"execute_tool a","attributes":"x"}]}]}]}`,
			wantPtr: "/resourceSpans/0/scopeSpans/0/spans/0/attributes", wantErr: `otel: /resourceSpans/0/scopeSpans/0/spans/0/attributes: attributes must be an array, not a string`},
		{format: "otel", auto: true, doc: `[{"spanId":"01","name":"execute_tool a","attributes":["gen_ai.tool.name"]}]`,
			wantPtr: "/0/attributes/0", wantErr: `otel: /0/attributes/0: an attribute must be an object, not a string`},
		{format: "otel", auto: true, doc: `[{"spanId":"01","name":"execute_tool a","attributes":[{"key":5,"value":{"stringValue":"a"}}]}]`,
			wantPtr: "/0/attributes/0/key", wantErr: `otel: /0/attributes/0/key: key must be a string, not a number`},
		{format: "otel", auto: true, doc: `[{"spanId":"01","name":{},"attributes":[]}]`,
			wantPtr: "/0/name", wantErr: `otel: /0/name: name must be a string, not an object`},
		{format: "openai-responses-stream", auto: true, doc: "data: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":\"x\"}\n\n",
			wantPtr: "/item", wantErr: `openai-responses-stream: line 1: /item: item must be an object, not a string`},
		{format: "openai-responses-stream", auto: true, doc: "data: {\"type\":\"response.completed\",\"response\":{\"output\":{}}}\n\n",
			wantPtr: "/response/output", wantErr: `openai-responses-stream: line 1: /response/output: output must be an array of items, not an object`},
		{format: "anthropic-stream", auto: true, doc: "{\"type\":\"message_start\",\"message\":{\"role\":\"assistant\",\"content\":[]}}\n{\"type\":\"content_block_start\",\"index\":0,\"content_block\":\"tool_use\"}\n",
			wantPtr: "/content_block", wantErr: `anthropic-stream: line 2: /content_block: content_block must be an object, not a string`},
		{format: "anthropic-stream", auto: true, doc: "{\"type\":\"message_start\",\"message\":{\"role\":\"assistant\",\"content\":{}}}\n",
			wantPtr: "/message/content", wantErr: `anthropic-stream: /message/content: content must be an array of blocks, not an object`},
		{format: "gemini-stream", auto: true, doc: `[{"candidates":[{"content":{"role":"model","parts":{}},"finishReason":"STOP"}]}]`,
			wantPtr: "/0/candidates/0/content/parts", wantErr: `gemini-stream: /0/candidates/0/content/parts: parts must be an array, not an object`},
		{format: "gemini-stream", auto: true, doc: `[{"candidates":[{"content":"x","finishReason":"STOP"}]}]`,
			wantPtr: "/0/candidates/0/content", wantErr: `gemini-stream: /0/candidates/0/content: content must be an object, not a string`},
		{format: "otel", auto: true, doc: `[{"spanId":"01","name":"execute_tool a","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"gen_ai.tool.name","value":{"intValue":"5"}}]}]`,
			wantPtr: "/0/attributes/1/value", wantErr: `otel: /0/attributes/1/value: the gen_ai.tool.name attribute must be a string, not a number`},
		{format: "otel", auto: true, doc: `[{"spanId":"01","name":"t","attributes":[{"key":"tool.id","value":{"stringValue":{}}}]}]`,
			wantPtr: "/0/attributes/0/value/stringValue", wantErr: `otel: /0/attributes/0/value/stringValue: the tool.id attribute must be a string, not an object`},
		{format: "otel", auto: true, doc: `[{"name":"execute_tool a","context":{"trace_id":"0x1","span_id":"0x2"},"attributes":{"gen_ai.operation.name":"execute_tool","gen_ai.tool.name":["a"]}}]`,
			wantPtr: "/0/attributes/gen_ai.tool.name", wantErr: `otel: /0/attributes/gen_ai.tool.name: the gen_ai.tool.name attribute must be a string, not an array`},
		{format: "openai-agents", auto: true, doc: "{\"type\":\"raw_model_stream_event\",\"data\":{\"type\":\"model\",\"event\":{\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"id\":\"fc\",\"call_id\":\"c\",\"name\":5,\"arguments\":\"\"}}}}\n",
			wantPtr: "/data/event/item/name", wantErr: `openai-agents: /data/event/item/name: name must be a string, not a number`},
	}
	for _, tt := range tests {
		formats := []string{tt.format}
		if tt.auto {
			formats = append(formats, "auto")
		}
		for _, f := range formats {
			t.Run(f+"/"+tt.doc, func(t *testing.T) {
				got, err := Parse([]byte(tt.doc), f)
				if err == nil {
					t.Fatalf("Parse(%s) = %d calls %+v, want error %q", f, len(got.Trace.Calls), got.Trace.Calls, tt.wantErr)
				}
				var se *ShapeError
				if !errors.As(err, &se) || !errors.Is(err, engine.ErrInvalidTrace) {
					t.Fatalf("Parse(%s) error %#v is not a *ShapeError matching ErrInvalidTrace", f, err)
				}
				if got := err.Error(); got != "invalid trace: "+tt.wantErr {
					t.Errorf("Parse(%s) error\n got %s\nwant invalid trace: %s", f, got, tt.wantErr)
				}
				if se.Pointer != tt.wantPtr || se.Format != tt.format {
					t.Errorf("Parse(%s) error at %s %q, want %s %q", f, se.Format, se.Pointer, tt.format, tt.wantPtr)
				}
			})
		}
	}
}
