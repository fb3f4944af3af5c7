package engine

// The scorer before contracts were compiled into plans (metrics.go at
// commit 128bb1c, renamed), kept as the reference the compiled scorer must
// agree with figure for figure on random contracts and traces.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// refExpected is one expected call of a combination with its interned tool.
type refExpected struct {
	call *ExpectedCall
	tool int
	idx  int // index among all the contract's expected calls, for memos
}

// refScorer scores the combinations of one contract against one trace. It
// holds scratch buffers reused across combinations; not for concurrent use.
type refScorer struct {
	c     *Contract
	t     *Trace
	cmp   CompareOptions
	w     Weights
	names []string       // interned tool names, by id
	ids   map[string]int // name -> id
	// callTool[i] is the tool id of trace call i.
	callTool []int
	// stepTool[s][o][k] is the tool id of step s, option o (0 for a plain
	// call), call k.
	stepTool [][][]int
	// stepIdx[s][o][k] is the memo index of step s, option o, call k.
	stepIdx [][][]int
	nExp    int
	// optional[i] reports whether trace call i matches an optional entry.
	optional []bool
	// memo caches, per (refExpected call, trace call) pair, how many refExpected
	// keys compare equal (memo[2p]) and whether the call satisfies the
	// refExpected call (memo[2p+1]); -1 when not yet computed. Combinations
	// share refExpected calls, so each pair is compared at most once.
	memo []int32

	// Scratch, sized by tool count or call counts.
	cursor, countG, countS []int
	nextSame, filledBy     []int
	scored, sTool, lev     []int
	used                   []bool
}

func newRefScorer(c *Contract, t *Trace, cmp CompareOptions, w Weights) *refScorer {
	sc := &refScorer{c: c, t: t, cmp: cmp, w: w, ids: make(map[string]int, 16)}
	sc.callTool = make([]int, len(t.Calls))
	for i := range t.Calls {
		sc.callTool[i] = sc.intern(t.Calls[i].Tool)
	}
	sc.stepTool = make([][][]int, len(c.Required))
	sc.stepIdx = make([][][]int, len(c.Required))
	for s, st := range c.Required {
		if st.Call != nil {
			sc.stepTool[s] = [][]int{{sc.intern(st.Call.Tool)}}
			sc.stepIdx[s] = [][]int{{sc.nExp}}
			sc.nExp++
			continue
		}
		opts := make([][]int, len(st.Group.Options))
		idxs := make([][]int, len(st.Group.Options))
		for o, calls := range st.Group.Options {
			opts[o] = make([]int, len(calls))
			idxs[o] = make([]int, len(calls))
			for k := range calls {
				opts[o][k] = sc.intern(calls[k].Tool)
				idxs[o][k] = sc.nExp
				sc.nExp++
			}
		}
		sc.stepTool[s] = opts
		sc.stepIdx[s] = idxs
	}
	sc.memo = make([]int32, 2*sc.nExp*len(t.Calls))
	for i := range sc.memo {
		sc.memo[i] = -1
	}
	if len(c.Optional) > 0 {
		sc.optional = make([]bool, len(t.Calls))
		for i := range t.Calls {
			call := &t.Calls[i]
			for j := range c.Optional {
				o := &c.Optional[j]
				if o.Tool == call.Tool && argsSatisfy(o.Args, call, cmp) {
					sc.optional[i] = true
					break
				}
			}
		}
	}
	nt := len(sc.names)
	sc.cursor = make([]int, nt)
	sc.countG = make([]int, nt)
	sc.countS = make([]int, nt)
	return sc
}

func (sc *refScorer) intern(name string) int {
	if id, ok := sc.ids[name]; ok {
		return id
	}
	id := len(sc.names)
	sc.ids[name] = id
	sc.names = append(sc.names, name)
	return id
}

