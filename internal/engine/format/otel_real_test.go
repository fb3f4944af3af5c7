package format

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// otelRealSources are the folders of testdata/real whose traces the otel
// adapter reads: traces made by the real libraries (see each README.md).
var otelRealSources = []string{"ai-sdk-otel-v5", "ai-sdk-otel-v6", "ai-sdk-otel-v7", "openinference", "openllmetry", "openllmetry-positional", "openinference-vercel", "ai-sdk-otel-anthropic-v6", "otel-python-console"}

// otelRealFiles lists the traces of the otelRealSources: every file but
// the oracles, goldens, generators and READMEs.
func otelRealFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	for _, src := range otelRealSources {
		matches, err := filepath.Glob(filepath.Join("testdata", "real", src, "*"))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range matches {
			base := filepath.Base(m)
			switch {
			case strings.HasSuffix(base, ".expect.json"), strings.HasSuffix(base, ".golden"),
				strings.HasPrefix(base, "package"), strings.HasPrefix(base, "gen."),
				base == "README.md", base == "node_modules", strings.HasPrefix(base, "."):
				continue
			}
			files = append(files, m)
		}
	}
	if len(files) == 0 {
		t.Fatal("no traces under testdata/real")
	}
	return files
}

// otelExpect is a NAME.expect.json oracle, written by the generator from
// its scenario definition (testdata/real/otel-kit/README.md).
type otelExpect struct {
	NotExported []string `json:"not_exported"`
	Calls       []struct {
		Tool         string `json:"tool"`
		Args         any    `json:"args"`
		ArgsExported any    `json:"args_exported"`
		ID           *string
		Error        *bool `json:"error"`
		Result       any   `json:"result"`
	} `json:"calls"`
	FinalAnswer *string `json:"final_answer"`
}

// decodeExact decodes JSON text with numbers kept as their decimal text,
// as Parse does.
func decodeExact(t *testing.T, s string) any {
	t.Helper()
	v, err := jsondoc.ParseString(s)
	if err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	return v.Any()
}

// TestOTelReal reads every real OpenTelemetry trace with detection: it
// must be detected as otel, match its golden file, and give exactly the
// calls (tool, arguments, id, error flag, result) and final answer of its
// oracle NAME.expect.json.
func TestOTelReal(t *testing.T) {
	for _, file := range otelRealFiles(t) {
		t.Run(filepath.ToSlash(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse(data, "auto")
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got.Format != "otel" {
				t.Fatalf("detected %q (%s), want otel", got.Format, got.Reason)
			}
			checkGolden(t, goldenPath(file), marshal(t, got))
			roundTrip(t, got.Trace)

			base := strings.TrimSuffix(file, filepath.Ext(file))
			raw, err := os.ReadFile(base + ".expect.json")
			if err != nil {
				t.Fatal(err)
			}
			var ex otelExpect
			if err := json.Unmarshal(raw, &ex); err != nil {
				t.Fatal(err)
			}
			// The fields with exact numbers, decoded as Parse decodes.
			whole := decodeExact(t, string(raw)).(map[string]any)
			calls := whole["calls"].([]any)
			if len(got.Trace.Calls) != len(calls) {
				t.Fatalf("%d calls, want %d:\n%s", len(got.Trace.Calls), len(calls), marshal(t, got.Trace.Calls))
			}
			for i, w := range calls {
				wm := w.(map[string]any)
				c := got.Trace.Calls[i]
				if c.Tool != wm["tool"] {
					t.Errorf("call %d: tool %q, want %q", i, c.Tool, wm["tool"])
				}
				wantArgs := wm["args"]
				if v, ok := wm["args_exported"]; ok {
					wantArgs = v
				}
				if diff := cmp.Diff(wantArgs, c.Args.Any()); diff != "" {
					t.Errorf("call %d (%s): args (-want +got):\n%s", i, c.Tool, diff)
				}
				if id, ok := wm["id"].(string); ok && c.ID != id {
					if !(c.ID == "" && strings.Contains(string(raw), "no call id")) {
						// Tool spans without ids get the id of the request they join.
						t.Errorf("call %d (%s): id %q, want %q", i, c.Tool, c.ID, id)
					}
				}
				if e, ok := wm["error"].(bool); ok && c.Failed() != e {
					t.Errorf("call %d (%s): error %q, want %v", i, c.Tool, c.Error, e)
				}
				if r, ok := wm["result"]; ok {
					gr := c.Result.Any()
					if s, isText := gr.(string); isText {
						gr = decodeExact(t, s)
					}
					if diff := cmp.Diff(r, gr); diff != "" {
						t.Errorf("call %d (%s): result (-want +got):\n%s", i, c.Tool, diff)
					}
				}
				if _, ok := wm["error"]; !ok && c.Failed() {
					t.Errorf("call %d (%s): error %q where the library exports none", i, c.Tool, c.Error)
				}
			}
			if diff := cmp.Diff(ex.FinalAnswer, got.Trace.FinalAnswer); diff != "" {
				t.Errorf("final answer (-want +got):\n%s", diff)
			}
		})
	}
}

// addOTelRealSeeds adds the real OpenTelemetry traces to a fuzz corpus.
func addOTelRealSeeds(f *testing.F) {
	f.Helper()
	for _, file := range otelRealFiles(f) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}
