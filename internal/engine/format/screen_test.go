package format

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// unscreened returns a copy of r that asks every adapter's Detect in
// order: the plain detection the screens must agree with.
func unscreened(r *Registry) *Registry {
	c := *r
	c.screens = make([]screener, len(r.adapters))
	return &c
}

var plainBuiltin = unscreened(builtin)

// detectName is the adapter r detects for in and its reason.
func detectName(r *Registry, in *Input) (string, string) {
	a, why := r.detect(in)
	if a == nil {
		return "", ""
	}
	return a.Name(), why
}

// checkScreen is FuzzScreen's property: detection with the screens picks
// the same adapter with the same reason as asking every Detect in order,
// and Parse gives the same result or the same error, for the document
// and for it read as a value (ParseValue).
func checkScreen(t *testing.T, data []byte) {
	t.Helper()
	in, err := readInput(data)
	if err != nil {
		return
	}
	gotName, gotWhy := detectName(builtin, in)
	wantName, wantWhy := detectName(plainBuiltin, in)
	if gotName != wantName || gotWhy != wantWhy {
		t.Fatalf("detection of %q: screened %q (%s), every Detect %q (%s)", data, gotName, gotWhy, wantName, wantWhy)
	}
	same := func(what string, got, want *Parsed, gotErr, wantErr error) {
		t.Helper()
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Fatalf("%s of %q: screened error %v, every Detect %v", what, data, gotErr, wantErr)
		}
		if gotErr != nil {
			return
		}
		g, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		w, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(g, w) {
			t.Fatalf("%s of %q:\nscreened:     %s\nevery Detect: %s", what, data, g, w)
		}
	}
	got, gotErr := builtin.Parse(data, "auto")
	want, wantErr := plainBuiltin.Parse(data, "auto")
	same("Parse", got, want, gotErr, wantErr)
	if in.Form == FormJSON {
		got, gotErr = builtin.ParseValue(in.Value(), "auto")
		want, wantErr = plainBuiltin.ParseValue(in.Value(), "auto")
		same("ParseValue", got, want, gotErr, wantErr)
	}
}

// screenSeeds returns every example trace of testdata (formats and
// errors), the benchmark traces, and variants of the JSON ones: each
// record alone, the records as JSON Lines, and the list under
// "messages".
func screenSeeds(t testing.TB) [][]byte {
	t.Helper()
	var files []string
	for _, dir := range append(Names(), "errors") {
		m, err := filepath.Glob(filepath.Join("testdata", dir, "*"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	seeds := [][]byte{
		openAIMessages(4 << 10), otlpTrace(4 << 10), openAIStream(4 << 10),
		[]byte(`[]`), []byte(`{}`), []byte(`[[]]`), []byte(`[{}]`), []byte(`"x"`), []byte(`{"a":{"messages":[]}}`),
		[]byte(`[{"a":{"messages":[{"type":"ai","content":"x"}]}}]`), []byte(`[["updates",{"n":{"messages":[]}}]]`),
	}
	// One document per key a screen looks for.
	for _, s := range []string{
		`{"input":[{"type":"function_call","name":"f","arguments":"{}","call_id":"c"}]}`,
		`{"type":"custom","custom":{"name":"f","input":"x"}}`,
		`{"function":{"name":"f","arguments":"{}"}}`,
		`{"messages":[{"kind":"request","parts":[]}]}`,
		`{"messages":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}`,
		`{"finishReason":"stop","content":[]}`,
		`{"toolCalls":[],"toolResults":[]}`,
		`{"$schemaVersion":"1","currentAgent":{},"generatedItems":[]}`,
		`{"events":[{"author":"a","invocationId":"i"}],"id":"s"}`,
		`{"contents":[{"parts":[]}]}`, `{"functionCall":{"name":"f"}}`, `{"function_call":{"name":"f"}}`,
		`[{"candidates":[]},{"usageMetadata":{}}]`,
		`[{"run_type":"tool","inputs":{}}]`, `{"post":[{"id":"1","run_type":"tool","inputs":{}}]}`, `{"runs":[{"run_type":"tool","inputs":{}}]}`,
		`{"context":{"span_id":"x"},"name":"n"}`, `[{"spanId":"x","attributes":[]}]`,
		`[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x"}]}]`,
		`{"kind":"response","parts":[{"part_kind":"text","content":"x"}]}`,
		`[{"message":{"jsonrpc":"2.0","method":"tools/call","id":1},"direction":"c2s"}]`,
		`[{"jsonrpc":"2.0","method":"tools/call","id":1}]`,
		`{"object":"chat.completion.chunk","choices":[{"delta":{}}]}`,
		`{"type":"response.created"}`, `{"type":"message_start"}`, `{"type":"tool_call","name":"f"}`,
		`{"data":[{"object":"trace.span"}]}`, `{"output":[{"type":"function_call"}]}`,
		`[{"type":"text-delta"},{"type":"finish"}]`, `{"role":"assistant","content":[{"type":"tool_use","name":"f","id":"x","input":{}}]}`,
	} {
		seeds = append(seeds, []byte(s), []byte("["+s+"]"), []byte(s+"\n"+s))
	}
	for _, f := range files {
		if filepath.Ext(f) == ".golden" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, data)
		in, err := readInput(data)
		if err != nil || len(in.Records()) == 0 {
			continue
		}
		var lines []byte
		for i, r := range in.Records() {
			if i < 3 {
				seeds = append(seeds, []byte(r.Raw()))
			}
			lines = append(append(lines, r.Raw()...), '\n')
		}
		seeds = append(seeds, lines)
		if in.Form == FormJSON && in.Value().Kind() == jsondoc.Array {
			seeds = append(seeds, []byte(`{"messages":`+in.Value().Raw()+`}`))
		}
	}
	return seeds
}

// FuzzScreen compares detection with the adapters' screens (shape.go)
// with asking every adapter's Detect in order.
func FuzzScreen(f *testing.F) {
	for _, s := range screenSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(checkScreen)
}

// FuzzOpenAIMembers checks that readOpenAIMsg, one pass over a message's
// members, finds every member the OpenAI adapter reads as Get does (a
// repeated key's last value), for every object of the document.
func FuzzOpenAIMembers(f *testing.F) {
	addSeeds(f, "openai", "openai-stream")
	f.Add([]byte(`{"role":"user","role":"tool","content":1,"content":null,"type":{},"name":"n","tool_call_id":2,"audio":[],"refusal":"r","function_call":{},"tool_calls":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := jsondoc.Parse(data)
		if err != nil {
			return
		}
		var walk func(v jsondoc.Value)
		walk = func(v jsondoc.Value) {
			switch v.Kind() {
			case jsondoc.Object:
				m := readOpenAIMsg(v)
				for k, got := range map[string]jsondoc.Value{
					"role": m.role, "type": m.typ, "content": m.content, "tool_calls": m.toolCalls, "function_call": m.functionCall,
					"refusal": m.refusal, "audio": m.audio, "tool_call_id": m.toolCallID, "name": m.name,
				} {
					if want := v.Get(k); got != want {
						t.Fatalf("%s of %s: read %v, Get %v", k, v, got, want)
					}
				}
				for _, e := range v.Members() {
					walk(e)
				}
			case jsondoc.Array:
				for _, e := range v.Elems() {
					walk(e)
				}
			}
		}
		walk(v)
	})
}
