package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// benchSize is the size of the generated benchmark traces: 1 MiB.
const benchSize = 1 << 20

// openAIMessages generates an OpenAI Chat message list of about size bytes:
// turns of a user message, an assistant message with two parallel calls
// (JSON-string arguments with nested objects and arrays), two tool results
// and an assistant answer.
func openAIMessages(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`[{"role":"system","content":"You are a travel agent. Use the tools."}`)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `,{"role":"user","content":"Find flights from Paris to Tokyo on day %d for 2 people and check the weather."}`, i)
		fmt.Fprintf(&b, `,{"role":"assistant","content":null,"tool_calls":[`+
			`{"id":"call_%da","type":"function","function":{"name":"search_flights","arguments":"{\"from\":\"CDG\",\"to\":\"NRT\",\"date\":\"2025-03-%02d\",\"passengers\":2,\"filters\":{\"cabin\":[\"economy\",\"premium\"],\"max_price\":1200.5}}"}},`+
			`{"id":"call_%db","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Tokyo\",\"days\":[1,2,3]}"}}]}`, i, i%28+1, i)
		fmt.Fprintf(&b, `,{"role":"tool","tool_call_id":"call_%da","content":"{\"flights\":[{\"id\":\"FL-%d\",\"price\":812.5},{\"id\":\"FL-%d\",\"price\":955}]}"}`, i, i, i+1)
		fmt.Fprintf(&b, `,{"role":"tool","tool_call_id":"call_%db","content":"Sunny, 18°C"}`, i)
		fmt.Fprintf(&b, `,{"role":"assistant","content":"FL-%d is the cheapest at €812.50; Tokyo will be sunny."}`, i)
	}
	b.WriteString("]")
	return b.Bytes()
}

// otlpTrace generates an OTLP/JSON export of about size bytes: per turn a
// chat span and two execute_tool spans with arguments and results.
func otlpTrace(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"agent"}}]},"scopeSpans":[{"scope":{"name":"genai"},"spans":[`)
	attr := func(k, v string) string {
		return fmt.Sprintf(`{"key":%q,"value":{"stringValue":%q}}`, k, v)
	}
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		t := 1731000000000000000 + int64(i)*1000000
		fmt.Fprintf(&b, `{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"c%015x","parentSpanId":"eee19b7ec3c1b174","name":"chat gpt-4o","kind":3,"startTimeUnixNano":"%d","endTimeUnixNano":"%d","attributes":[%s,%s],"status":{}}`,
			i, t, t+100, attr("gen_ai.operation.name", "chat"), attr("gen_ai.request.model", "gpt-4o"))
		fmt.Fprintf(&b, `,{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"a%015x","parentSpanId":"eee19b7ec3c1b174","name":"execute_tool search_flights","kind":1,"startTimeUnixNano":"%d","endTimeUnixNano":"%d","attributes":[%s,%s,%s,%s,%s],"status":{"code":1}}`,
			i, t+200, t+300, attr("gen_ai.operation.name", "execute_tool"), attr("gen_ai.tool.name", "search_flights"),
			attr("gen_ai.tool.call.id", fmt.Sprintf("call_%da", i)),
			attr("gen_ai.tool.call.arguments", `{"from":"CDG","to":"NRT","passengers":2,"filters":{"cabin":["economy"]}}`),
			attr("gen_ai.tool.call.result", fmt.Sprintf(`[{"id":"FL-%d","price":812.5}]`, i)))
		fmt.Fprintf(&b, `,{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"b%015x","parentSpanId":"eee19b7ec3c1b174","name":"execute_tool get_weather","kind":1,"startTimeUnixNano":"%d","endTimeUnixNano":"%d","attributes":[%s,%s,%s,%s],"status":{"code":2,"message":"timeout"}}`,
			i, t+200, t+400, attr("gen_ai.operation.name", "execute_tool"), attr("gen_ai.tool.name", "get_weather"),
			attr("gen_ai.tool.call.id", fmt.Sprintf("call_%db", i)), attr("gen_ai.tool.call.arguments", `{"city":"Tokyo"}`))
	}
	b.WriteString(`]}]}]}`)
	return b.Bytes()
}

// openAIStream generates an OpenAI Chat Completions SSE stream of about
// size bytes: one response whose text arrives a word per chunk, then
// parallel tool calls whose JSON arguments arrive in fragments.
func openAIStream(size int) []byte {
	var b bytes.Buffer
	chunk := func(delta string) {
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1731000000,"model":"gpt-4o","choices":[{"index":0,"delta":%s,"finish_reason":null}]}`+"\n\n", delta)
	}
	chunk(`{"role":"assistant","content":""}`)
	for _, w := range []string{"Let", " me", " search", " flights", " and", " check", " the", " weather."} {
		chunk(fmt.Sprintf(`{"content":%q}`, w))
	}
	for i := 0; b.Len() < size; i++ {
		chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":"call_%d","type":"function","function":{"name":"search_flights","arguments":""}}]}`, i, i))
		for _, frag := range []string{`{"from":`, ` "CDG", "to"`, `: "NRT", "date": "2025-03-`, fmt.Sprintf(`%02d", "passengers"`, i%28+1), `: 2, "filters": {"cabin": ["economy"]}}`} {
			chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%q}}]}`, i, frag))
		}
	}
	b.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1731000000,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n")
	return b.Bytes()
}

func benchParse(b *testing.B, data []byte, want string) {
	b.Helper()
	p, err := Parse(data, "auto")
	if err != nil {
		b.Fatal(err)
	}
	if p.Format != want || len(p.Trace.Calls) == 0 {
		b.Fatalf("Parse detected %q with %d calls, want %q with calls", p.Format, len(p.Trace.Calls), want)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, "auto"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseOpenAIMessages1MB measures detection and parsing of a 1 MiB
// OpenAI Chat message list.
func BenchmarkParseOpenAIMessages1MB(b *testing.B) {
	benchParse(b, openAIMessages(benchSize), "openai")
}

// BenchmarkParseOTLP1MB measures detection and parsing of a 1 MiB OTLP/JSON
// export.
func BenchmarkParseOTLP1MB(b *testing.B) {
	benchParse(b, otlpTrace(benchSize), "otel")
}

// BenchmarkParseOpenAIStream1MB measures detection and parsing of a 1 MiB
// OpenAI Chat Completions SSE stream.
func BenchmarkParseOpenAIStream1MB(b *testing.B) {
	benchParse(b, openAIStream(benchSize), "openai-stream")
}

// BenchmarkDecode1MB measures the JSON decoder alone on the OpenAI trace,
// for comparison with encoding/json (BenchmarkDecodeStd1MB).
func BenchmarkDecode1MB(b *testing.B) {
	data := openAIMessages(benchSize)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := readInput(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeStd1MB is encoding/json with UseNumber on the same input.
func BenchmarkDecodeStd1MB(b *testing.B) {
	data := openAIMessages(benchSize)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := stdDecode(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParsePerf is the trace's share of the user-path benchmarks
// (engine's BenchmarkUserFromBytes): detecting and reading the small,
// medium and large perf traces (plain call lists), against one
// encoding/json.Valid pass over the same bytes (json.Valid).
func BenchmarkParsePerf(b *testing.B) {
	for _, name := range []string{"small", "medium", "large"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "perf", name+"_trace.json"))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) { benchParse(b, data, "plain") })
		b.Run(name+"/json.Valid", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if !json.Valid(data) {
					b.Fatal("invalid")
				}
			}
		})
	}
}
