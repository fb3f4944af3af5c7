package engine

import (
	"slices"
	"strings"
)

// contractPlan is everything scoring needs from a contract that does not
// depend on the trace: tool names interned, the steps flattened with their
// expected calls' arguments compiled (cval), and the optional and
// forbidden rules compiled likewise.
type contractPlan struct {
	// names are the contract's tool names by id.
	names []string
	// byName lists the ids in name order.
	byName []int32
	// byHash[keyHash(n)] is 1 + the id of the last tool name n with that
	// hash, 0 when no name has it; sameHash[id] is 1 + the id of the name
	// before id with the same hash, 0 when there is none (id follows the
	// chain).
	byHash   [64]int32
	sameHash []int32
	// exps are every expected call of the steps and options, by idx.
	exps []planExp
	// groups are the indexes in the contract's Required of the
	// alternatives groups, and options[g] the options of group g, each
	// the indexes into exps of its calls.
	groups  []int
	options [][][]int
	// runs are the plain calls (as indexes into exps) before each group,
	// then after the last: a combination is runs[0], an option of group
	// 0, runs[1], ...
	runs [][]int
	// nExp counts the expected calls of every step and option: the range
	// of expected.idx.
	nExp      int
	optional  []planRule
	forbidden []planRule
	// checks is what the evidence checks, the issue list and redaction
	// precompute from the contract, made on first use (checks.go).
	checks contractChecks
}

// planRule is an optional or forbidden entry: its tool id and compiled
// arguments (nil when it has none).
type planRule struct {
	tool int
	args *cval
}

// planExp is one expected call of the contract, compiled.
type planExp struct {
	call *ExpectedCall
	// args are call.Args compiled, nil when they are not checked.
	args *cval
	// tool is the interned tool name.
	tool int
	// idx is the call's index in contractPlan.exps.
	idx int
}

// scoringPlan returns c's plan: the one ParseContract built, or for a
// Contract built otherwise a new one.
func (c *Contract) scoringPlan() *contractPlan {
	if c.plan != nil {
		return c.plan
	}
	return newPlan(c)
}

// planNames is the room newPlan first gives the tool names (and their
// hash chains): a contract rarely names more tools, and more grow it.
const planNames = 16

// newPlan plans the contract c.
func newPlan(c *Contract) *contractPlan {
	// Count the expected calls, options and groups first, so that the
	// plan's slices are each one array.
	nExp, nOpts, nGroups := 0, 0, 0
	for _, st := range c.Required {
		if st.Call != nil {
			nExp++
			continue
		}
		nGroups++
		nOpts += len(st.Group.Options)
		for _, calls := range st.Group.Options {
			nExp += len(calls)
		}
	}
	// At most one tool name per expected call and rule; one array holds
	// the names' hash chains, then their order.
	names := min(nExp+len(c.Optional)+len(c.Forbidden), planNames)
	ids := make([]int32, 2*names)
	p := &contractPlan{
		names:    make([]string, 0, names),
		sameHash: ids[:0:names],
		exps:     make([]planExp, 0, nExp),
	}
	// idxs holds each step's calls in order, a plain call's once: a run
	// of plain calls is then one stretch of it, and a group's options
	// follow one another. One array of slices holds the groups' options,
	// then the runs.
	idxs := make([]int, 0, nExp)
	lists := make([][]int, nOpts+nGroups+1)
	opts := lists[:0:nOpts]
	p.runs = lists[nOpts:]
	if nGroups > 0 {
		p.groups = make([]int, 0, nGroups)
		p.options = make([][][]int, 0, nGroups)
	}
	compile := Args.compiled
	exp := func(call *ExpectedCall) int {
		p.exps = append(p.exps, planExp{call: call, args: compile(call.Args), tool: p.intern(call.Tool), idx: p.nExp})
		p.nExp++
		return p.nExp - 1
	}
	r, run := 0, 0 // the run being read, and where it starts in idxs
	for s, st := range c.Required {
		if st.Call != nil {
			idxs = append(idxs, exp(st.Call))
			continue
		}
		p.runs[r] = idxs[run:len(idxs):len(idxs)]
		r++
		p.groups = append(p.groups, s)
		at := len(opts)
		for _, calls := range st.Group.Options {
			from := len(idxs)
			for k := range calls {
				idxs = append(idxs, exp(&calls[k]))
			}
			opts = append(opts, idxs[from:len(idxs):len(idxs)])
		}
		p.options = append(p.options, opts[at:len(opts):len(opts)])
		run = len(idxs)
	}
	p.runs[r] = idxs[run:len(idxs):len(idxs)]
	p.optional = make([]planRule, len(c.Optional))
	for i := range c.Optional {
		p.optional[i] = planRule{tool: p.intern(c.Optional[i].Tool), args: compile(c.Optional[i].Args)}
	}
	p.forbidden = make([]planRule, len(c.Forbidden))
	for i := range c.Forbidden {
		p.forbidden[i] = planRule{tool: p.intern(c.Forbidden[i].Tool), args: compile(c.Forbidden[i].Args)}
	}
	if n := len(p.names); n <= names {
		p.byName = ids[names : names+n : names+n]
	} else {
		p.byName = make([]int32, n)
	}
	for i := range p.byName {
		p.byName[i] = int32(i)
	}
	slices.SortFunc(p.byName, func(a, b int32) int { return strings.Compare(p.names[a], p.names[b]) })
	return p
}

// id returns the id of a tool name of the contract, and whether name is
// one.
func (p *contractPlan) id(name string) (int, bool) {
	for j := int(p.byHash[keyHash(name)]); j != 0; j = int(p.sameHash[j-1]) {
		if p.names[j-1] == name {
			return j - 1, true
		}
	}
	return 0, false
}

// intern returns the id of a tool name, giving it the next id when it is
// new.
func (p *contractPlan) intern(name string) int {
	h := &p.byHash[keyHash(name)]
	for j := int(*h); j != 0; j = int(p.sameHash[j-1]) {
		if p.names[j-1] == name {
			return j - 1
		}
	}
	id := len(p.names)
	p.names = append(p.names, name)
	p.sameHash = append(p.sameHash, *h)
	*h = int32(id) + 1
	return id
}
