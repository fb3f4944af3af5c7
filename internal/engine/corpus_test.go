package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// randScoring generates random contracts and traces over a few tools with
// values chosen to collide often (equal after trimming or numerically,
// matched or not by the matchers).
type randScoring struct{ r *rand.Rand }

var (
	randTools      = []string{"a", "b", "c", "d"}
	randExtraTools = []string{"x", "y", "z0", "z1", "z2", "z3", "z4", "z5", "z6", "z7", "z8", "z9"}
	randKeys       = []string{"k", "q", "n"}
)

func (g randScoring) tool(extra bool) string {
	return g.toolP(extra, 4)
}

// toolP draws a tool, one the contract does not name with probability
// 1/n when extra.
func (g randScoring) toolP(extra bool, n int) string {
	if extra && g.r.IntN(n) == 0 {
		return randExtraTools[g.r.IntN(len(randExtraTools))]
	}
	return randTools[g.r.IntN(len(randTools))]
}

// args returns a JSON object text, or "null" when maybeNull and drawn.
func (g randScoring) args(matchers, maybeNull bool) string {
	if maybeNull && g.r.IntN(5) == 0 {
		return "null"
	}
	n := g.r.IntN(len(randKeys) + 1)
	keys := slices.Clone(randKeys)
	g.r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	s := "{"
	for i := 0; i < n; i++ {
		v := randPlain[g.r.IntN(len(randPlain))]
		if matchers && g.r.IntN(2) == 0 {
			v = randMatchers[g.r.IntN(len(randMatchers))]
		}
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf("%q:%s", keys[i], v)
	}
	return s + "}"
}

func (g randScoring) call() string {
	return fmt.Sprintf(`{"tool":%q,"args":%s}`, g.tool(false), g.args(true, true))
}

func (g randScoring) contract() string {
	var req []string
	groups := false
	for range g.r.IntN(6) {
		if g.r.IntN(3) == 0 {
			groups = true
			var opts []string
			for range 1 + g.r.IntN(3) {
				if g.r.IntN(2) == 0 {
					opts = append(opts, g.call())
				} else {
					opts = append(opts, "["+g.call()+","+g.call()+"]")
				}
			}
			req = append(req, fmt.Sprintf(`{"alternatives":[%s]}`, join(opts)))
		} else {
			req = append(req, g.call())
		}
	}
	var opt, forb []string
	for range g.r.IntN(3) {
		opt = append(opt, g.call())
	}
	for range g.r.IntN(3) {
		forb = append(forb, fmt.Sprintf(`{"tool":%q,"args":%s,"reason":"r"}`, g.tool(true), g.args(true, true)))
	}
	if !groups && g.r.IntN(4) == 0 { // a gold file
		return "[" + join(req) + "]"
	}
	return fmt.Sprintf(`{"contract_version":2,"required":[%s],"optional":[%s],"forbidden":[%s]}`, join(req), join(opt), join(forb))
}

func (g randScoring) trace() Trace {
	var t Trace
	n, p := g.r.IntN(10), 4
	if g.r.IntN(10) == 0 { // long, with many tools the contract does not name
		n, p = 20+g.r.IntN(20), 2
	}
	for range n {
		c := ToolCall{Tool: g.toolP(true, p)}
		if a := g.args(false, true); a != "null" {
			v, err := DecodeJSON([]byte(a))
			if err != nil {
				panic(err)
			}
			c.Args = jsondoc.MustFromAny(v)
		}
		if g.r.IntN(12) == 0 {
			c.Args, c.ArgsRaw, c.ArgsError = jsondoc.Value{}, "{", "unexpected end of JSON input"
		}
		t.Calls = append(t.Calls, c)
	}
	return t
}

func join(xs []string) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ","
		}
		s += x
	}
	return s
}

// TestEvaluateConcurrent evaluates one fresh contract from many goroutines
// at once (its plan is built by whichever comes first, scorers come from
// a shared pool) and requires every result to equal the sequential one.
func TestEvaluateConcurrent(t *testing.T) {
	g := randScoring{rand.New(rand.NewPCG(7, 8))}
	const doc = `{"contract_version":2,"required":[{"tool":"a","args":{"k":{"$regex":"^a"}}},{"alternatives":[{"tool":"b","args":{"n":1}},[{"tool":"c"},{"tool":"d","args":{"q":{"$one_of":[1,"a"]}}}]]}],"optional":[{"tool":"x"}]}`
	traces := make([]Trace, 16)
	want := make([][]byte, len(traces))
	ref := mustContract(t, doc)
	for i := range traces {
		traces[i] = g.trace()
		want[i], _ = json.Marshal(mustEvaluate(t, ref, traces[i], Options{SecretScanner: testSecrets}))
	}
	c := mustContract(t, doc)
	var wg sync.WaitGroup
	errs := make(chan string, len(traces)*4)
	for range 4 {
		for i := range traces {
			wg.Go(func() {
				res, err := Evaluate(context.Background(), c, traces[i], Options{SecretScanner: testSecrets})
				if err != nil {
					errs <- err.Error()
					return
				}
				if got, _ := json.Marshal(res); string(got) != string(want[i]) {
					errs <- fmt.Sprintf("trace %d:\n got %s\nwant %s", i, got, want[i])
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestLevenshteinBits compares the bit-parallel edit distance with the
// dynamic programme on random tool sequences of every length up to 64.
func TestLevenshteinBits(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	sc := &scorer{}
	for n := range 3000 {
		m := 1 + n%64
		sc.nt = 1 + r.IntN(6)
		sc.gTool = make([]int, r.IntN(70))
		for i := range sc.gTool {
			sc.gTool[i] = r.IntN(sc.nt)
		}
		sc.sTool = make([]int, m)
		for i := range sc.sTool {
			sc.sTool[i] = r.IntN(sc.nt)
		}
		got := sc.levenshteinBits()
		// The dynamic programme, written out.
		prev := make([]int, m+1)
		for j := range prev {
			prev[j] = j
		}
		for i, gt := range sc.gTool {
			cur := make([]int, m+1)
			cur[0] = i + 1
			for j, st := range sc.sTool {
				cost := 1
				if st == gt {
					cost = 0
				}
				cur[j+1] = min(prev[j+1]+1, cur[j]+1, prev[j]+cost)
			}
			prev = cur
		}
		if got != prev[m] {
			t.Fatalf("G %v S %v: bit-parallel distance %d, dynamic programme %d", sc.gTool, sc.sTool, got, prev[m])
		}
	}
}
