package main

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/toolscore/toolscore/internal/workload"
)

func TestParseStatus(t *testing.T) {
	status := "Name:\tserver\nVmPeak:\t  900000 kB\nVmHWM:\t   81920 kB\nVmRSS:\t   40960 kB\nThreads:\t9\n"
	rss, hwm, err := parseStatus(strings.NewReader(status))
	if err != nil || rss != 40960<<10 || hwm != 81920<<10 {
		t.Errorf("parseStatus = %d, %d, %v; want %d, %d", rss, hwm, err, 40960<<10, 81920<<10)
	}
	if _, _, err := parseStatus(strings.NewReader("Name:\tx\n")); err == nil {
		t.Error("parseStatus without VmRSS succeeded")
	}
}

func TestBodies(t *testing.T) {
	bs, err := bodies(workload.Medium)
	if err != nil {
		t.Fatal(err)
	}
	var req struct {
		Contract map[string]any `json:"contract"`
		Trace    []any          `json:"trace"`
		TaskID   string         `json:"task_id"`
		Agent    string         `json:"agent"`
	}
	if err := json.Unmarshal(bs[5], &req); err != nil {
		t.Fatal(err)
	}
	// 12 calls as OpenAI messages: the user's, 12 assistant + 12 tool
	// messages, and the final answer.
	if len(bs) != 64 || req.TaskID != "task-05" || req.Agent != "agent-1" || len(req.Trace) != 26 || req.Contract["contract_version"] == nil {
		t.Errorf("body 5: task %q agent %q, %d trace messages", req.TaskID, req.Agent, len(req.Trace))
	}
}

func TestParseOptions(t *testing.T) {
	if _, err := parseOptions([]string{"-workload", "huge"}, io.Discard); err == nil || err.Error() != `-workload must be small, medium or large, got "huge"` {
		t.Errorf("parseOptions(-workload huge) = %v", err)
	}
	o, err := parseOptions([]string{"-store=false", "-rate", "5"}, io.Discard)
	if err != nil || o.store || o.rate != 5 || o.size.Name != "medium" || o.maxConns != 100 || o.keepBody {
		t.Errorf("parseOptions = %+v, %v", o, err)
	}
}

func TestParseOptionsConnections(t *testing.T) {
	o, err := parseOptions([]string{"-max-conns", "0", "-keep-body"}, io.Discard)
	if err != nil || o.maxConns != 0 || !o.keepBody {
		t.Errorf("parseOptions(-max-conns 0 -keep-body) = %+v, %v", o, err)
	}
	if _, err := parseOptions([]string{"-max-conns", "-1"}, io.Discard); err == nil {
		t.Error("parseOptions(-max-conns -1) succeeded")
	}
}

func TestParseStat(t *testing.T) {
	stat := "4242 (toolscore server) S 1 4242 4242 0 -1 4194560 1500 0 0 0 250 75 0 0 20 0 9 0 100 0 0"
	got, err := parseStat(stat)
	if err != nil || got.Milliseconds() != 3250 {
		t.Errorf("parseStat = %v, %v; want 3.25s (325 ticks)", got, err)
	}
	if _, err := parseStat("garbage"); err == nil {
		t.Error("parseStat(garbage) succeeded")
	}
}

func TestCountBackend(t *testing.T) {
	tests := []struct {
		title string
		want  bool
	}{
		{"postgres: 15/main: postgres toolscore_bench 127.0.0.1(33080) idle", true},
		{"postgres: 15/main: postgres toolscore_test_1 127.0.0.1(44188) INSERT", false},
		{"postgres: 15/main: walwriter ", true},
		{"postgres: 15/main: postgres toolscore_bench [local] idle", true},
	}
	for _, tc := range tests {
		if got := countBackend(tc.title, "toolscore_bench"); got != tc.want {
			t.Errorf("countBackend(%q) = %v, want %v", tc.title, got, tc.want)
		}
	}
}
