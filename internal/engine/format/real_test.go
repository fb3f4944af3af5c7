package format

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// realSources maps each folder of testdata/real (traces saved from the
// frameworks' own libraries, see its README.md) to the formats that may
// read its traces: the first is the folder's own; a document with no tool
// content (a text-only conversation) may fit a more generic one, which
// gives the same calls and answer.
var realSources = map[string][]string{
	"ai-sdk-v4":                 {"ai-sdk", "openai"},
	"ai-sdk-v5":                 {"ai-sdk", "openai"},
	"ai-sdk-v6":                 {"ai-sdk", "openai"},
	"ai-sdk-v7":                 {"ai-sdk", "openai"},
	"ai-sdk-ui":                 {"ai-sdk"},
	"openinference-langchain":   {"otel"},
	"openllmetry-ai-sdk":        {"otel"},
	"ai-sdk-anthropic-v5":       {"ai-sdk", "anthropic"},
	"ai-sdk-anthropic-v6":       {"ai-sdk", "anthropic"},
	"langsmith-langchain":       {"langsmith"},
	"openai-agents-js":          {"openai-agents", "openai-responses"},
	"openai-agents-python":      {"openai-agents", "openai-responses"},
	"openai-agents-js-multi":    {"openai-agents", "openai-responses"},
	"openai-agents-js-0.3":      {"openai-agents", "openai-responses"},
	"openai-agents-js-approval": {"openai-agents", "openai-responses", "anthropic"},
	"langsmith":                 {"langsmith"},
	"mcp-proxy":                 {"mcp-log"},
	"mcp-messages":              {"mcp"},
	"langchain-js":              {"langchain"},
	"pydantic-ai":               {"pydantic-ai"},
	"google-adk-js":             {"google-adk"},
	"google-adk-python":         {"google-adk"},
}

// sameShape names, for a source, another format that reads the very same
// shape: the Python Agents SDK's to_input_list() is a list of Responses API
// items, which openai-agents claims only when a tool output carries the
// SDK's default error text.
var sameShape = map[string]string{"openai-agents-python": "openai-responses"}

// realTraces lists the traces of a testdata/real folder: every file with a
// NAME.expect.json oracle beside it.
func realTraces(t testing.TB, source string) []string {
	t.Helper()
	oracles, err := filepath.Glob(filepath.Join("testdata", "real", source, "*.expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, o := range oracles {
		base := strings.TrimSuffix(o, ".expect.json")
		for _, ext := range []string{".json", ".jsonl", ".sse"} {
			if _, err := os.Stat(base + ext); err == nil {
				files = append(files, base+ext)
			}
		}
	}
	if len(files) != len(oracles) {
		t.Fatalf("testdata/real/%s: %d oracles but %d traces", source, len(oracles), len(files))
	}
	return files
}

// oracle is a NAME.expect.json: what the generator's scenario says the
// trace holds.
type oracle struct {
	Calls       []oracleCall
	FinalAnswer *string
}

// oracleCall is one expected call; has names the keys the oracle gives.
type oracleCall struct {
	Tool   string
	Args   any
	ID     *string
	Error  bool
	Result any
	has    map[string]bool
}

func readOracle(t *testing.T, file string) oracle {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsondoc.Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	m := v.Any().(map[string]any)
	var o oracle
	if s, ok := m["final_answer"].(string); ok {
		o.FinalAnswer = &s
	}
	for _, c := range m["calls"].([]any) {
		cm := c.(map[string]any)
		var e oracleCall
		e.has = map[string]bool{}
		for k := range cm {
			e.has[k] = true
		}
		e.Tool = cm["tool"].(string)
		e.Args = cm["args"]
		if id, ok := cm["id"].(string); ok {
			e.ID = &id
		}
		e.Error, _ = cm["error"].(bool)
		e.Result = cm["result"]
		o.Calls = append(o.Calls, e)
	}
	return o
}

// TestRealTraces reads every trace of testdata/real with detection and
// checks (1) the format it was read as, (2) the calls, ids, error flags,
// results and final answer against the generator's oracle, and (3) the
// whole normalised output against NAME.golden (-update rewrites it).
func TestRealTraces(t *testing.T) {
	for source, formats := range realSources {
		for _, file := range realTraces(t, source) {
			t.Run(filepath.ToSlash(strings.TrimPrefix(file, "testdata/real/")), func(t *testing.T) {
				data, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				got, err := Parse(data, "auto")
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				want := readOracle(t, strings.TrimSuffix(file, filepath.Ext(file))+".expect.json")
				if !slices.Contains(formats, got.Format) || (got.Format != formats[0] && got.Format != sameShape[source] && len(want.Calls) > 0) {
					t.Errorf("read as %q (%s), want %q", got.Format, got.Reason, formats[0])
				}
				checkOracle(t, got, want)
				checkGolden(t, strings.TrimSuffix(file, filepath.Ext(file))+".golden", marshal(t, got))
				roundTrip(t, got.Trace)
			})
		}
	}
}

func checkOracle(t *testing.T, got *Parsed, want oracle) {
	t.Helper()
	calls := got.Trace.Calls
	if len(calls) != len(want.Calls) {
		t.Errorf("%d calls, want %d: %s", len(calls), len(want.Calls), marshal(t, calls))
	}
	for i := range min(len(calls), len(want.Calls)) {
		c, w := calls[i], want.Calls[i]
		if c.Tool != w.Tool {
			t.Errorf("call %d: tool %q, want %q", i, c.Tool, w.Tool)
		}
		if diff := cmp.Diff(w.Args, c.Args.Any()); diff != "" {
			t.Errorf("call %d args (-want +got):\n%s", i, diff)
		}
		if w.ID != nil && c.ID != *w.ID {
			t.Errorf("call %d: id %q, want %q", i, c.ID, *w.ID)
		}
		if c.Failed() != w.Error {
			t.Errorf("call %d: error %q, want error %v", i, c.Error, w.Error)
		}
		if w.has["result"] {
			if diff := cmp.Diff(w.Result, c.Result.Any()); diff != "" {
				t.Errorf("call %d result (-want +got):\n%s", i, diff)
			}
		}
	}
	if diff := cmp.Diff(want.FinalAnswer, got.Trace.FinalAnswer); diff != "" {
		t.Errorf("final answer (-want +got):\n%s", diff)
	}
}
