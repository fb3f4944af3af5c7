package format

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/engine"
)

// Documents of one format each, used as foreign documents for the others.
const (
	plainList       = `[{"tool":"a","args":{"x":2}}]`
	openAIList      = `[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"a","arguments":"{}"}}]}]`
	openAISystem    = `[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]`
	anthropicConv   = `[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"a","input":{}}]}]`
	anthropicText   = `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn"}`
	geminiList      = `[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"name":"a","args":{}}}]}]`
	responsesList   = `[{"role":"user","content":"hi"},{"type":"function_call","call_id":"c1","name":"a","arguments":"{}"}]`
	chatCompletion  = `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}]}`
	anthropicEvents = "{\"type\":\"message_start\",\"message\":{\"role\":\"assistant\",\"content\":[]}}\n{\"type\":\"message_stop\"}\n"
	responsesEvents = "data: {\"type\":\"response.created\",\"response\":{}}\n\ndata: {\"type\":\"response.completed\",\"response\":{\"output\":[]}}\n\n"
	mcpLog          = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\",\"arguments\":{}}}\n"
)

// TestForcedFormat checks the rule of every adapter for a forced format:
// a document of the format's shape reads, even with no tool calls; a
// document of another format is a *ShapeError naming the format and the
// place that does not fit, never a trace with 0 calls.
func TestForcedFormat(t *testing.T) {
	hi := "hi"
	tests := []struct {
		format string
		doc    string
		want   *engine.Trace // nil: wantErr
		// wantErr is the exact error text.
		wantErr string
	}{
		// Fits, no tool calls.
		{format: "plain", doc: `{"calls": [], "final_answer": "hi"}`, want: &engine.Trace{FinalAnswer: &hi}},
		{format: "plain", doc: `[]`, want: &engine.Trace{}},
		{format: "openai", doc: `[{"role":"user","content":"q"},{"role":"assistant","content":"hi"}]`, want: &engine.Trace{FinalAnswer: &hi}},
		{format: "openai", doc: chatCompletion, want: &engine.Trace{FinalAnswer: &hi}},
		{format: "openai", doc: `{"model":"m","messages":[{"role":"developer","content":[{"type":"text","text":"q"}]}]}`, want: &engine.Trace{}},
		{format: "openai-stream", doc: "data: {\"object\":\"chat.completion.chunk\",\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: {\"id\":\"c1\",\"choices\":[],\"usage\":{}}\n\ndata: [DONE]\n\n", want: &engine.Trace{FinalAnswer: &hi}},
		{format: "openai-responses", doc: `{"object":"response","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]},{"type":"some_future_item"}]}`, want: &engine.Trace{FinalAnswer: &hi}},
		{format: "openai-responses", doc: `[{"role":"user","content":"q"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]}]`, want: &engine.Trace{FinalAnswer: &hi}},
		{format: "openai-responses-stream", doc: `{"type":"response.completed","response":{"output":[{"type":"message","id":"m1","role":"assistant","content":[{"type":"output_text","text":"hi"}]}]}}`, want: &engine.Trace{FinalAnswer: &hi}},
		{format: "anthropic", doc: anthropicText, want: &engine.Trace{FinalAnswer: &hi}},
		{format: "anthropic", doc: `{"system":"be brief","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"hi"}]}`, want: &engine.Trace{FinalAnswer: &hi}},
		{format: "anthropic-stream", doc: "{\"type\":\"message_start\",\"message\":{\"role\":\"assistant\",\"content\":[]}}\n{\"type\":\"ping\"}\n{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n{\"type\":\"message_stop\"}\n", want: &engine.Trace{FinalAnswer: &hi}},
		{format: "gemini", doc: `{"contents":[{"role":"user","parts":[{"text":"q"}]},{"role":"model","parts":[{"text":"hi"}]}]}`, want: &engine.Trace{FinalAnswer: &hi}},
		{format: "gemini", doc: `{"candidates":[{"finishReason":"SAFETY"}],"promptFeedback":{}}`, want: &engine.Trace{}},
		{format: "gemini-stream", doc: `[{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}]},{"usageMetadata":{}}]`, want: &engine.Trace{FinalAnswer: &hi}},
		{format: "mcp", doc: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n", want: &engine.Trace{}},
		{format: "langchain", doc: `[{"type":"human","content":"q"},{"type":"ai","content":"hi"}]`, want: &engine.Trace{FinalAnswer: &hi}},
		{format: "langchain", doc: `[{"messages":[]},{"messages":[{"type":"ai","content":"hi"}]}]`, want: &engine.Trace{FinalAnswer: &hi}},
		{format: "otel", doc: `{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":"01","name":"chat m","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}}]}]},{}]}]}`, want: &engine.Trace{}},
		{format: "otel", doc: `{"spanId":"01","name":"work"}`, want: &engine.Trace{}},

		// Does not fit.
		{format: "plain", doc: openAIList, wantErr: `plain: /0: the call has no "tool"`},
		{format: "openai", doc: plainList, wantErr: `openai: /0: not an OpenAI chat message or chat.completion: it has no "role" (found an object with keys args, tool)`},
		{format: "openai", doc: anthropicConv, wantErr: `openai: /1/content/0/type: not an OpenAI content part type (text, image_url, input_audio, file or refusal) (found "tool_use")`},
		{format: "openai", doc: anthropicText, wantErr: `openai: /type: an OpenAI chat message has no "type" (Anthropic messages and OpenAI Responses items have one) (found "message")`},
		{format: "openai", doc: geminiList, wantErr: `openai: /0: an OpenAI chat message needs "content" (found an object with keys parts, role)`},
		{format: "openai", doc: responsesList, wantErr: `openai: /1: not an OpenAI chat message or chat.completion: it has no "role" (found an object with keys arguments, call_id, name, type)`},
		{format: "openai", doc: `{"contents":[]}`, wantErr: `openai: /: expected a chat.completion object, a list of messages, a message or a tool call (found an object with keys contents)`},
		{format: "openai-stream", doc: plainList, wantErr: `openai-stream: /0: not a chat.completion.chunk: it has no "object" and no "choices" array (found an object with keys args, tool)`},
		{format: "openai-stream", doc: chatCompletion, wantErr: `openai-stream: /object: not a chat.completion.chunk: "object" must be "chat.completion.chunk" (found "chat.completion")`},
		{format: "openai-stream", doc: `{"choices":[{"message":{"role":"assistant"}}]}`, wantErr: `openai-stream: /choices/0: not a chat.completion.chunk choice: it has no "delta" object (found an object with keys message)`},
		{format: "openai-responses", doc: plainList, wantErr: `openai-responses: /0: not an OpenAI Responses item: it has no "type" and no "role" (found an object with keys args, tool)`},
		{format: "openai-responses", doc: openAIList, wantErr: `openai-responses: /1/tool_calls: an OpenAI Responses message has no "tool_calls" (Chat Completions messages do)`},
		{format: "openai-responses", doc: anthropicConv, wantErr: `openai-responses: /1/content/0: not an OpenAI Responses content part (input_text, output_text, refusal, input_image, input_file or input_audio) (found an object with keys id, input, name, type)`},
		{format: "openai-responses", doc: "[" + strings.ReplaceAll(strings.TrimSpace(anthropicEvents), "\n", ",") + "]", wantErr: `openai-responses: /0/type: not an OpenAI Responses item type (found "message_start")`},
		{format: "openai-responses", doc: `{"input":[{"role":"tool","content":"x"}]}`, wantErr: `openai-responses: /input/0/role: not an OpenAI Responses message: "role" must be user, assistant, system or developer (found "tool")`},
		{format: "openai-responses-stream", doc: plainList, wantErr: `openai-responses-stream: /0: not an OpenAI Responses stream event: it has no string "type" (found an object with keys args, tool)`},
		{format: "openai-responses-stream", doc: anthropicEvents, wantErr: `openai-responses-stream: line 1: /type: not an OpenAI Responses stream event: "type" must start with "response." (or be "error") (found "message_start")`},
		{format: "anthropic", doc: plainList, wantErr: `anthropic: /0: not an Anthropic message: it has no "role" (found an object with keys args, tool)`},
		{format: "anthropic", doc: openAIList, wantErr: `anthropic: /1/tool_calls: an Anthropic message has no "tool_calls" (OpenAI chat messages do)`},
		{format: "anthropic", doc: openAISystem, wantErr: `anthropic: /0/role: not an Anthropic message: "role" must be "user" or "assistant" (found "system")`},
		{format: "anthropic", doc: geminiList, wantErr: `anthropic: /0: an Anthropic message needs "content" (found an object with keys parts, role)`},
		{format: "anthropic", doc: `[{"role":"user","content":[{"type":"image_url","image_url":{"url":"u"}}]}]`, wantErr: `anthropic: /0/content/0/type: not an Anthropic content block type (an OpenAI part type) (found "image_url")`},
		{format: "anthropic", doc: chatCompletion, wantErr: `anthropic: /: expected a message, a list of messages or a tool_use block (found an object with keys choices, object)`},
		{format: "anthropic-stream", doc: plainList, wantErr: `anthropic-stream: /0: not an Anthropic stream event: it has no string "type" (found an object with keys args, tool)`},
		{format: "anthropic-stream", doc: responsesEvents, wantErr: `anthropic-stream: line 1: /type: not an Anthropic stream event type (message_start, content_block_start, content_block_delta, content_block_stop, message_delta, message_stop, ping or error) (found "response.created")`},
		{format: "gemini", doc: plainList, wantErr: `gemini: /0: not a Gemini Content: it has no "parts" (found an object with keys args, tool)`},
		{format: "gemini", doc: openAIList, wantErr: `gemini: /0: not a Gemini Content: it has no "parts" (found an object with keys content, role)`},
		{format: "gemini", doc: `{"contents":[{"role":"user","parts":["hi"]}]}`, wantErr: `gemini: /contents/0/parts/0: a part must be an object, not a string`},
		{format: "gemini", doc: anthropicText, wantErr: `gemini: /: expected a response with candidates, an object with contents, a Content or a functionCall part (found an object with keys content, id, role, stop_reason, type)`},
		{format: "gemini-stream", doc: plainList, wantErr: `gemini-stream: /0: not a Gemini GenerateContentResponse chunk: it has no "candidates" (found an object with keys args, tool)`},
		{format: "gemini-stream", doc: geminiList, wantErr: `gemini-stream: /0: not a Gemini GenerateContentResponse chunk: it has no "candidates" (found an object with keys parts, role)`},
		{format: "mcp", doc: plainList, wantErr: `mcp: /0: not a JSON-RPC 2.0 message: it has no "jsonrpc" (found an object with keys args, tool)`},
		{format: "mcp", doc: `{"jsonrpc":"1.0","id":1,"method":"tools/call"}`, wantErr: `mcp: /jsonrpc: not a JSON-RPC 2.0 message: "jsonrpc" must be "2.0" (found "1.0")`},
		{format: "mcp", doc: mcpLog + "{\"id\":1,\"result\":{}}\n", wantErr: `mcp: line 2: not a JSON-RPC 2.0 message: it has no "jsonrpc" (found an object with keys id, result)`},
		{format: "langchain", doc: plainList, wantErr: `langchain: /0: not a LangChain message or a LangGraph updates-stream chunk (found an object with keys args, tool)`},
		{format: "langchain", doc: responsesList, wantErr: `langchain: /1: not a LangChain message or a LangGraph updates-stream chunk (found an object with keys arguments, call_id, name, type)`},
		{format: "langchain", doc: geminiList, wantErr: `langchain: /0: not a LangChain message or a LangGraph updates-stream chunk (found an object with keys parts, role)`},
		{format: "langchain", doc: `[{"messages":[]},{"tool":"a"}]`, wantErr: `langchain: /1: not a LangGraph state: it has no "messages" array (other records are states) (found an object with keys tool)`},
		{format: "otel", doc: plainList, wantErr: `otel: /0: not OTLP/JSON: expected an export with "resourceSpans" or a span with "spanId" (found an object with keys args, tool)`},
		{format: "otel", doc: mcpLog, wantErr: `otel: /: not OTLP/JSON: expected an export with "resourceSpans" or a span with "spanId" (found an object with keys id, jsonrpc, method, params)`},
		{format: "otel", doc: `{"resourceSpans":[{"scopeSpans":{"spans":[]}}]}`, wantErr: `otel: /resourceSpans/0/scopeSpans: scopeSpans must be an array, not an object`},

		// The framework formats (issue 12): fits with no calls, then foreign.
		{format: "pydantic-ai", doc: `[{"kind":"request","parts":[{"part_kind":"user-prompt","content":"q"}]},{"kind":"response","parts":[{"part_kind":"text","content":"hi"}]}]`, want: &engine.Trace{FinalAnswer: &hi}},
		{format: "ai-sdk", doc: `[{"content":[{"type":"text","text":"hi"}],"finishReason":"stop"}]`, want: &engine.Trace{FinalAnswer: &hi}},
		{format: "ai-sdk", doc: `[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"text","text":"hi"}]}]`, want: &engine.Trace{FinalAnswer: &hi}},
		{format: "openai-agents", doc: `{"data":[{"object":"trace","id":"trace_1","workflow_name":"Agent workflow"}]}`, want: &engine.Trace{}},
		{format: "openai-agents", doc: `[{"type":"message","role":"user","content":"q"},{"type":"message_output_item","rawItem":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]}}]`, want: &engine.Trace{FinalAnswer: &hi}},
		{format: "langsmith", doc: `{"run_type":"chain","inputs":{"q":"x"},"outputs":{"output":"hi"},"child_runs":[]}`, want: &engine.Trace{FinalAnswer: &hi}},
		{format: "mcp-log", doc: `{"direction":"client_to_server","message":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}}`, want: &engine.Trace{}},
		{format: "google-adk", doc: `[{"author":"user","invocationId":"e-1","content":{"role":"user","parts":[{"text":"q"}]}},{"author":"a","invocationId":"e-1","content":{"role":"model","parts":[{"text":"hi"}]}}]`, want: &engine.Trace{FinalAnswer: &hi}},
		{format: "pydantic-ai", doc: geminiList, wantErr: `pydantic-ai: /0: not a Pydantic AI message: it has no "kind" (found an object with keys parts, role)`},
		{format: "pydantic-ai", doc: `[{"kind":"response","parts":[{"part_kind":"tool_use"}]}]`, wantErr: `pydantic-ai: /0/parts/0/part_kind: not a Pydantic AI response part kind (found "tool_use")`},
		{format: "ai-sdk", doc: anthropicConv, wantErr: `ai-sdk: /1/content/0/type: not an AI SDK content part type (text, reasoning, image, file, tool-call, tool-result, ...) (found "tool_use")`},
		{format: "ai-sdk", doc: openAIList, wantErr: `ai-sdk: /1/tool_calls: an AI SDK ModelMessage has no "tool_calls" (it is another SDK's message)`},
		{format: "openai-agents", doc: plainList, wantErr: `openai-agents: /0: not an OpenAI Agents SDK item: it has no "type" or "role" (found an object with keys args, tool)`},
		{format: "openai-agents", doc: anthropicConv, wantErr: `openai-agents: /1/content/0: not an OpenAI Agents SDK content part (input_text, output_text, refusal, input_image, input_file, audio, ...) (found an object with keys id, input, name, type)`},
		{format: "langsmith", doc: plainList, wantErr: `langsmith: /0: not a LangSmith run, run list or /runs/batch request body (found an object with keys args, tool)`},
		{format: "mcp-log", doc: mcpLog, wantErr: `mcp-log: /: not an MCP log record: it needs a JSON-RPC 2.0 "message" (found an object with keys id, jsonrpc, method, params)`},
		{format: "mcp-log", doc: `{"message":{"jsonrpc":"2.0","id":1,"method":"tools/call"}}`, wantErr: `mcp-log: /: an MCP log record must say who sent the message ("direction": "client_to_server" or "server_to_client", or "origin": "client" or "server") (found an object with keys message)`},
		{format: "google-adk", doc: geminiList, wantErr: `google-adk: /0: not a Google ADK event: it needs "author" and "invocationId" (or "actions") (found an object with keys parts, role)`},
	}
	fits, foreign := map[string]int{}, map[string]int{}
	for _, tt := range tests {
		if tt.want != nil {
			fits[tt.format]++
		} else {
			foreign[tt.format]++
		}
		t.Run(tt.format+"/"+tt.doc, func(t *testing.T) {
			got, err := Parse([]byte(tt.doc), tt.format)
			if tt.want == nil {
				if err == nil {
					t.Fatalf("Parse(%s) = %d calls, want error %q", tt.format, len(got.Trace.Calls), tt.wantErr)
				}
				var se *ShapeError
				if !errors.As(err, &se) || se.Format != tt.format || !errors.Is(err, engine.ErrInvalidTrace) {
					t.Errorf("Parse(%s) error %#v is not a *ShapeError for %s matching ErrInvalidTrace", tt.format, err, tt.format)
				}
				if diff := cmp.Diff("invalid trace: "+tt.wantErr, err.Error()); diff != "" {
					t.Errorf("Parse(%s) error mismatch (-want +got):\n%s", tt.format, diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%s) error: %v", tt.format, err)
			}
			want := *tt.want
			want.Calls = []engine.ToolCall{}
			if diff := cmp.Diff(want, got.Trace); diff != "" {
				t.Errorf("Parse(%s) trace mismatch (-want +got):\n%s", tt.format, diff)
			}
		})
	}
	for _, name := range Names() {
		if fits[name] == 0 || foreign[name] == 0 {
			t.Errorf("format %s has %d fitting and %d foreign cases, want at least one of each", name, fits[name], foreign[name])
		}
	}
}