// combination appends to G the refExpected calls of the combination that
// picks option choice[g] of the g-th group.
func (sc *refScorer) combination(G []refExpected, choice []int) []refExpected {
	g := 0
	for s, st := range sc.c.Required {
		if st.Call != nil {
			G = append(G, refExpected{st.Call, sc.stepTool[s][0][0], sc.stepIdx[s][0][0]})
			continue
		}
		o := choice[g]
		g++
		calls := st.Group.Options[o]
		for k := range calls {
			G = append(G, refExpected{&calls[k], sc.stepTool[s][o][k], sc.stepIdx[s][o][k]})
		}
	}
	return G
}

// fill walks the trace for combination G (SPEC section 4.2): the k-th trace
// call of a tool fills the k-th refExpected call of that tool; of the calls
// left over, those matching an optional entry are left out; everything
// else is scored. It sets sc.scored, sc.sTool and sc.filledBy and returns
// the indexes left out as optional (only when wantOptional).
func (sc *refScorer) fill(G []refExpected, wantOptional bool) []int {
	for t := range sc.cursor {
		sc.cursor[t] = -1
	}
	sc.nextSame = refGrow(sc.nextSame, len(G))
	sc.filledBy = refGrow(sc.filledBy, len(G))
	for i := len(G) - 1; i >= 0; i-- {
		t := G[i].tool
		sc.nextSame[i] = sc.cursor[t]
		sc.cursor[t] = i
		sc.filledBy[i] = -1
	}
	sc.scored = sc.scored[:0]
	sc.sTool = sc.sTool[:0]
	var optional []int
	for i, t := range sc.callTool {
		if e := sc.cursor[t]; e >= 0 {
			sc.filledBy[e] = i
			sc.cursor[t] = sc.nextSame[e]
		} else if sc.optional != nil && sc.optional[i] {
			if wantOptional {
				optional = append(optional, i)
			}
			continue
		}
		sc.scored = append(sc.scored, i)
		sc.sTool = append(sc.sTool, t)
	}
	return optional
}

func refGrow(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}

// refFigures are the metrics of one combination.
type refFigures struct {
	selection, invocation, toolCorrectness float64
	precision, recall, f1                  float64
	editDistance, normDistance, seqAcc     float64
	redundant                              int
	redundantRate, recall2                 float64
	correctTools                           int
	distinctG                              int
}

// score returns the composite score of combination G.
func (sc *refScorer) score(G []refExpected) float64 {
	sc.fill(G, false)
	f := sc.refFigures(G)
	return sc.w.composite(f.selection, f.f1, f.seqAcc, f.redundantRate, f.recall2)
}

