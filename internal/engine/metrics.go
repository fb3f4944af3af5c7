package engine

import (
	"context"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// argsOf returns a trace call's arguments (the zero Value, which reads as
// {}, for none), and whether they could be read at all.
func argsOf(c *ToolCall) (jsondoc.Value, bool) {
	if c.ArgsError != "" {
		return jsondoc.Value{}, false
	}
	return c.Args, true
}

// argsSatisfyCompiled reports whether a trace call's arguments satisfy
// want: every key of want is present and compares equal (extra keys are
// allowed; this is "every checked argument compares equal" of SPEC section
// 3). want nil means unchecked and is always satisfied; unreadable
// arguments never satisfy a non-nil want, not even {}.
func argsSatisfyCompiled(want *cval, c *ToolCall, strict bool) bool {
	if want == nil {
		return true
	}
	args, ok := argsOf(c)
	return ok && want.satisfiedBy(args, strict)
}

// scorer scores the combinations of one contract against one trace. It
// holds scratch buffers reused across combinations (and, through
// scorerPool, across evaluations); not for concurrent use.
type scorer struct {
	c *Contract
	p *contractPlan
	t *Trace
	// tr is the trace t points to: a copy of the caller's Trace value.
	tr     Trace
	cmp    CompareOptions
	strict bool
	w      Weights
	// ctx, when set (Evaluate sets it), is polled as the scoring works:
	// once work reaches pollWork, work starts again from 0 and ctx.Err()
	// is looked at; stopped is then that error, and the scoring figures
	// are not to be used (Evaluate returns ctx.Err()).
	ctx     context.Context
	work    int
	stopped error
	// nt is the number of tool ids: the plan's, then extra.
	nt int
	// extra are the trace's tool names the contract does not name, with
	// ids from len(p.names); extraIDs indexes them once there are many.
	extra    []string
	extraIDs map[string]int
	// callTool[i] is the tool id of trace call i.
	callTool []int
	// optional[i] reports whether trace call i matches an optional entry;
	// nil when the contract has none.
	optional []bool
	// memo caches, per (expected call, trace call) pair, 1 + how many
	// expected keys compare equal; 0 when not yet computed, -1 when only
	// known not to satisfy (see satisfies). Combinations share expected
	// calls, so each pair is compared at most once or twice.
	memo []int32
	// callArgs[i] indexes trace call i's arguments once argIndex has
	// built it, with their members in members.
	callArgs []callArgs
	members  []argMember

	// Scratch, sized by tool count or call counts.
	cursor, countG, countS []int
	firstS                 []int
	nextSame, filledBy     []int
	scored, sTool, nextS   []int
	lev                    []int
	peq                    []uint64
	used, optBuf           []bool
	// tmp is two counts per tool id, for the issue list (evaluation.tmp);
	// scanTexts is the credential scan's scratch (empty between scans).
	tmp       []int
	scanTexts scanScratch
	// ev, metrics and expArgs hold the evaluation of the chosen
	// combination (see evaluation).
	ev      evaluation
	metrics Metrics
	expArgs []*cval
	// metricsTo, when set, is where evaluation writes the metrics
	// instead of metrics (the result's own).
	metricsTo *Metrics
	// orderBuf, markBuf and diff are the issue list's scratch (see
	// evaluation.orderBuf).
	orderBuf []int
	markBuf  []bool
	diff     argDiff

	// G is the current combination (set by use): indexes into p.exps;
	// gTool holds their tool ids; choice is the options it was made from,
	// valid when gValid.
	G, gTool []int
	choice   []int
	gValid   bool
	// filled reports that fill has run for G: scored, sTool, filledBy,
	// firstS, nextS and optIdx (the trace indexes left out as optional)
	// are G's.
	filled bool
	optIdx []int
	// have says which figures of G last holds (haveBase: the tool counts,
	// selection, invocation, tool correctness and redundancy; countG and
	// countS are then G's too); satBy[i] is the trace index satisfying
	// G[i] (or -1) once have has needRecall.
	have  need
	last  figures
	satBy []int
}

// scorerPool recycles scorers and their buffers across evaluations.
var scorerPool = sync.Pool{New: func() any { return new(scorer) }}

// newScorer returns a scorer of contract c against trace t, from the pool;
// give it back with release once nothing reads its buffers.
func newScorer(c *Contract, t *Trace, cmp CompareOptions, w Weights) *scorer {
	p := c.scoringPlan()
	sc := scorerPool.Get().(*scorer)
	sc.tr = *t
	sc.c, sc.p, sc.t, sc.cmp, sc.strict, sc.w = c, p, &sc.tr, cmp, cmp.Strict, w
	t = sc.t
	sc.nt = len(p.names)
	sc.extra = sc.extra[:0]
	if sc.extraIDs != nil {
		clear(sc.extraIDs)
	}
	sc.callTool = grow(sc.callTool, len(t.Calls))
	for i := range t.Calls {
		if i > 0 && t.Calls[i].Tool == t.Calls[i-1].Tool {
			sc.callTool[i] = sc.callTool[i-1]
			continue
		}
		sc.callTool[i] = sc.toolID(t.Calls[i].Tool)
	}
	n := p.nExp * len(t.Calls)
	if cap(sc.memo) < n {
		sc.memo = make([]int32, n)
	} else {
		sc.memo = sc.memo[:n]
		clear(sc.memo)
	}
	if cap(sc.callArgs) < len(t.Calls) {
		sc.callArgs = make([]callArgs, len(t.Calls))
	}
	sc.callArgs = sc.callArgs[:len(t.Calls)]
	clear(sc.callArgs)
	sc.members = sc.members[:0]
	sc.optional = nil
	if len(p.optional) > 0 {
		if cap(sc.optBuf) < len(t.Calls) {
			sc.optBuf = make([]bool, len(t.Calls))
		}
		sc.optional = sc.optBuf[:len(t.Calls)]
		for i := range t.Calls {
			sc.optional[i] = false
			for _, o := range p.optional {
				if o.tool == sc.callTool[i] && argsSatisfyCompiled(o.args, &t.Calls[i], sc.strict) {
					sc.optional[i] = true
					break
				}
			}
		}
	}
	sc.gValid, sc.filled, sc.have = false, false, 0
	sc.cursor = grow(sc.cursor, sc.nt)
	sc.countG = grow(sc.countG, sc.nt)
	sc.countS = grow(sc.countS, sc.nt)
	sc.firstS = grow(sc.firstS, sc.nt)
	return sc
}

// release returns sc to the pool; sc must not be used afterwards.
func (sc *scorer) release() {
	sc.c, sc.p, sc.t, sc.tr = nil, nil, nil, Trace{}
	sc.ctx, sc.work, sc.stopped = nil, 0, nil
	sc.ev, sc.metrics, sc.metricsTo = evaluation{}, Metrics{}, nil
	clear(sc.members) // no reference to the trace
	sc.members = sc.members[:0]
	clear(sc.expArgs)
	d := &sc.diff
	clear(d.missing[:cap(d.missing)])
	clear(d.unexpected[:cap(d.unexpected)])
	clear(d.mismatched[:cap(d.mismatched)])
	d.missing, d.unexpected, d.mismatched = d.missing[:0], d.unexpected[:0], d.mismatched[:0]
	scorerPool.Put(sc)
}

// pollWork is how much scoring work (about one step of the edit distance
// each: a few nanoseconds) runs between two looks at the evaluation's
// context: a look costs about as much as a hundred steps, and a
// millisecond or so passes between two.
const pollWork = 1 << 18

// spend counts n steps of work and, once they reach pollWork, looks at
// sc.ctx; it reports whether the scoring is to stop (sc.stopped is set).
func (sc *scorer) spend(n int) bool {
	if sc.work += n; sc.work < pollWork {
		return false
	}
	sc.work = 0
	if sc.ctx != nil && sc.stopped == nil {
		sc.stopped = sc.ctx.Err()
	}
	return sc.stopped != nil
}

// toolID returns the id of a trace call's tool name: the plan's id, or an
// id past them for a name the contract does not use.
func (sc *scorer) toolID(name string) int {
	if id, ok := sc.p.id(name); ok {
		return id
	}
	if sc.extraIDs != nil && len(sc.extra) > 8 {
		if id, ok := sc.extraIDs[name]; ok {
			return id
		}
	} else {
		for k, n := range sc.extra {
			if n == name {
				return len(sc.p.names) + k
			}
		}
	}
	id := sc.nt
	sc.nt++
	sc.extra = append(sc.extra, name)
	if len(sc.extra) > 8 {
		if sc.extraIDs == nil {
			sc.extraIDs = make(map[string]int)
		}
		if len(sc.extra) == 9 {
			for k, n := range sc.extra {
				sc.extraIDs[n] = len(sc.p.names) + k
			}
		} else {
			sc.extraIDs[name] = id
		}
	}
	return id
}

// name returns the tool name of id.
func (sc *scorer) name(id int) string {
	if id < len(sc.p.names) {
		return sc.p.names[id]
	}
	return sc.extra[id-len(sc.p.names)]
}

// use makes the combination that picks option choice[g] of the g-th group
// the current one, G. When it already is, what was computed for it is
// kept.
func (sc *scorer) use(choice []int) {
	if sc.gValid && slices.Equal(sc.choice, choice) {
		return
	}
	sc.choice = append(sc.choice[:0], choice...)
	sc.gValid, sc.filled, sc.have = true, false, 0
	p := sc.p
	sc.G = append(sc.G[:0], p.runs[0]...)
	for g := range p.groups {
		sc.G = append(sc.G, p.options[g][choice[g]]...)
		sc.G = append(sc.G, p.runs[g+1]...)
	}
	sc.gTool = grow(sc.gTool, len(sc.G))
	for i, x := range sc.G {
		sc.gTool[i] = p.exps[x].tool
	}
}

// fill walks the trace for combination G (SPEC section 4.2): the k-th trace
// call of a tool fills the k-th expected call of that tool; of the calls
// left over, those matching an optional entry are left out; everything
// else is scored. It sets sc.scored, sc.sTool, sc.filledBy, sc.firstS and
// sc.nextS (the first scored position of each tool, and the next scored
// position of the same tool, -1 for none), and sc.optIdx (the indexes
// left out as optional), once per combination.
func (sc *scorer) fill() {
	if sc.filled {
		return
	}
	sc.filled, sc.have = true, 0
	cursor := sc.cursor[:sc.nt]
	for t := range cursor {
		cursor[t] = -1
	}
	sc.nextSame = grow(sc.nextSame, len(sc.G))
	sc.filledBy = grow(sc.filledBy, len(sc.G))
	for i := len(sc.G) - 1; i >= 0; i-- {
		t := sc.gTool[i]
		sc.nextSame[i] = cursor[t]
		cursor[t] = i
		sc.filledBy[i] = -1
	}
	sc.scored = sc.scored[:0]
	sc.sTool = sc.sTool[:0]
	sc.optIdx = sc.optIdx[:0]
	for i, t := range sc.callTool {
		if e := cursor[t]; e >= 0 {
			sc.filledBy[e] = i
			cursor[t] = sc.nextSame[e]
		} else if sc.optional != nil && sc.optional[i] {
			sc.optIdx = append(sc.optIdx, i)
			continue
		}
		sc.scored = append(sc.scored, i)
		sc.sTool = append(sc.sTool, t)
	}
	firstS := sc.firstS[:sc.nt]
	for t := range firstS {
		firstS[t] = -1
	}
	sc.nextS = grow(sc.nextS, len(sc.sTool))
	for k := len(sc.sTool) - 1; k >= 0; k-- {
		t := sc.sTool[k]
		sc.nextS[k] = firstS[t]
		firstS[t] = k
	}
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
	distinctG, distinctS                   int
}

// need says which figures to compute beyond the cheap tool counts.
type need uint8

const (
	needArgs   need = 1 << iota // precision, recall, f1
	needSeq                     // the edit distance
	needRecall                  // required_call_recall
	haveBase                    // (in scorer.have) the tool counts and what they give
	needAll    = needArgs | needSeq | needRecall
)

// score returns the composite score of the current combination. A figure
// whose weight is 0 is not computed: its term is 0·m = +0 whatever m in
// [0,1].
func (sc *scorer) score() float64 {
	var n need
	if sc.w.ArgumentF1 != 0 {
		n |= needArgs
	}
	if sc.w.SequenceAccuracy != 0 {
		n |= needSeq
	}
	if sc.w.RequiredCallRecall != 0 {
		n |= needRecall
	}
	f := sc.figuresOf(n)
	return sc.w.composite(f.selection, f.f1, f.seqAcc, f.redundantRate, f.recall2)
}

// figuresOf returns the figures of the current combination G: the tool
// counts, selection, invocation, tool correctness and redundancy, and the
// rest as n says (the others are 0, or what an earlier call computed).
// Each part is computed once per combination.
func (sc *scorer) figuresOf(n need) figures {
	sc.fill()
	if sc.have&haveBase == 0 {
		sc.last = sc.figures(n)
		sc.have = haveBase | n
		return sc.last
	}
	if miss := n &^ sc.have; miss != 0 {
		sc.extras(&sc.last, miss)
		sc.have |= miss
	}
	return sc.last
}

// figures computes SPEC section 3 for the current combination G against
// sc.scored (set by fill): the tool counts, selection, invocation, tool
// correctness and redundancy always, the rest as n says. With needRecall
// it sets sc.satBy.
func (sc *scorer) figures(n need) figures {
	var f figures
	nG, nS := len(sc.G), len(sc.scored)
	countG, countS := sc.countG[:sc.nt], sc.countS[:sc.nt]
	clear(countG)
	clear(countS)
	for _, t := range sc.gTool {
		countG[t]++
	}
	for _, t := range sc.sTool {
		countS[t]++
	}
	distinctG, distinctS, inter := 0, 0, 0
	for t, cg := range countG {
		cs := countS[t]
		if cg > 0 {
			distinctG++
		}
		if cs > 0 {
			distinctS++
			if cg > 0 {
				inter++
			}
		}
		if d := cs - cg; d > 0 {
			f.redundant += d
		}
	}
	f.distinctG, f.distinctS, f.correctTools = distinctG, distinctS, inter

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
			if countG[t] > 0 {
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

	// redundancy
	if nS > 0 {
		f.redundantRate = float64(f.redundant) / float64(nS)
	}
	sc.extras(&f, n)
	return f
}

// extras sets in f the figures of the current combination G that n asks
// for beyond the tool counts: the sequence, argument precision, recall and
// F1, and required_call_recall (which sets sc.satBy). They depend on G and
// sc.scored alone, not on the other figures.
func (sc *scorer) extras(f *figures, n need) {
	nG, nS := len(sc.G), len(sc.scored)
	// sequence: Levenshtein over whole names.
	if n&needSeq != 0 {
		d := sc.levenshtein()
		f.editDistance = float64(d)
		f.normDistance = float64(d) / float64(max(nG, nS, 1))
		f.seqAcc = 1 - f.normDistance
	}

	// argument precision / recall / F1
	if n&needArgs != 0 {
		sc.arguments(f)
	}

	// required_call_recall
	if n&needRecall != 0 {
		sc.satBy = grow(sc.satBy, nG)
		if nG == 0 {
			f.recall2 = 1
		} else {
			f.recall2 = float64(sc.satisfy(sc.satBy)) / float64(nG)
		}
	}
}

// arguments sets argument precision, recall and F1: each expected call
// G[i] pairs with the first scored call of its tool at a position >= i.
func (sc *scorer) arguments(f *figures) {
	nG, nS := len(sc.G), len(sc.scored)
	if nG == 0 && nS == 0 {
		f.precision, f.recall, f.f1 = 1, 1, 1 // SPEC deviation: both empty
		return
	}
	// cursor[t] walks tool t's scored positions forward as i grows.
	cursor := sc.cursor[:sc.nt]
	copy(cursor, sc.firstS[:sc.nt])
	correct, expectedN, provided := 0, 0, 0
	vacuous := false
	for i, x := range sc.G {
		g := &sc.p.exps[x]
		j := cursor[g.tool]
		for j >= 0 && j < i {
			j = sc.nextS[j]
		}
		cursor[g.tool] = j
		if g.args == nil {
			if j >= 0 {
				vacuous = true
			}
			continue
		}
		nk := len(g.args.keys)
		expectedN += nk
		if j < 0 {
			continue
		}
		call := &sc.t.Calls[sc.scored[j]]
		args, ok := argsOf(call)
		if !ok {
			continue
		}
		provided += args.Len()
		if nk == 0 && args.Len() == 0 {
			vacuous = true
		}
		correct += sc.correct(g, sc.scored[j])
	}
	if expectedN == 0 && provided == 0 && vacuous {
		f.precision, f.recall, f.f1 = 1, 1, 1
		return
	}
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

// satisfy matches expected calls in order to the first unused scored call
// that fully satisfies each, and returns how many were satisfied. When by
// is non-nil, by[i] is set to the trace index satisfying G[i], or -1. The
// memo is read in the loop (a pair already compared costs one look), and
// satisfiesNew compares the others.
func (sc *scorer) satisfy(by []int) int {
	if cap(sc.used) < len(sc.scored) {
		sc.used = make([]bool, len(sc.scored))
	}
	used := sc.used[:len(sc.scored)]
	clear(used)
	n, nc := 0, len(sc.t.Calls)
	scored, nextS := sc.scored, sc.nextS[:len(sc.scored)]
	for i, x := range sc.G {
		g := &sc.p.exps[x]
		k := sc.firstS[g.tool]
		if g.args == nil {
			for k >= 0 && used[k] {
				k = nextS[k]
			}
		} else {
			memo := sc.memo[g.idx*nc : g.idx*nc+nc]
			full, kb := int32(len(g.args.keys))+1, g.args.keyBits
			for ; k >= 0; k = nextS[k] {
				if used[k] {
					continue
				}
				j := scored[k]
				m := memo[j]
				if m == 0 {
					// A key missing from an indexed call's bits: not
					// satisfied (the same text has the same keys).
					if ca := &sc.callArgs[j]; ca.built && kb&^ca.bits != 0 {
						memo[j] = -1
						continue
					}
					m = sc.satisfiesNew(g, j)
				}
				// A memo of full from correct is no satisfaction for
				// unreadable arguments (a count of 0 of no keys).
				if m == full && (full > 1 || sc.t.Calls[j].ArgsError == "") {
					break
				}
			}
		}
		if by != nil {
			by[i] = -1
		}
		if k >= 0 {
			used[k] = true
			n++
			if by != nil {
				by[i] = scored[k]
			}
		}
	}
	return n
}

// correct returns how many of g's expected arguments compare equal in
// trace call i (memoised); g's arguments are checked.
func (sc *scorer) correct(g *planExp, i int) int {
	m := &sc.memo[g.idx*len(sc.t.Calls)+i]
	if *m <= 0 {
		n := 0
		// No key in common: none compares equal.
		if c := &sc.t.Calls[i]; c.ArgsError == "" {
			if g.args.flag && c.Args.Raw() == g.args.s {
				n = len(g.args.keys) // the same text: every key compares equal
			} else if ms, bits := sc.argIndex(i); g.args.keyBits&bits != 0 {
				n = g.args.countEqualIn(ms, sc.strict)
			}
		}
		*m = int32(n) + 1
	}
	return int(*m) - 1
}

// satisfiesNew reports whether trace call i fully satisfies g, for a pair
// the memo does not know (g's arguments checked): it returns 1 + the
// number of g's keys when it does, else -1, and stores that in the memo
// unless the call's arguments could not be read (-1, not stored: correct
// counts 0 keys of them). It stops at the first argument that differs.
func (sc *scorer) satisfiesNew(g *planExp, i int) int32 {
	c := &sc.t.Calls[i]
	if c.ArgsError != "" {
		return -1
	}
	m := int32(-1)
	// The same text satisfies; an expected key's bit missing from the
	// call's: that key is missing.
	if g.args.flag && c.Args.Raw() == g.args.s {
		m = int32(len(g.args.keys)) + 1
	} else if ms, bits := sc.argIndex(i); g.args.keyBits&^bits == 0 && g.args.satisfiedByIn(ms, sc.strict) {
		m = int32(len(g.args.keys)) + 1
	}
	sc.memo[g.idx*len(sc.t.Calls)+i] = m
	return m
}

// levenshtein is the edit distance between the tool sequences of G and S.
func (sc *scorer) levenshtein() int {
	n, m := len(sc.gTool), len(sc.sTool)
	if n == 0 {
		return m
	}
	if m == 0 {
		return n
	}
	if m <= 64 {
		return sc.levenshteinBits()
	}
	sc.lev = grow(sc.lev, 2*(m+1))
	prev, cur := sc.lev[:m+1], sc.lev[m+1:]
	for j := range prev {
		prev[j] = j
	}
	sTool := sc.sTool[:m]
	for i := 1; i <= n; i++ {
		if sc.spend(m) {
			return 0 // stopped: the figures are not used
		}
		cur[0] = i
		gt := sc.gTool[i-1]
		for j, st := range sTool {
			cost := 1
			if st == gt {
				cost = 0
			}
			cur[j+1] = min(prev[j+1]+1, cur[j]+1, prev[j]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[m]
}

// levenshteinBits is levenshtein for 1 <= len(S) <= 64 with Hyyrö's
// bit-parallel form of the same dynamic programme (H. Hyyrö, "A bit-vector
// algorithm for computing Levenshtein and Damerau edit distances", 2003):
// bit j of the vertical delta vectors Pv/Mv says whether D[j+1][i] -
// D[j][i] is +1/-1 in the current column i (S along the rows, G along the
// columns), and score follows D[len(S)][i]. Row 0 is D[0][i] = i, hence
// the 1 shifted into the horizontal +1 vector.
func (sc *scorer) levenshteinBits() int {
	m := len(sc.sTool)
	if cap(sc.peq) < sc.nt {
		sc.peq = make([]uint64, sc.nt)
	}
	peq := sc.peq[:sc.nt]
	clear(peq)
	for j, t := range sc.sTool {
		peq[t] |= 1 << uint(j)
	}
	last := uint64(1) << uint(m-1)
	pv, mv := ^uint64(0), uint64(0)
	score := m
	for _, t := range sc.gTool {
		eq := peq[t]
		xv := eq | mv
		xh := (((eq & pv) + pv) ^ pv) | eq
		ph := mv | ^(xh | pv)
		mh := pv & xh
		if ph&last != 0 {
			score++
		} else if mh&last != 0 {
			score--
		}
		ph = ph<<1 | 1
		mh <<= 1
		pv = mh | ^(xv | ph)
		mv = ph & xv
	}
	return score
}

// evaluation builds the full state for the current combination G (the
// chosen one). The result shares nothing with sc's buffers.
func (sc *scorer) evaluation(opts Options) *evaluation {
	G := sc.G
	f := sc.figuresOf(needAll)
	var optional []int
	if len(sc.optIdx) > 0 {
		optional = slices.Clone(sc.optIdx)
	}
	// The evaluation, its metrics and its per-expected-call lists are the
	// scorer's (nothing of the result points to them); the expected calls
	// and the scored indexes are the result's own.
	ev := &sc.ev
	*ev = evaluation{
		contract:    sc.c,
		opts:        opts,
		cmp:         sc.cmp,
		trace:       *sc.t,
		expected:    make([]ExpectedCall, len(G)),
		filledBy:    sc.filledBy[:len(G):len(G)],
		satisfiedBy: sc.satBy[:len(G):len(G)],
		optional:    optional,
		callTool:    sc.callTool,
		expTool:     sc.gTool[:len(G)],
		countG:      sc.countG[:sc.nt],
		countS:      sc.countS[:sc.nt],
	}
	// The first block of the result's index lists and the first block of
	// its texts are one allocation (neither holds pointers): the ints,
	// then the text bytes after them.
	nInts := max(len(sc.scored), 5*len(sc.t.Calls)+16)
	nText := minTextBlock + 96*len(sc.t.Calls)
	mem := make([]int, nInts+nText/8)
	ev.ints = mem[:0:nInts]
	ev.text.use(unsafe.Slice((*byte)(unsafe.Pointer(&mem[nInts])), nText))
	ev.scored = append(ev.idx(len(sc.scored)), sc.scored...)
	if ev.scored == nil {
		ev.scored = []int{}
	}
	sc.tmp = grow(sc.tmp, 2*sc.nt)
	sc.orderBuf = grow(sc.orderBuf, sc.nt)
	if cap(sc.markBuf) < len(sc.t.Calls) {
		sc.markBuf = make([]bool, len(sc.t.Calls))
	}
	ev.tmp, ev.scanBuf, ev.diff, ev.sc = sc.tmp, &sc.scanTexts, &sc.diff, sc
	ev.orderBuf, ev.markBuf = sc.orderBuf, sc.markBuf[:len(sc.t.Calls)]
	if ev.optional == nil {
		ev.optional = []int{}
	}
	if cap(sc.expArgs) < len(G) {
		sc.expArgs = make([]*cval, len(G))
	}
	ev.expectedArgs = sc.expArgs[:len(G)]
	for i, x := range G {
		ev.expected[i] = *sc.p.exps[x].call
		ev.expectedArgs[i] = sc.p.exps[x].args
	}
	sc.violations(ev, opts)

	m := sc.metricsTo
	if m == nil {
		m = &sc.metrics
	}
	sc.metricsTo = nil
	*m = Metrics{
		SelectionAccuracy:  f.selection,
		InvocationAccuracy: f.invocation,
		RequiredCallRecall: f.recall2,
		Arguments:          ArgumentMetrics{Precision: f.precision, Recall: f.recall, F1: f.f1},
		Sequence:           SequenceMetrics{EditDistance: f.editDistance, NormalizedDistance: f.normDistance, SequenceAccuracy: f.seqAcc},
		Efficiency:         EfficiencyMetrics{RedundantCount: f.redundant, TotalCalls: len(sc.scored), RedundantRate: f.redundantRate},
		Weights:            sc.w,
		ToolCorrectness:    sc.toolLists(f),
	}
	ev.metrics = m
	return ev
}

// violations sets ev.forbidden (the contract's rules, then opts') and
// ev.violations: each trace call matching a rule, with the first rule it
// matches.
func (sc *scorer) violations(ev *evaluation, opts Options) {
	cf := sc.c.Forbidden
	ev.forbidden = cf
	if len(opts.Forbidden) > 0 {
		ev.forbidden = append(slices.Clip(cf), opts.Forbidden...)
	}
	// The options' rules are compiled once per set of arguments.
	var extra []*cval
	if len(opts.Forbidden) > 0 {
		extra = make([]*cval, len(opts.Forbidden))
		for r := range opts.Forbidden {
			extra[r] = opts.Forbidden[r].Args.compiled()
		}
	}
	for i := range sc.t.Calls {
		call := &sc.t.Calls[i]
		matched := false
		for r, rule := range sc.p.forbidden {
			if rule.tool == sc.callTool[i] && argsSatisfyCompiled(rule.args, call, sc.strict) {
				ev.violations = append(ev.violations, violation{call: i, rule: r})
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		for r := range opts.Forbidden {
			if opts.Forbidden[r].Tool == call.Tool && argsSatisfyCompiled(extra[r], call, sc.strict) {
				ev.violations = append(ev.violations, violation{call: i, rule: len(cf) + r})
				break
			}
		}
	}
}

// toolLists fills the tool correctness metrics with the name lists,
// sorted, in one allocation.
func (sc *scorer) toolLists(f figures) ToolCorrectnessMetrics {
	nE, nC := f.distinctG, f.distinctS
	nM, nX := nE-f.correctTools, nC-f.correctTools
	buf := make([]string, 0, nE+nC+nM+nX)
	tc := ToolCorrectnessMetrics{
		ToolCorrectness: f.toolCorrectness,
		ExpectedTools:   buf[0:0:nE],
		CalledTools:     buf[nE : nE : nE+nC],
		MissingTools:    buf[nE+nC : nE+nC : nE+nC+nM],
		ExtraTools:      buf[nE+nC+nM : nE+nC+nM : nE+nC+nM+nX],
		CorrectCount:    f.correctTools,
		TotalExpected:   f.distinctG,
	}
	add := func(t int) {
		g, s := sc.countG[t] > 0, sc.countS[t] > 0
		name := sc.name(t)
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
	// Walk the ids in name order: the plan's sorted ids merged with the
	// extra names, sorted here (they are rarely many).
	byName := sc.p.byName
	if len(sc.extra) == 0 {
		for _, t := range byName {
			add(int(t))
		}
		return tc
	}
	extra := make([]int, len(sc.extra))
	for k := range extra {
		extra[k] = len(sc.p.names) + k
	}
	slices.SortFunc(extra, func(a, b int) int { return strings.Compare(sc.name(a), sc.name(b)) })
	i, k := 0, 0
	for i < len(byName) || k < len(extra) {
		if k == len(extra) || (i < len(byName) && sc.name(int(byName[i])) < sc.name(extra[k])) {
			add(int(byName[i]))
			i++
		} else {
			add(extra[k])
			k++
		}
	}
	return tc
}
