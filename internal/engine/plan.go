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
	byName []int
	// byHash[keyHash(n)] is 1 + the id of the last tool name n with that
	// hash, 0 when no name has it; sameHash[id] is 1 + the id of the name
	// before id with the same hash, 0 when there is none (id follows the
	// chain).
	byHash   [64]int32
	sameHash []int
	// exps are every expected call of the steps and options, by idx.
	exps []planExp
	// steps are the required steps in order.
	steps []planStep
	// groups are the indexes in steps of the alternatives groups.
	groups []int
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

// planStep is one required step: options holds one option of one call for
// a plain call, and the group's options for an alternatives group, as
// indexes into exps.
type planStep struct {
	options [][]int
	group   *Group
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

// newPlan plans the contract c.
func newPlan(c *Contract) *contractPlan {
	// Count the expected calls, options and groups first, so that the
	// plan's slices are each one array.
	nExp, nOpts, nGroups := 0, 0, 0
	for _, st := range c.Required {
		if st.Call != nil {
			nExp++
			nOpts++
			continue
		}
		nGroups++
		nOpts += len(st.Group.Options)
		for _, calls := range st.Group.Options {
			nExp += len(calls)
		}
	}
	// At most one tool name per expected call and rule.
	maxNames := nExp + len(c.Optional) + len(c.Forbidden)
	p := &contractPlan{
		names:  make([]string, 0, maxNames),
		steps:  make([]planStep, len(c.Required)),
		exps:   make([]planExp, 0, nExp),
		groups: make([]int, 0, nGroups),
	}
	// One array of ints holds the options' calls then the runs' (idxs),
	// sameHash and byName; one array of slices the options then runs.
	ints := make([]int, 2*nExp+2*maxNames)
	idxs := ints[: 0 : 2*nExp]
	p.sameHash = ints[2*nExp : 2*nExp : 2*nExp+maxNames]
	byName := ints[2*nExp+maxNames:]
	lists := make([][]int, nOpts+nGroups+1)
	opts := lists[:0:nOpts]
	p.runs = lists[nOpts:]
	compile := Args.compiled
	exp := func(call *ExpectedCall) int {
		p.exps = append(p.exps, planExp{call: call, args: compile(call.Args), tool: p.intern(call.Tool), idx: p.nExp})
		p.nExp++
		return p.nExp - 1
	}
	// option returns the next option of opts, holding the expected calls
	// calls.
	option := func(calls []ExpectedCall) []int {
		at := len(idxs)
		for k := range calls {
			idxs = append(idxs, exp(&calls[k]))
		}
		return idxs[at:len(idxs):len(idxs)]
	}
	for s, st := range c.Required {
		at := len(opts)
		if st.Call != nil {
			idxs = append(idxs, exp(st.Call))
			opts = append(opts, idxs[len(idxs)-1:len(idxs):len(idxs)])
			p.steps[s].options = opts[at:len(opts):len(opts)]
			continue
		}
		p.groups = append(p.groups, s)
		for _, calls := range st.Group.Options {
			opts = append(opts, option(calls))
		}
		p.steps[s] = planStep{options: opts[at:len(opts):len(opts)], group: st.Group}
	}
	r, at := 0, len(idxs)
	for _, st := range p.steps {
		if st.group != nil {
			p.runs[r] = idxs[at:len(idxs):len(idxs)]
			r, at = r+1, len(idxs)
			continue
		}
		idxs = append(idxs, st.options[0][0])
	}
	p.runs[r] = idxs[at:len(idxs):len(idxs)]
	p.optional = make([]planRule, len(c.Optional))
	for i := range c.Optional {
		p.optional[i] = planRule{tool: p.intern(c.Optional[i].Tool), args: compile(c.Optional[i].Args)}
	}
	p.forbidden = make([]planRule, len(c.Forbidden))
	for i := range c.Forbidden {
		p.forbidden[i] = planRule{tool: p.intern(c.Forbidden[i].Tool), args: compile(c.Forbidden[i].Args)}
	}
	p.byName = byName[:len(p.names):len(p.names)]
	for i := range p.byName {
		p.byName[i] = i
	}
	slices.SortFunc(p.byName, func(a, b int) int { return strings.Compare(p.names[a], p.names[b]) })
	return p
}

// id returns the id of a tool name of the contract, and whether name is
// one.
func (p *contractPlan) id(name string) (int, bool) {
	for j := int(p.byHash[keyHash(name)]); j != 0; j = p.sameHash[j-1] {
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
	for j := int(*h); j != 0; j = p.sameHash[j-1] {
		if p.names[j-1] == name {
			return j - 1
		}
	}
	id := len(p.names)
	p.names = append(p.names, name)
	p.sameHash = append(p.sameHash, int(*h))
	*h = int32(id) + 1
	return id
}