// refFigures computes SPEC section 3 for G against sc.scored (set by fill).
func (sc *refScorer) refFigures(G []refExpected) refFigures {
	var f refFigures
	nG, nS := len(G), len(sc.scored)
	for t := range sc.countG {
		sc.countG[t], sc.countS[t] = 0, 0
	}
	for _, g := range G {
		sc.countG[g.tool]++
	}
	for _, t := range sc.sTool {
		sc.countS[t]++
	}
	distinctG, distinctS, inter := 0, 0, 0
	for t := range sc.countG {
		if sc.countG[t] > 0 {
			distinctG++
		}
		if sc.countS[t] > 0 {
			distinctS++
		}
		if sc.countG[t] > 0 && sc.countS[t] > 0 {
			inter++
		}
		if d := sc.countS[t] - sc.countG[t]; d > 0 {
			f.redundant += d
		}
	}
	f.distinctG, f.correctTools = distinctG, inter

	// selection_accuracy
	switch {
	case nS == 0:
		if nG == 0 {
			f.selection = 1
		}
	case nG == 0:
	default:
		hits := 0
		for _, t := range sc.sTool {
			if sc.countG[t] > 0 {
				hits++
			}
		}
		f.selection = float64(hits) / float64(nS)
	}

	// invocation_accuracy
	switch {
	case nG == 0 && nS == 0:
		f.invocation = 1
	case nG == 0 || nS == 0:
	default:
		extra, missing := distinctS-inter, distinctG-inter
		v := (float64(inter) - 0.5*float64(extra+missing)) / float64(distinctG)
		f.invocation = max(0, min(1, v))
	}

	// tool_correctness
	if distinctG == 0 {
		if nS == 0 {
			f.toolCorrectness = 1
		}
	} else {
		f.toolCorrectness = float64(inter) / float64(distinctG)
	}

	// sequence: Levenshtein over whole names.
	d := sc.levenshtein(G)
	f.editDistance = float64(d)
	f.normDistance = float64(d) / float64(max(nG, nS, 1))
	f.seqAcc = 1 - f.normDistance

	// argument precision / recall / F1
	if nG == 0 && nS == 0 {
		f.precision, f.recall, f.f1 = 1, 1, 1 // SPEC deviation: both empty
	} else {
		correct, expectedN, provided := 0, 0, 0
		vacuous := false
		for i, g := range G {
			j := -1
			for k := i; k < nS; k++ {
				if sc.sTool[k] == g.tool {
					j = k
					break
				}
			}
			if g.call.Args == nil {
				if j >= 0 {
					vacuous = true
				}
				continue
			}
			expectedN += len(g.call.Args)
			if j < 0 {
				continue
			}
			args, ok := argsOf(&sc.t.Calls[sc.scored[j]])
			if !ok {
				continue
			}
			provided += len(args)
			if len(g.call.Args) == 0 && len(args) == 0 {
				vacuous = true
			}
			correct += sc.correct(g, sc.scored[j])
		}
		if expectedN == 0 && provided == 0 && vacuous {
			f.precision, f.recall, f.f1 = 1, 1, 1
		} else {
			if provided > 0 {
				f.precision = float64(correct) / float64(provided)
			}
			if expectedN > 0 {
				f.recall = float64(correct) / float64(expectedN)
			}
			if f.precision+f.recall > 0 {
				f.f1 = 2 * f.precision * f.recall / (f.precision + f.recall)
			}
		}
	}

	// redundancy
	if nS > 0 {
		f.redundantRate = float64(f.redundant) / float64(nS)
	}

	// required_call_recall
	if nG == 0 {
		f.recall2 = 1
	} else {
		f.recall2 = float64(sc.satisfy(G, nil)) / float64(nG)
	}
	return f
}

// satisfy matches refExpected calls in order to the first unused scored call
// that fully satisfies each, and returns how many were satisfied. When by
// is non-nil, by[i] is set to the trace index satisfying G[i], or -1.
func (sc *refScorer) satisfy(G []refExpected, by []int) int {
	if cap(sc.used) < len(sc.scored) {
		sc.used = make([]bool, len(sc.scored))
	}
	used := sc.used[:len(sc.scored)]
	clear(used)
	n := 0
	for i, g := range G {
		if by != nil {
			by[i] = -1
		}
		for k, t := range sc.sTool {
			if used[k] || t != g.tool {
				continue
			}
			if sc.satisfies(g, sc.scored[k]) {
				used[k] = true
				n++
				if by != nil {
					by[i] = sc.scored[k]
				}
				break
			}
		}
	}
	return n
}

// correct returns how many of g's refExpected arguments compare equal in
// trace call i (memoised).
func (sc *refScorer) correct(g refExpected, i int) int {
	m := &sc.memo[2*(g.idx*len(sc.t.Calls)+i)]
	if *m < 0 {
		n := 0
		if args, ok := argsOf(&sc.t.Calls[i]); ok {
			for k, ev := range g.call.Args {
				if av, ok := args[k]; ok && Compare(ev, av, sc.cmp) {
					n++
				}
			}
		}
		*m = int32(n)
	}
	return int(*m)
}

// satisfies reports whether trace call i fully satisfies g (memoised).
func (sc *refScorer) satisfies(g refExpected, i int) bool {
	m := &sc.memo[2*(g.idx*len(sc.t.Calls)+i)+1]
	if *m < 0 {
		*m = 0
		if g.call.Args == nil {
			*m = 1
		} else if _, ok := argsOf(&sc.t.Calls[i]); ok && sc.correct(g, i) == len(g.call.Args) {
			*m = 1
		}
	}
	return *m == 1
}

