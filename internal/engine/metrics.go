package engine

import "sort"

// expected is one expected call of a combination with its interned tool.
type expected struct {
	call *ExpectedCall
	tool int
	idx  int // index among all the contract's expected calls, for memos
}

// emptyArgs stands for a trace call without arguments; never written to.
var emptyArgs = map[string]any{}

// argsOf returns a trace call's arguments, {} for none, and whether they
// could be read at all.
func argsOf(c *ToolCall) (map[string]any, bool) {
	if c.ArgsError != "" {
		return nil, false
	}
	if c.Args == nil {
		return emptyArgs, true
	}
	return c.Args, true
}

// argsSatisfy reports whether a trace call's arguments satisfy want: every
// key of want is present and compares equal (extra keys are allowed; this
// is "every checked argument compares equal" of SPEC section 3). want nil
// means unchecked and is always satisfied; unreadable arguments never
// satisfy a non-nil want, not even {}.
func argsSatisfy(want map[string]any, c *ToolCall, opts CompareOptions) bool {
	if want == nil {
		return true
	}
	args, ok := argsOf(c)
	if !ok {
		return false
	}
	for k, ev := range want {
		av, ok := args[k]
		if !ok || !Compare(ev, av, opts) {
			return false
		}
	}
	return true
}

// scorer scores the combinations of one contract against one trace. It
// holds scratch buffers reused across combinations; not for concurrent use.
type scorer struct {
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
	// memo caches, per (expected call, trace call) pair, how many expected
	// keys compare equal (memo[2p]) and whether the call satisfies the
	// expected call (memo[2p+1]); -1 when not yet computed. Combinations
	// share expected calls, so each pair is compared at most once.
	memo []int32

	// Scratch, sized by tool count or call counts.
	cursor, countG, countS []int
	nextSame, filledBy     []int
	scored, sTool, lev     []int
	used                   []bool
}

