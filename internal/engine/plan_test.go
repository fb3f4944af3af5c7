package engine

import (
	"encoding/json"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"slices"
	"strings"
	"testing"
)

// TestScoringPlan checks that ParseContract plans a contract once (a
// Contract built otherwise is planned at each use) and what the plan
// precomputes: tool names
// interned in order of appearance (required, options, optional,
// forbidden), the name order, the plain runs around the groups, every
// expected call with its compiled arguments, and the rules.
func TestScoringPlan(t *testing.T) {
	c := mustContract(t, `{"contract_version":2,
	  "required":[{"tool":"search","args":{"q":{"$regex":"^a"}}},
	    {"id":"pay","alternatives":[{"tool":"charge"},[{"tool":"invoice","args":{}},{"tool":"search"}]]},
	    {"tool":"book","args":{"n":1,"who":{"k":"v"}}}],
	  "alternatives":[{"alternatives":[{"tool":"mail"},{"tool":"call"}]}],
	  "optional":[{"tool":"weather"}],
	  "forbidden":[{"tool":"delete","args":{"force":true}},{"tool":"search"}]}`)
	p := c.scoringPlan()
	if p != c.plan || p == nil {
		t.Fatal("scoringPlan did not return the plan ParseContract built")
	}
	if p2 := c.scoringPlan(); p2 != p {
		t.Fatal("scoringPlan built a second plan for the same contract")
	}
	// A Contract not built by ParseContract is planned at each use, the
	// same plan each time.
	bare := &Contract{Required: c.Required, Optional: c.Optional, Forbidden: c.Forbidden}
	if b1, b2 := bare.scoringPlan(), bare.scoringPlan(); b1 == b2 || !slices.Equal(b1.names, p.names) || bare.plan != nil {
		t.Fatal("a Contract built otherwise is not planned anew at each use, alike")
	}
	if want := []string{"search", "charge", "invoice", "book", "mail", "call", "weather", "delete"}; !slices.Equal(p.names, want) {
		t.Errorf("names %v, want %v", p.names, want)
	}
	var sorted []string
	for _, id := range p.byName {
		sorted = append(sorted, p.names[id])
	}
	if want := []string{"book", "call", "charge", "delete", "invoice", "mail", "search", "weather"}; !slices.Equal(sorted, want) {
		t.Errorf("names in order %v, want %v", sorted, want)
	}
	if !slices.Equal(p.groups, []int{1, 3}) || p.nExp != 7 || len(p.exps) != 7 {
		t.Fatalf("groups %v, nExp %d, exps %d; want [1 3], 7, 7", p.groups, p.nExp, len(p.exps))
	}
	// exps: search, charge, invoice, search, book, mail, call.
	if len(p.runs) != 3 || !slices.Equal(p.runs[0], []int{0}) || !slices.Equal(p.runs[1], []int{4}) || len(p.runs[2]) != 0 {
		t.Errorf("runs %v, want [[0] [4] []]", p.runs)
	}
	if got := p.options[0]; len(got) != 2 || !slices.Equal(got[0], []int{1}) || !slices.Equal(got[1], []int{2, 3}) {
		t.Errorf("group options %v, want [[1] [2 3]]", got)
	}
	for i, want := range []struct {
		tool  string
		nkeys int // -1: unchecked
	}{{"search", 1}, {"charge", -1}, {"invoice", 0}, {"search", -1}, {"book", 2}, {"mail", -1}, {"call", -1}} {
		e := p.exps[i]
		nkeys := -1
		if e.args != nil {
			nkeys = len(e.args.keys)
		}
		if p.names[e.tool] != want.tool || e.idx != i || e.call.Tool != want.tool || nkeys != want.nkeys {
			t.Errorf("exps[%d] = tool %q idx %d keys %d, want %q %d %d", i, p.names[e.tool], e.idx, nkeys, want.tool, i, want.nkeys)
		}
	}
	if len(p.optional) != 1 || p.names[p.optional[0].tool] != "weather" || p.optional[0].args != nil {
		t.Errorf("optional rules %+v", p.optional)
	}
	if len(p.forbidden) != 2 || p.names[p.forbidden[0].tool] != "delete" || p.forbidden[0].args == nil || p.forbidden[1].args != nil {
		t.Errorf("forbidden rules %+v", p.forbidden)
	}
	book := p.exps[4].args
	if !book.satisfiedBy(jsondoc.MustFromAny(map[string]any{"n": json.Number("1.0"), "who": map[string]any{"k": " v "}, "extra": true}), false) ||
		book.satisfiedBy(jsondoc.MustFromAny(map[string]any{"n": json.Number("1.0"), "who": map[string]any{"k": " v "}}), true) {
		t.Error("the book call's compiled arguments do not compare as Compare does")
	}
}

// FuzzPlanToolID checks the plan's tool name lookup (a 6-bit hash, a
// chain of the names that share one) against a map of the names, each
// with the id of its first interning.
func FuzzPlanToolID(f *testing.F) {
	f.Add("get_weather,search,gw,ab,ba,a", "get_weather")
	f.Add("x,y", "z")
	f.Add("", "")
	f.Add("ab,ba,ab,aab,aba,ba", "aba")
	f.Fuzz(func(t *testing.T, names, name string) {
		list := strings.Split(names, ",")
		p := &contractPlan{names: make([]string, 0, len(list)), sameHash: make([]int32, 0, len(list))}
		ids := map[string]int{}
		for _, n := range list {
			id := p.intern(n)
			want, seen := ids[n]
			if !seen {
				want = len(ids)
				ids[n] = want
			}
			if id != want {
				t.Fatalf("intern(%q) = %d, want %d", n, id, want)
			}
		}
		wantID, wantOK := ids[name]
		if id, ok := p.id(name); ok != wantOK || ok && id != wantID {
			t.Fatalf("id(%q) = %d, %v; the map says %d, %v", name, id, ok, wantID, wantOK)
		}
		for n, want := range ids {
			if id, ok := p.id(n); !ok || id != want {
				t.Fatalf("id(%q) = %d, %v; want %d", n, id, ok, want)
			}
		}
	})
}
