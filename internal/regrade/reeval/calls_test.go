package reeval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/format"
	"github.com/toolscore/toolscore/internal/workload"
)

// stdCalls is Calls as it was before the fast path: encoding/json alone.
// It is the reference the fast path must agree with.
func stdCalls(raw json.RawMessage) ([]engine.ToolCall, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var calls []engine.ToolCall
	if err := dec.Decode(&calls); err != nil {
		return nil, fmt.Errorf("trace_calls: %w", err)
	}
	if calls == nil {
		return nil, errors.New("trace_calls: not an array")
	}
	if err := checkNamed(raw, calls); err != nil {
		return nil, err
	}
	return calls, nil
}

// storedCalls returns the trace_calls JSON the service stores for every
// golden trace of the format tests and every workload, as json.Marshal
// writes them.
func storedCalls(tb testing.TB) map[string][]byte {
	tb.Helper()
	docs := map[string][]byte{}
	for _, s := range []workload.Size{workload.Small, workload.Medium, workload.Large, workload.WorstCase} {
		docs["plain-"+s.Name] = workload.PlainTrace(s)
		docs["openai-"+s.Name] = workload.OpenAITrace(s)
	}
	files, err := filepath.Glob("../../engine/format/testdata/*/*")
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, ".golden") || strings.Contains(f, "/fuzz/") || strings.Contains(f, "/errors/") {
			continue
		}
		if fi, err := os.Stat(f); err != nil || fi.IsDir() {
			continue // testdata/real holds one folder per source
		}
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		docs[f] = b
	}
	out := map[string][]byte{}
	for name, doc := range docs {
		p, err := format.Parse(doc, "")
		if err != nil {
			continue // a trace the format tests expect to fail
		}
		b, err := json.Marshal(p.Trace.Calls)
		if err != nil {
			tb.Fatal(err)
		}
		out[name] = b
	}
	if len(out) < 40 {
		tb.Fatalf("only %d stored call lists; the format testdata moved?", len(out))
	}
	return out
}

// TestCallsFast checks that the stored calls of every golden trace take
// the fast path and read back exactly as encoding/json reads them.
func TestCallsFast(t *testing.T) {
	t.Parallel()
	var r Reader
	for name, raw := range storedCalls(t) {
		want, err := stdCalls(raw)
		got, ok := fastCalls(raw)
		if err != nil {
			// A call without a tool name (an OpenAI message with a
			// null custom tool): both paths must refuse it.
			if ok {
				t.Errorf("%s: the fast path read what encoding/json refuses (%v)", name, err)
			}
			continue
		}
		if !ok {
			t.Errorf("%s: not read by the fast path", name)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-encoding/json +fast):\n%s", name, diff)
		}
		// A Reader reused from one stored trace to the next reads the
		// same.
		again, err := r.Calls(raw)
		if err != nil {
			t.Errorf("%s: Reader.Calls: %v", name, err)
		} else if diff := cmp.Diff(want, again); diff != "" {
			t.Errorf("%s (-encoding/json +Reader):\n%s", name, diff)
		}
	}
}

// TestCallsFallback checks inputs the fast path leaves to encoding/json:
// Calls gives exactly what encoding/json gives.
func TestCallsFallback(t *testing.T) {
	t.Parallel()
	var r Reader
	for _, in := range []string{
		`[{"Tool": "a", "args": {}}]`,                         // key case folded by encoding/json
		`[{"tool": "a", "TOOL": "b"}]`,                        // both fold to Tool: the last wins
		`[{"tool": "a", "extra": 1}]`,                         // unknown key, ignored
		`[{"tool": "a"}] trailing`,                            // encoding/json's Decoder reads one value
		`[{"tool": "a", "args": "{}"}]`,                       // wrong type
		`[{"tool": "a", "id": 7}]`,                            // wrong type
		`[{"tool": "a", "error": 3}]`,                         // CallError rejects it
		`[null]`,                                              // a zero call: tool missing
		`[{"tool": null}]`,                                    // tool missing
		`[{"tool": ""}]`,                                      // a call without a name: kept
		`[{"tool": "", "tool": null}]`,                        // the last tool is null: missing
		`[{"Tool": ""}]`,                                      // folded by encoding/json: kept
		`{"calls": []}`,                                       // not an array
		`[{"tool": "a", "args": {"x": 1}, "args": {"y": 2}}]`, // encoding/json merges
		`[{"tool": "a", "args": {"x": 1}, "args" : {"y": 2}}]`,
		`[{"tool": "a", "args": {"x": 1}, "\u0061rgs": {"y": 2}}]`,
		`[{"tool": "a", "args": {"x": 1}, "\u0041rgs": {"y": 2}}]`,
		`[{"tool": "a", "args": {"args": {"args": 1}}}]`, // nested args keys: no merge
	} {
		want, wantErr := stdCalls(json.RawMessage(in))
		got, err := Calls(json.RawMessage(in))
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("Calls(%s) error = %v, want %v", in, err, wantErr)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Calls(%s) (-encoding/json +Calls):\n%s", in, diff)
		}
		got, err = r.Calls([]byte(in))
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("Reader.Calls(%s) error = %v, want %v", in, err, wantErr)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Reader.Calls(%s) (-encoding/json +Reader):\n%s", in, diff)
		}
	}
}

// FuzzCalls checks Calls against encoding/json on any input: the same
// calls or the same error.
func FuzzCalls(f *testing.F) {
	for _, raw := range storedCalls(f) {
		f.Add(raw)
	}
	f.Add([]byte(`[{"tool": "a", "args": null, "args_raw": "{", "args_error": "bad", "error": "boom", "id": "c1", "result": [1, {"k": 2.5e3}]}]`))
	// One Reader reads every input of a fuzzing process, as a grading
	// goroutine reads one stored trace after another.
	var r Reader
	f.Fuzz(func(t *testing.T, raw []byte) {
		want, wantErr := stdCalls(raw)
		got, err := Calls(raw)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("Calls(%q) error = %v, want %v", raw, err, wantErr)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Calls(%q) (-encoding/json +Calls):\n%s", raw, diff)
		}
		got, err = r.Calls(raw)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("Reader.Calls(%q) error = %v, want %v", raw, err, wantErr)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Reader.Calls(%q) (-encoding/json +Reader):\n%s", raw, diff)
		}
	})
}
