package format

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAnthropicStreamByRef reads the events the Anthropic TypeScript
// SDK's MessageStream yields, saved after the run (message_start's message
// then holds the finished blocks) and as they arrived: both read as the
// calls (tool, arguments, id) and final answer of the scenario's oracle
// (testdata/real/anthropic-stream-by-ref/README.md).
func TestAnthropicStreamByRef(t *testing.T) {
	files, err := filepath.Glob("testdata/real/anthropic-stream-by-ref/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no traces: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse(data, "auto")
			if err != nil {
				t.Fatal(err)
			}
			if got.Format != "anthropic-stream" {
				t.Fatalf("detected %s (%s)", got.Format, got.Reason)
			}
			raw, err := os.ReadFile(strings.TrimSuffix(file, ".jsonl") + ".expect.json")
			if err != nil {
				t.Fatal(err)
			}
			want := decodeExact(t, string(raw)).(map[string]any)
			calls, _ := want["calls"].([]any)
			if len(got.Trace.Calls) != len(calls) {
				t.Fatalf("%d calls, want %d:\n%s", len(got.Trace.Calls), len(calls), marshal(t, got.Trace.Calls))
			}
			for i, w := range calls {
				wm := w.(map[string]any)
				c := got.Trace.Calls[i]
				args, _ := json.Marshal(c.Args)
				if c.Tool != wm["tool"] || c.ID != wm["id"] {
					t.Errorf("call %d: %s %s, want %v %v", i, c.Tool, c.ID, wm["tool"], wm["id"])
				}
				if diff := cmp.Diff(wm["args"], decodeExact(t, string(args))); diff != "" {
					t.Errorf("call %d: args (-want +got):\n%s", i, diff)
				}
			}
			var answer *string
			if s, ok := want["final_answer"].(string); ok {
				answer = &s
			}
			if diff := cmp.Diff(answer, got.Trace.FinalAnswer); diff != "" {
				t.Errorf("final answer (-want +got):\n%s", diff)
			}
		})
	}
}
