package workload

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// perfFiles are the gold files and traces the Python reference
// (Toolscore 1.8.1) is timed on, copied from the shared perf workloads:
// plain [{"tool", "args"}] lists.
//
//go:embed perf/*.json
var perfFiles embed.FS

// PerfNames are the Python-reference workloads, smallest first: small (3
// expected calls, 3 trace calls), medium (10, 12), large (50, 60).
var PerfNames = []string{"small", "medium", "large"}

// Perf returns the gold file and the trace of the Python-reference
// workload name (one of PerfNames), as the reference reads them.
func Perf(name string) (gold, trace []byte, err error) {
	if gold, err = perfFiles.ReadFile("perf/" + name + "_gold.json"); err != nil {
		return nil, nil, fmt.Errorf("no workload %q (want small, medium or large)", name)
	}
	if trace, err = perfFiles.ReadFile("perf/" + name + "_trace.json"); err != nil {
		return nil, nil, err
	}
	return gold, trace, nil
}

// WritePerfLines writes n traces as JSON Lines, one compact plain trace
// per line: variants of workload name's trace, so that a batch of them
// has a mix of grades while every line keeps the workload's size. Line i
// is the trace unchanged when i%4 is 0; with one argument value changed
// when it is 1; with one call left out when it is 2; with two neighbouring
// calls swapped when it is 3 (the call is chosen by i/4). The output is
// the same for the same arguments.
func WritePerfLines(w io.Writer, name string, n int) error {
	_, trace, err := Perf(name)
	if err != nil {
		return err
	}
	var calls []map[string]any
	dec := json.NewDecoder(bytes.NewReader(trace))
	dec.UseNumber()
	if err := dec.Decode(&calls); err != nil {
		return fmt.Errorf("workload %s: %w", name, err)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	line := make([]map[string]any, 0, len(calls))
	for i := range n {
		k := (i / 4) % len(calls)
		line = append(line[:0], calls...)
		switch i % 4 {
		case 1:
			line[k] = withChangedArg(line[k], i)
		case 2:
			line = append(line[:k], line[k+1:]...)
		case 3:
			if k+1 < len(line) {
				line[k], line[k+1] = line[k+1], line[k]
			}
		}
		b, err := json.Marshal(line)
		if err != nil {
			return err
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// withChangedArg returns a copy of call whose first argument (in key
// order) has another value of the same type.
func withChangedArg(call map[string]any, i int) map[string]any {
	args, _ := call["args"].(map[string]any)
	if len(args) == 0 {
		return call
	}
	key := ""
	for k := range args {
		if key == "" || k < key {
			key = k
		}
	}
	na := make(map[string]any, len(args))
	for k, v := range args {
		na[k] = v
	}
	switch v := args[key].(type) {
	case json.Number:
		na[key] = json.Number(strconv.Itoa(1000 + i%97))
	case string:
		na[key] = v + "-" + strconv.Itoa(i%97)
	case bool:
		na[key] = !v
	default:
		na[key] = "changed"
	}
	nc := make(map[string]any, len(call))
	for k, v := range call {
		nc[k] = v
	}
	nc["args"] = na
	return nc
}
