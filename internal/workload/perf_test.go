package workload

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestWritePerfLines(t *testing.T) {
	var a, b bytes.Buffer
	if err := WritePerfLines(&a, "medium", 8); err != nil {
		t.Fatal(err)
	}
	if err := WritePerfLines(&b, "medium", 8); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Error("two runs differ")
	}
	lines := strings.Split(strings.TrimSuffix(a.String(), "\n"), "\n")
	if len(lines) != 8 {
		t.Fatalf("%d lines, want 8", len(lines))
	}
	wantCalls := []int{12, 12, 11, 12, 12, 12, 11, 12}
	for i, l := range lines {
		var calls []map[string]any
		if err := json.Unmarshal([]byte(l), &calls); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if len(calls) != wantCalls[i] {
			t.Errorf("line %d: %d calls, want %d", i+1, len(calls), wantCalls[i])
		}
	}
	if lines[0] == lines[1] || lines[0] == lines[3] {
		t.Error("variants equal the original trace")
	}
	if err := WritePerfLines(&a, "huge", 1); err == nil {
		t.Error("no error for an unknown workload")
	}
}