// levenshtein is the edit distance between the tool sequences of G and S.
func (sc *refScorer) levenshtein(G []refExpected) int {
	n, m := len(G), len(sc.sTool)
	if n == 0 {
		return m
	}
	if m == 0 {
		return n
	}
	sc.lev = refGrow(sc.lev, 2*(m+1))
	prev, cur := sc.lev[:m+1], sc.lev[m+1:]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= n; i++ {
		cur[0] = i
		gt := G[i-1].tool
		for j := 1; j <= m; j++ {
			cost := 1
			if sc.sTool[j-1] == gt {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[m]
}

// refOutcome is what the reference computes for one evaluation.
type refOutcome struct {
	Scores      []float64
	Best        int
	Figures     refFigures
	FilledBy    []int
	SatisfiedBy []int
	Scored      []int
	Optional    []int
	Violations  []violation
	ToolLists   [4][]string
}

// refEvaluate scores every combination as Evaluate did before plans.
func refEvaluate(c *Contract, t Trace, opts Options, w Weights) refOutcome {
	cmpOpts := CompareOptions{Strict: opts.Strict}
	sc := newRefScorer(c, &t, cmpOpts, w)
	var groups []int
	for i, st := range c.Required {
		if st.Group != nil {
			groups = append(groups, i)
		}
	}
	choice := make([]int, len(groups))
	combos := max(c.Combinations(), 1)
	var out refOutcome
	best, bestScore := -1, 0.0
	var bestChoice []int
	for k := 0; k < combos; k++ {
		rem := k
		for g := len(groups) - 1; g >= 0; g-- {
			n := len(c.Required[groups[g]].Group.Options)
			choice[g] = rem % n
			rem /= n
		}
		G := sc.combination(nil, choice)
		score := sc.score(G)
		out.Scores = append(out.Scores, score)
		if best < 0 || score > bestScore+1e-12 {
			best, bestScore = k, score
			bestChoice = append(bestChoice[:0], choice...)
		}
	}
	out.Best = best
	G := sc.combination(nil, bestChoice)
	out.Optional = sc.fill(G, true)
	out.Figures = sc.refFigures(G)
	out.FilledBy = append([]int{}, sc.filledBy[:len(G)]...)
	out.SatisfiedBy = make([]int, len(G))
	sc.satisfy(G, out.SatisfiedBy)
	out.Scored = append([]int{}, sc.scored...)
	forbidden := append(append([]ForbiddenCall{}, c.Forbidden...), opts.Forbidden...)
	for i := range t.Calls {
		for r := range forbidden {
			if forbidden[r].Tool == t.Calls[i].Tool && argsSatisfy(forbidden[r].Args, &t.Calls[i], cmpOpts) {
				out.Violations = append(out.Violations, violation{call: i, rule: r})
				break
			}
		}
	}
	for t, name := range sc.names {
		g, s := sc.countG[t] > 0, sc.countS[t] > 0
		if g {
			out.ToolLists[0] = append(out.ToolLists[0], name)
		}
		if s {
			out.ToolLists[1] = append(out.ToolLists[1], name)
		}
		if g && !s {
			out.ToolLists[2] = append(out.ToolLists[2], name)
		}
		if s && !g {
			out.ToolLists[3] = append(out.ToolLists[3], name)
		}
	}
	for i := range out.ToolLists {
		sort.Strings(out.ToolLists[i])
	}
	return out
}

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
			c.Args = v.(map[string]any)
		}
		if g.r.IntN(12) == 0 {
			c.Args, c.ArgsRaw, c.ArgsError = nil, "{", "unexpected end of JSON input"
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

// TestScoringMatchesReference evaluates random contracts and traces with
// the compiled scorer and with the reference and requires every figure,
// every combination's score and every index list to be identical.
func TestScoringMatchesReference(t *testing.T) {
	g := randScoring{rand.New(rand.NewPCG(1, 2))}
	weights := []map[string]float64{nil, {"argument_f1": 0}, {"sequence_accuracy": 0, "redundant_rate": 0}, {"required_call_recall": 0.3}, {"selection_accuracy": 0, "argument_f1": 0, "sequence_accuracy": 0, "redundant_rate": 0, "required_call_recall": 1}}
	for n := 0; n < 2000; n++ {
		doc := g.contract()
		c, err := ParseContract([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		tr := g.trace()
		opts := Options{Strict: g.r.IntN(3) == 0, Weights: weights[g.r.IntN(len(weights))]}
		if g.r.IntN(4) == 0 {
			opts.Forbidden = []ForbiddenCall{{Tool: g.tool(true)}, {Tool: g.tool(false), Args: map[string]any{"k": "a"}}}
		}
		res, err := Evaluate(context.Background(), c, tr, opts)
		if err != nil {
			t.Fatal(err)
		}
		w, _ := effectiveWeights(c.Weights, opts.Weights)
		ref := refEvaluate(c, tr, opts, w)
		ev := mustEvaluation(t, c, tr, opts)
		trJSON, _ := json.Marshal(tr)
		where := fmt.Sprintf("case %d\ncontract %s\ntrace %s\noptions %+v", n, doc, trJSON, opts)

		if res.Score != ref.Scores[ref.Best] {
			t.Fatalf("%s\nscore %v, reference %v", where, res.Score, ref.Scores[ref.Best])
		}
		if cm := res.Metrics.Contract; cm != nil {
			var scores []float64
			for _, cs := range cm.Alternatives.Combinations {
				scores = append(scores, cs.Score)
			}
			if !slices.Equal(scores, ref.Scores) {
				t.Fatalf("%s\ncombination scores %v, reference %v", where, scores, ref.Scores)
			}
			if !slices.Equal(cm.OptionalMatched, append([]int{}, ref.Optional...)) {
				t.Fatalf("%s\noptional %v, reference %v", where, cm.OptionalMatched, ref.Optional)
			}
		}
		f, m := ref.Figures, res.Metrics
		want := Metrics{
			SelectionAccuracy:  f.selection,
			InvocationAccuracy: f.invocation,
			RequiredCallRecall: f.recall2,
			Arguments:          ArgumentMetrics{Precision: f.precision, Recall: f.recall, F1: f.f1},
			Sequence:           SequenceMetrics{EditDistance: f.editDistance, NormalizedDistance: f.normDistance, SequenceAccuracy: f.seqAcc},
			Efficiency:         EfficiencyMetrics{RedundantCount: f.redundant, TotalCalls: len(ref.Scored), RedundantRate: f.redundantRate},
			ToolCorrectness: ToolCorrectnessMetrics{
				ToolCorrectness: f.toolCorrectness,
				ExpectedTools:   nonNil(ref.ToolLists[0]),
				CalledTools:     nonNil(ref.ToolLists[1]),
				MissingTools:    nonNil(ref.ToolLists[2]),
				ExtraTools:      nonNil(ref.ToolLists[3]),
				CorrectCount:    f.correctTools,
				TotalExpected:   f.distinctG,
			},
			Weights: w,
		}
		m.Contract = nil // compared above
		if diff := cmp.Diff(want, m); diff != "" {
			t.Fatalf("%s\nmetrics differ from the reference (-want +got):\n%s", where, diff)
		}
		got := [][]int{ev.filledBy, ev.satisfiedBy, ev.scored, res.ScoredIndexes}
		exp := [][]int{ref.FilledBy, ref.SatisfiedBy, ref.Scored, ref.Scored}
		for i := range got {
			if !slices.Equal(got[i], exp[i]) {
				t.Fatalf("%s\nindex list %d: %v, reference %v", where, i, got[i], exp[i])
			}
		}
		if !slices.Equal(ev.violations, ref.Violations) {
			t.Fatalf("%s\nviolations %v, reference %v", where, ev.violations, ref.Violations)
		}
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
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
		want[i], _ = json.Marshal(mustEvaluate(t, ref, traces[i], Options{}))
	}
	c := mustContract(t, doc)
	var wg sync.WaitGroup
	errs := make(chan string, len(traces)*4)
	for range 4 {
		for i := range traces {
			wg.Go(func() {
				res, err := Evaluate(context.Background(), c, traces[i], Options{})
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
