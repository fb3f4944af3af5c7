package format

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolscore/toolscore/internal/engine"
)

// addSeeds adds the example traces of the named formats (all when none) to
// the fuzz corpus; testdata/fuzz/<FuzzName>/ holds further seeds.
func addSeeds(f *testing.F, formats ...string) {
	f.Helper()
	if len(formats) == 0 {
		formats = Names()
	}
	for _, name := range formats {
		files, err := filepath.Glob(filepath.Join("testdata", name, "*"))
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, ".golden") {
				continue
			}
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
}

// checkParse is the property every fuzz target checks: Parse never panics;
// it fails only with an error matching engine.ErrInvalidTrace; on success
// the calls are non-nil, every call either has arguments or says why not,
// and the trace written as JSON reads back the same in the plain format.
func checkParse(t *testing.T, data []byte, name string) {
	p, err := Parse(data, name)
	if err != nil {
		if !errors.Is(err, engine.ErrInvalidTrace) {
			t.Fatalf("Parse(%q, %q) error %v does not match engine.ErrInvalidTrace", data, name, err)
		}
		return
	}
	if p.Trace.Calls == nil {
		t.Fatalf("Parse(%q, %q) returned nil Calls", data, name)
	}
	for i, c := range p.Trace.Calls {
		if !c.Args.Exists() != (c.ArgsError != "") {
			t.Fatalf("Parse(%q, %q): call %d has Args %v and ArgsError %q", data, name, i, c.Args, c.ArgsError)
		}
	}
	out, err := json.Marshal(p.Trace)
	if err != nil {
		t.Fatalf("Parse(%q, %q): the trace does not encode: %v", data, name, err)
	}
	back, err := Parse(out, "plain")
	if err != nil {
		t.Fatalf("plain round trip of %s: %v", out, err)
	}
	again, err := json.Marshal(back.Trace)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(out) {
		t.Fatalf("plain round trip differs:\nfirst:  %s\nsecond: %s", out, again)
	}
}

// FuzzParse fuzzes detection: every adapter may see the input.
func FuzzParse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, "auto") })
}

func FuzzPlain(f *testing.F) {
	addSeeds(f, "plain")
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, "plain") })
}

func FuzzOpenAI(f *testing.F) {
	addSeeds(f, "openai")
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, "openai") })
}

func FuzzOpenAIStream(f *testing.F) {
	addSeeds(f, "openai-stream")
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, "openai-stream") })
}

func FuzzResponses(f *testing.F) {
	addSeeds(f, "openai-responses")
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, "openai-responses") })
}

func FuzzResponsesStream(f *testing.F) {
	addSeeds(f, "openai-responses-stream")
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, "openai-responses-stream") })
}

func FuzzAnthropic(f *testing.F) {
	addSeeds(f, "anthropic")
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, "anthropic") })
}

func FuzzAnthropicStream(f *testing.F) {
	addSeeds(f, "anthropic-stream")
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, "anthropic-stream") })
}

func FuzzGemini(f *testing.F) {
	addSeeds(f, "gemini")
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, "gemini") })
}

func FuzzGeminiStream(f *testing.F) {
	addSeeds(f, "gemini-stream")
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, "gemini-stream") })
}

func FuzzMCP(f *testing.F) {
	addSeeds(f, "mcp")
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, "mcp") })
}

func FuzzLangChain(f *testing.F) {
	addSeeds(f, "langchain")
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, "langchain") })
}

func FuzzOTel(f *testing.F) {
	addSeeds(f, "otel")
	addOTelRealSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, "otel") })
}

func FuzzPydanticAI(f *testing.F) {
	addSeeds(f, "pydantic-ai")
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, "pydantic-ai") })
}

func FuzzAISDK(f *testing.F) {
	addSeeds(f, "ai-sdk")
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, "ai-sdk") })
}

func FuzzOpenAIAgents(f *testing.F) {
	addSeeds(f, "openai-agents")
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, "openai-agents") })
}

func FuzzLangSmith(f *testing.F) {
	addSeeds(f, "langsmith")
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, "langsmith") })
}

func FuzzMCPLog(f *testing.F) {
	addSeeds(f, "mcp-log")
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, "mcp-log") })
}

func FuzzGoogleADK(f *testing.F) {
	addSeeds(f, "google-adk")
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, "google-adk") })
}

// TestFuzzTargets keeps one fuzz target per adapter: a new adapter needs
// its own.
func TestFuzzTargets(t *testing.T) {
	src, err := os.ReadFile("fuzz_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range Names() {
		if !strings.Contains(string(src), `checkParse(t, data, "`+name+`")`) {
			t.Errorf("no fuzz target parses with format %q", name)
		}
	}
}