func newScorer(c *Contract, t *Trace, cmp CompareOptions, w Weights) *scorer {
	sc := &scorer{c: c, t: t, cmp: cmp, w: w, ids: make(map[string]int, 16)}
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

func (sc *scorer) intern(name string) int {
	if id, ok := sc.ids[name]; ok {
		return id
	}
	id := len(sc.names)
	sc.ids[name] = id
	sc.names = append(sc.names, name)
	return id
}

// combination appends to G the expected calls of the combination that
// picks option choice[g] of the g-th group.
func (sc *scorer) combination(G []expected, choice []int) []expected {
	g := 0
	for s, st := range sc.c.Required {
		if st.Call != nil {
			G = append(G, expected{st.Call, sc.stepTool[s][0][0], sc.stepIdx[s][0][0]})
			continue
		}
		o := choice[g]
		g++
		calls := st.Group.Options[o]
		for k := range calls {
			G = append(G, expected{&calls[k], sc.stepTool[s][o][k], sc.stepIdx[s][o][k]})
		}
	}
	return G
}

// fill walks the trace for combination G (SPEC section 4.2): the k-th trace
// call of a tool fills the k-th expected call of that tool; of the calls
// left over, those matching an optional entry are left out; everything
// else is scored. It sets sc.scored, sc.sTool and sc.filledBy and returns
// the indexes left out as optional (only when wantOptional).
func (sc *scorer) fill(G []expected, wantOptional bool) []int {
	for t := range sc.cursor {
		sc.cursor[t] = -1
	}
	sc.nextSame = grow(sc.nextSame, len(G))
	sc.filledBy = grow(sc.filledBy, len(G))
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

func grow(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}

// figures are the metrics of one combination.
type figures struct {
	selection, invocation, toolCorrectness float64
	precision, recall, f1                  float64
	editDistance, normDistance, seqAcc     float64
	redundant                              int
	redundantRate, recall2                 float64
	correctTools                           int
	distinctG                              int
}

// score returns the composite score of combination G.
func (sc *scorer) score(G []expected) float64 {
	sc.fill(G, false)
	f := sc.figures(G)
	return sc.w.composite(f.selection, f.f1, f.seqAcc, f.redundantRate, f.recall2)
}

// figures computes SPEC section 3 for G against sc.scored (set by fill).
func (sc *scorer) figures(G []expected) figures {
	var f figures
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

// satisfy matches expected calls in order to the first unused scored call
// that fully satisfies each, and returns how many were satisfied. When by
// is non-nil, by[i] is set to the trace index satisfying G[i], or -1.
func (sc *scorer) satisfy(G []expected, by []int) int {
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

// correct returns how many of g's expected arguments compare equal in
// trace call i (memoised).
func (sc *scorer) correct(g expected, i int) int {
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
func (sc *scorer) satisfies(g expected, i int) bool {
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
func (sc *scorer) levenshtein(G []expected) int {
	n, m := len(G), len(sc.sTool)
	if n == 0 {
		return m
	}
	if m == 0 {
		return n
	}
	sc.lev = grow(sc.lev, 2*(m+1))
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

// evaluation builds the full state for the chosen combination G.
func (sc *scorer) evaluation(G []expected, opts Options) *evaluation {
	optional := sc.fill(G, true)
	f := sc.figures(G)
	ev := &evaluation{
		contract:    sc.c,
		opts:        opts,
		cmp:         sc.cmp,
		trace:       *sc.t,
		expected:    make([]ExpectedCall, len(G)),
		filledBy:    append([]int{}, sc.filledBy[:len(G)]...),
		satisfiedBy: make([]int, len(G)),
		scored:      append([]int{}, sc.scored...),
		optional:    optional,
	}
	if ev.optional == nil {
		ev.optional = []int{}
	}
	for i, g := range G {
		ev.expected[i] = *g.call
	}
	sc.satisfy(G, ev.satisfiedBy)

	ev.forbidden = append(append([]ForbiddenCall{}, sc.c.Forbidden...), opts.Forbidden...)
	for i := range sc.t.Calls {
		call := &sc.t.Calls[i]
		for r := range ev.forbidden {
			if ev.forbidden[r].Tool == call.Tool && argsSatisfy(ev.forbidden[r].Args, call, sc.cmp) {
				ev.violations = append(ev.violations, violation{call: i, rule: r})
				break
			}
		}
	}

	m := &Metrics{
		SelectionAccuracy:  f.selection,
		InvocationAccuracy: f.invocation,
		RequiredCallRecall: f.recall2,
		Arguments:          ArgumentMetrics{Precision: f.precision, Recall: f.recall, F1: f.f1},
		Sequence:           SequenceMetrics{EditDistance: f.editDistance, NormalizedDistance: f.normDistance, SequenceAccuracy: f.seqAcc},
		Efficiency:         EfficiencyMetrics{RedundantCount: f.redundant, TotalCalls: len(sc.scored), RedundantRate: f.redundantRate},
		Weights:            sc.w,
	}
	tc := ToolCorrectnessMetrics{
		ToolCorrectness: f.toolCorrectness,
		ExpectedTools:   []string{},
		CalledTools:     []string{},
		MissingTools:    []string{},
		ExtraTools:      []string{},
		CorrectCount:    f.correctTools,
		TotalExpected:   f.distinctG,
	}
	for t, name := range sc.names {
		g, s := sc.countG[t] > 0, sc.countS[t] > 0
		if g {
			tc.ExpectedTools = append(tc.ExpectedTools, name)
		}
		if s {
			tc.CalledTools = append(tc.CalledTools, name)
		}
		if g && !s {
			tc.MissingTools = append(tc.MissingTools, name)
		}
		if s && !g {
			tc.ExtraTools = append(tc.ExtraTools, name)
		}
	}
	for _, l := range [][]string{tc.ExpectedTools, tc.CalledTools, tc.MissingTools, tc.ExtraTools} {
		sort.Strings(l)
	}
	m.ToolCorrectness = tc
	ev.metrics = m
	return ev
}
