package format

import (
	"strconv"
	"testing"

	"github.com/toolscore/toolscore/internal/engine"
)

// joinOps runs ops on b: each pair of bytes adds a call (op%4 == 0, 1)
// with one of a few ids (or none) and tools, or joins a result by id,
// by name or to the earliest waiting call, and returns the call each
// result went to (-1 for none), in order.
func joinOps(b *builder, ops []byte) []int {
	var got []int
	for k := 0; k+1 < len(ops); k += 2 {
		op, arg := ops[k], ops[k+1]
		id := ""
		if arg%5 != 0 {
			id = "c" + strconv.Itoa(int(arg%5))
		}
		tool := "t" + strconv.Itoa(int(arg/5%3))
		switch op % 5 {
		case 0, 1:
			b.add(engine.ToolCall{Tool: tool, ID: id})
		case 2:
			if id == "" {
				id = "c1"
			}
			got = append(got, b.joined(id, ""))
		case 3:
			got = append(got, b.joined("", tool))
		case 4:
			got = append(got, b.joined("", ""))
		}
	}
	return got
}

// joined is result, returning the call that took the result or -1.
func (b *builder) joined(id, name string) int {
	before := append([]bool(nil), b.done...)
	if !b.result(id, name, emptyObject, "") {
		return -1
	}
	for i := range b.done {
		if b.done[i] != before[i] {
			return i
		}
	}
	return -2
}

// FuzzBuilderJoin compares the builder's joining of results by id among
// the first waiting calls (popID's scan) with joining through the index
// of ids alone (noScan).
func FuzzBuilderJoin(f *testing.F) {
	f.Add([]byte{0, 1, 2, 1, 0, 2, 0, 3, 2, 3, 2, 2})
	f.Add([]byte{0, 1, 0, 1, 0, 1, 2, 1, 2, 1, 4, 0, 2, 1})
	many := []byte{}
	for i := range 20 {
		many = append(many, 0, byte(i))
	}
	for i := range 20 {
		many = append(many, 2, byte(19-i))
	}
	f.Add(many)
	f.Fuzz(func(t *testing.T, ops []byte) {
		scan, plain := newBuilder(), newBuilder()
		plain.noScan = true
		got, want := joinOps(scan, ops), joinOps(plain, ops)
		if len(got) != len(want) {
			t.Fatalf("%v: %d results, want %d", ops, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%v: result %d joined call %d, the index joins %d", ops, i, got[i], want[i])
			}
		}
	})
}
