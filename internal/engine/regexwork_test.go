package engine_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/format"
)

// TestRegexWork: the sizes count the compiled instructions of general
// patterns per tool, wherever they are (nested, inside $one_of and
// $contains, in optional calls, alternatives and forbidden rules), and
// the work is each call's argument string bytes times its tool's size.
func TestRegexWork(t *testing.T) {
	c, err := engine.ParseContract([]byte(`{"contract_version": 2,
		"required": [
			{"tool": "a", "args": {"v": {"$regex": "[a-z]{1,3}x"}, "n": {"deep": [{"$regex": "b+"}]}}},
			{"alternatives": [[{"tool": "b", "args": {"w": {"$one_of": [{"$regex": "c+d"}, "x"]}}}], [{"tool": "c"}]]}
		],
		"optional": [{"tool": "a", "args": {"v": {"$regex": "^literal$"}}}],
		"forbidden": [{"tool": "b", "args": {"w": {"$regex": "e+"}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	// Instructions as regexp/syntax compiles the simplified patterns:
	// [a-z]{1,3}x 8, b+ 4, c+d 5, e+ 4; ^literal$ is a string test (0).
	want := engine.RegexSizes{"a": 8 + 4, "b": 5 + 4}
	got := c.RegexSizes()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("sizes (-want +got):\n%s", diff)
	}
	p, err := format.Parse([]byte(`[{"tool": "a", "args": {"v": "abcx", "n": {"deep": ["bb", 7]}}}, {"tool": "b", "args": {"w": "ccd", "k": ["zz"]}}, {"tool": "c", "args": {"v": "long text"}}]`), "plain")
	if err != nil {
		t.Fatal(err)
	}
	if w, want := got.RegexWork(&p.Trace), int64(12*(4+2)+9*(3+2)); w != want {
		t.Errorf("work = %d, want %d", w, want)
	}
	fs := engine.ForbiddenRegexSizes([]engine.ForbiddenCall{{Tool: "b"}})
	if fs != nil {
		t.Errorf("forbidden sizes without patterns = %v, want nil", fs)
	}
}
