package engine

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// Contract is a Contract v2 (SPEC section 4) or a gold file read as one (a
// gold file is a contract whose Required is the gold list and which has
// nothing else). Build one with ParseContract; a Contract is read-only once
// built and safe for concurrent use by many evaluations.
type Contract struct {
	// Version is contract_version: 2 for contracts, 0 for gold files.
	Version int
	// Gold reports whether the contract was read from a gold file.
	Gold bool
	// Description is the contract's free-text description.
	Description string
	// Required lists the required steps in declaration order, followed by
	// the top-level alternatives groups.
	Required []Step
	// Optional lists calls that are neither required nor counted as extra.
	Optional []ExpectedCall
	// Forbidden lists calls that must never happen.
	Forbidden []ForbiddenCall
	// Weights are the contract's composite weights (merged over the
	// defaults at evaluation); nil for none.
	Weights map[string]float64
	// MinScore is the contract's passing score in [0,1]; nil for the
	// default 0.9.
	MinScore *float64
	// IgnoredKeys are the JSON pointers of a gold file's keys that are
	// neither tool nor args (Python Toolscore's side_effects, description,
	// metadata, result, ...), in document order; they change nothing.
	IgnoredKeys []string

	// requiredCount is the number of entries in the "required" array
	// (before the top-level alternatives are appended).
	requiredCount int
	// combos is the number of combinations, computed at parse time.
	combos int
	// plan is what scoring precomputes from the contract (plan.go),
	// built once by the parser with the rest of the Contract; nil for a
	// Contract built otherwise, planned at each use.
	plan *contractPlan
}

// Step is one element of a contract's required list: exactly one of Call
// (a single expected call) and Group (an alternatives group) is set.
type Step struct {
	Call  *ExpectedCall
	Group *Group
}

// Group is an alternatives group: a combination picks exactly one of its
// Options, each a non-empty list of expected calls.
type Group struct {
	// ID is the group's id, "" when it has none.
	ID string
	// Options are the alternatives in declared order.
	Options [][]ExpectedCall
}

// ExpectedCall is one expected call. Args not checked (the zero Args)
// means "do not check arguments"; checked and empty means "expect zero
// arguments".
type ExpectedCall struct {
	Tool string `json:"tool"`
	Args Args   `json:"args"`
}

// ForbiddenCall is a forbidden call rule: a trace call with this Tool (and,
// when Args are checked, whose arguments satisfy Args as an expected
// call's would) is a violation. Reason is shown to the user.
type ForbiddenCall struct {
	Tool   string `json:"tool"`
	Args   Args   `json:"args,omitzero"`
	Reason string `json:"reason,omitempty"`
}

// Combinations returns the number of combinations of the contract's
// alternatives groups (1 when it has none).
func (c *Contract) Combinations() int { return c.combos }

// RequiredCount returns the number of entries in the contract's "required"
// array, counting an alternatives group as one entry.
func (c *Contract) RequiredCount() int { return c.requiredCount }

// MaxCombinations is the largest number of combinations a contract may
// have (SPEC section 4.1).
const MaxCombinations = 256

// ParseContract reads a Contract v2 or a gold file from one JSON document
// (SPEC section 1): a JSON object with contract_version, required or
// optional is a contract, validated against schemas/contract-v2.schema.json
// and the rules of SPEC section 4; otherwise a JSON array, or an object with
// "calls", is a gold file. A gold file's calls may carry keys other than
// tool and args (Python Toolscore writes side_effects, description,
// metadata, result, timestamp, ...): they are ignored and listed in
// IgnoredKeys.
//
// A key given twice in one object is an error anywhere in a contract
// (which of the two counts is up to the reader, so a second "forbidden":
// [] could hide the first); a gold file is read as Python Toolscore
// reads it, the last of a repeated key counting everywhere in it (its
// "calls", a call's "tool" and "args", inside args).
//
// Errors: a *SyntaxError (line, column and JSON pointer) for bad JSON; a
// *ValidationError (errors.Is ErrInvalidContract) listing every problem
// with its JSON pointer for a document of the wrong shape, or, alone,
// every repeated key at its later occurrence's pointer, with the line and
// column of both occurrences.
func ParseContract(data []byte) (*Contract, error) {
	doc, err := jsondoc.Parse(data)
	if err != nil {
		return nil, err
	}
	p := contractParser{}
	return p.contract(doc)
}

// ParseContractValue is ParseContract on a document already read with
// jsondoc, such as the "contract" member of an API request: v's text is
// not decoded again. Errors are ParseContract's for v's text alone (JSON
// pointers relative to v, the line and column of a repeated key those of
// v's document's text); there is no *SyntaxError, v being read.
func ParseContractValue(v jsondoc.Value) (*Contract, error) {
	p := contractParser{base: v}
	return p.contract(v)
}

// ContractFromValue is ParseContract on an already decoded JSON value (as
// encoding/json decodes it, numbers as json.Number or float64). The error
// for a value json.Marshal cannot encode is a *ValidationError.
func ContractFromValue(doc any) (*Contract, error) {
	data, err := jsondoc.AppendAny(nil, doc)
	if err != nil {
		return nil, invalid(FieldError{"", "not a JSON value: " + err.Error()})
	}
	return ParseContract(data)
}

// ParseForbidden reads forbidden rules given apart from a contract (the
// API's and the CLI's forbidden rules, a stored result's options): a JSON
// array of {tool, args?, reason?} read as a contract's forbidden list is,
// matchers included. Empty data and null are no rules. The rules go in
// Options.Forbidden.
//
// A key given twice keeps its last value here, as in the stored options
// it reads, which were accepted so (ParseForbiddenValue, which reads new
// rules, refuses it).
//
// Errors: a *SyntaxError for bad JSON; a *ValidationError (errors.Is
// ErrInvalidContract) whose JSON pointers are into the array ("/0/tool").
func ParseForbidden(data []byte) ([]ForbiddenCall, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	doc, err := jsondoc.Parse(data)
	if err != nil {
		return nil, err
	}
	var p contractParser
	return p.forbiddenRules(doc)
}

// ParseForbiddenValue is ParseForbidden on a value already read with
// jsondoc, such as the "forbidden" member of an API request; the zero
// Value and null are no rules. Errors are ParseForbidden's for v's text
// alone (JSON pointers relative to v), and a key given twice in any
// object of v is an error, as in a contract.
func ParseForbiddenValue(v jsondoc.Value) ([]ForbiddenCall, error) {
	if !v.Exists() {
		return nil, nil
	}
	p := contractParser{base: v}
	if v.HasRepeatedKey() {
		return nil, p.repeatedKeys(v.AppendRepeatedKeys(nil), "forbidden rules must not repeat a key")
	}
	return p.forbiddenRules(v)
}

// forbiddenRules reads a document of forbidden rules (ParseForbidden).
func (p *contractParser) forbiddenRules(doc jsondoc.Value) ([]ForbiddenCall, error) {
	switch doc.Kind() {
	case jsondoc.Null:
		return nil, nil
	case jsondoc.Array:
	default:
		return nil, invalid(FieldError{"", fmt.Sprintf("forbidden rules must be an array, got %s", valueTypeName(doc))})
	}
	rules := make([]ForbiddenCall, 0, doc.Len())
	for _, el := range doc.Elems() {
		if el.Kind() != jsondoc.Object {
			p.fail(el, fmt.Sprintf("a forbidden rule must be an object, got %s", valueTypeName(el)))
			continue
		}
		reason := el.Get("reason")
		if reason.Exists() && reason.Kind() != jsondoc.String {
			p.fail(reason, fmt.Sprintf("reason must be a string, got %s", valueTypeName(reason)))
		}
		if ec := p.call(el, []string{"reason"}); ec != nil {
			rules = append(rules, ForbiddenCall{Tool: ec.Tool, Args: ec.Args, Reason: reason.Text()})
		}
	}
	if len(p.errs) > 0 {
		return nil, invalid(p.errs...)
	}
	return rules, nil
}

func invalid(errs ...FieldError) error { return &ValidationError{Kind: "contract", Errors: errs} }

// repeatedKeys is the error for the repeated keys rks of the document
// being read: one problem at each later occurrence's pointer, naming the
// key and where it and its first occurrence are (line:column of the
// document's text), then why (rule).
func (p *contractParser) repeatedKeys(rks []jsondoc.RepeatedKey, rule string) error {
	errs := make([]FieldError, len(rks))
	for i, rk := range rks {
		src := rk.Value.Doc().Source()
		line, col := jsondoc.LineCol(src, rk.Offset)
		fline, fcol := jsondoc.LineCol(src, rk.First)
		errs[i] = FieldError{p.pointer(rk.Value), fmt.Sprintf("repeated key %q at line %d:%d (first at line %d:%d): %s", rk.Key, line, col, fline, fcol, rule)}
	}
	return invalid(errs...)
}

// contractParser reads one contract document: its problems, and the
// regular expressions compiled so far (a pattern repeated in a contract
// compiles once).
type contractParser struct {
	// base is the value being read when it is inside a larger document
	// (ParseContractValue): pointers are made relative to it.
	base    jsondoc.Value
	errs    []FieldError
	regexes map[string]*Regex
	// cb holds the nodes of the expected calls' arguments, compiled from
	// the document, matchers counts the matcher objects compiled so far;
	// calls holds the expected calls, each with room for its arguments,
	// from chunks (see slot).
	cb        cbuilder
	matchers  int
	calls     []callSlot
	callChunk int
	// custom are the custom matcher operators (ParseOptions.Matchers).
	custom map[string]MatcherFunc
	// list is the gold list being read, listPtr its pointer (computed on
	// first use: listPtrOK); curCall is its call object being read, callAt
	// that call's index and callPtr its pointer ("" until first used).
	list      jsondoc.Value
	listPtr   string
	listPtrOK bool
	curCall   jsondoc.Value
	callAt    int
	callPtr   string
}

// listPointer returns the pointer of the gold list being read.
func (p *contractParser) listPointer() string {
	if !p.listPtrOK {
		saved := p.curCall
		p.curCall = jsondoc.Value{}
		p.listPtr, p.listPtrOK = p.pointer(p.list), true
		p.curCall = saved
	}
	return p.listPtr
}

// fail records a problem at the value v, the tokens below it appended to
// its pointer (computed only here, so reading costs nothing for pointers).
func (p *contractParser) fail(v jsondoc.Value, msg string, below ...string) {
	ptr := p.pointer(v)
	for _, t := range below {
		ptr += "/" + escapePointer(t)
	}
	p.errs = append(p.errs, FieldError{ptr, msg})
}

// pointer returns v's JSON pointer from the document being read (p.base,
// or the root).
func (p *contractParser) pointer(v jsondoc.Value) string {
	if p.curCall.Exists() {
		// Inside a gold list's call: from the call's pointer, not from
		// the root past every call before it.
		if p.callPtr == "" {
			p.callPtr = p.listPointer() + "/" + strconv.Itoa(p.callAt)
		}
		if ptr, ok := v.PointerFrom(p.curCall, p.callPtr); ok {
			return ptr
		}
	}
	ptr := v.Pointer()
	if p.base.Exists() {
		ptr = strings.TrimPrefix(ptr, p.base.Pointer())
	}
	return ptr
}

// contract reads a contract document (ParseContract) and plans it.
func (p *contractParser) contract(doc jsondoc.Value) (*Contract, error) {
	c, err := p.read(doc)
	if err != nil {
		return nil, err
	}
	c.plan = newPlan(c)
	return c, nil
}

// read reads a contract document: a contract object or a gold list.
func (p *contractParser) read(doc jsondoc.Value) (*Contract, error) {
	switch doc.Kind() {
	case jsondoc.Array:
		return p.gold(doc)
	case jsondoc.Object:
		if doc.Get("contract_version").Exists() || doc.Get("required").Exists() || doc.Get("optional").Exists() {
			if doc.HasRepeatedKey() {
				return nil, p.repeatedKeys(doc.AppendRepeatedKeys(nil), "a contract must not repeat a key")
			}
			return p.contractObject(doc)
		}
		if calls := doc.Get("calls"); calls.Exists() {
			if calls.Kind() != jsondoc.Array {
				return nil, invalid(FieldError{"/calls", "calls must be an array of expected calls"})
			}
			return p.gold(calls)
		}
		return nil, invalid(FieldError{"", "neither a contract (an object with contract_version, required or optional) nor a gold file (an array of calls or an object with calls)"})
	}
	return nil, invalid(FieldError{"", fmt.Sprintf("expected a JSON array (gold file) or object (contract), got %s", valueTypeName(doc))})
}

// gold reads a gold list.
func (p *contractParser) gold(list jsondoc.Value) (*Contract, error) {
	n := list.Len()
	c := &Contract{Gold: true, combos: 1, requiredCount: n}
	c.Required = make([]Step, 0, n)
	// The arrays are sized from one census of the whole list, less what
	// a call {"tool": "...", "args": {...}} holds besides its arguments
	// (the call object, its two members and the tool name). It is an
	// estimate: other keys, and the keys' own String nodes, make it
	// larger; a call without "args" makes the members one too few, and
	// allocKeys then takes a new chunk.
	need := list.Census()
	need.Values[jsondoc.Array]--
	need.Values[jsondoc.Object] -= n
	need.Values[jsondoc.String] -= n
	need.Members -= 2 * n
	p.reserve(need, n)
	// The ignored keys' pointers are written one after the other in
	// ignored (the list's pointer, the call's index, the key), ends
	// holding where each ends: a pointer costs its length, not a walk of
	// the document.
	var ignored []byte
	var ends []int
	p.list = list
	defer func() { p.curCall = jsondoc.Value{} }()
	// The calls are read through a view of the list's nodes: an object
	// without a repeated key has its members in one pass over them, each
	// key once; Members reads the others (each key once, where it last
	// occurs).
	ns := list.Nodes()
	for i, j := 0, 1; i < n; i++ {
		el, at := ns.Value(j), j
		j = ns.Skip(j)
		p.curCall, p.callAt, p.callPtr = el, i, ""
		var tool, args jsondoc.Value
		switch {
		case ns.Kind(at) != jsondoc.Object:
			p.fail(el, fmt.Sprintf("an expected call must be an object, got %s", valueTypeName(el)))
			continue
		case !ns.RepeatsKey(at):
			for m, kj := ns.Count(at), at+1; m > 0; m-- {
				k, v := ns.Text(kj), ns.Value(kj+1)
				kj = ns.Skip(kj + 1)
				switch k {
				case "tool":
					tool = v
				case "args":
					args = v
				default:
					ignored, ends = p.ignoreKey(ignored, ends, i, k)
				}
			}
		default:
			for k, v := range el.Members() {
				switch k {
				case "tool":
					tool = v
				case "args":
					args = v
				default:
					ignored, ends = p.ignoreKey(ignored, ends, i, k)
				}
			}
		}
		if ec := p.callOf(el, tool, args); ec != nil {
			c.Required = append(c.Required, Step{Call: ec})
		}
	}
	if len(p.errs) > 0 {
		return nil, invalid(p.errs...)
	}
	if len(ends) > 1 {
		all := string(ignored)
		c.IgnoredKeys = make([]string, len(ends)-1)
		for i := range c.IgnoredKeys {
			c.IgnoredKeys[i] = all[ends[i]:ends[i+1]]
		}
	}
	return c, nil
}

// ignoreKey appends to ignored the pointer of key k of the gold list's
// call i, and to ends where it ends (see gold), and returns them.
func (p *contractParser) ignoreKey(ignored []byte, ends []int, i int, k string) ([]byte, []int) {
	if ends == nil {
		ignored = append(ignored, p.listPointer()...)
		ends = append(ends, len(ignored)) // the list's pointer, not a key's
	}
	ignored = append(ignored, ignored[:ends[0]]...)
	ignored = append(ignored, '/')
	ignored = strconv.AppendInt(ignored, int64(i), 10)
	ignored = append(ignored, '/')
	ignored = append(ignored, escapePointer(k)...)
	return ignored, append(ends, len(ignored))
}

// reserve sizes the parser's arrays for calls expected calls whose
// arguments hold the values counted in need, so that a contract's values
// come from one array of each type.
func (p *contractParser) reserve(need jsondoc.Census, calls int) {
	values := 0
	for _, n := range need.Values {
		values += max(n, 0)
	}
	p.cb.nodes = make([]cval, values)
	p.cb.keys = make([]string, max(need.Members, 0))
	p.cb.nums = make([]number, 0, max(need.Values[jsondoc.Number], 0))
	p.calls = make([]callSlot, 0, calls)
}

// callSlot is an expected call and the arguments it may hold, allocated
// together.
type callSlot struct {
	call ExpectedCall
	args args
}

// call reads one expected call object. allowed lists its valid keys
// besides tool and args; nil allows any (a gold file's, listed as
// ignored).
func (p *contractParser) call(obj jsondoc.Value, allowed []string) *ExpectedCall {
	if allowed != nil {
		for k, v := range obj.Members() {
			if k != "tool" && k != "args" && !slices.Contains(allowed, k) {
				p.fail(v, fmt.Sprintf("unknown key %q", k))
			}
		}
	}
	return p.callOf(obj, obj.Get("tool"), obj.Get("args"))
}

// callOf reads the expected call object obj whose "tool" and "args"
// members are tool and args (the zero Value when absent), its other keys
// already checked: nil when it has a problem (recorded).
func (p *contractParser) callOf(obj, tool, a jsondoc.Value) *ExpectedCall {
	n := len(p.errs)
	name, ok := tool.Str()
	if !ok || name == "" {
		p.fail(obj, "tool must be a non-empty string", "tool")
	}
	cs := slot(&p.calls, &p.callChunk)
	ec := &cs.call
	ec.Tool = name
	switch a.Kind() {
	case jsondoc.Invalid, jsondoc.Null:
	case jsondoc.Object:
		cv := &p.cb.alloc(1)[0]
		if p.cb.compileDoc(cv, a) {
			// No matcher anywhere: compiled in one walk of its nodes.
			ec.Args = docArgs(&cs.args, cv, a)
			break
		}
		matchers := p.matchers
		if !p.compileObject(cv, a) {
			// A valid matcher is not arguments; an invalid one's error
			// is already listed.
			if p.matcher(a) != nil {
				p.fail(a, "args must be an object of arguments, not a matcher")
			}
			break
		}
		if p.matchers > matchers {
			a = jsondoc.Value{} // not the map's JSON
		}
		ec.Args = docArgs(&cs.args, cv, a)
	default:
		p.fail(a, fmt.Sprintf("args must be an object or null, got %s", valueTypeName(a)))
	}
	if len(p.errs) > n {
		return nil
	}
	return ec
}

func (p *contractParser) contractObject(d jsondoc.Value) (*Contract, error) {
	// A document of the usual shape is known to satisfy the schema
	// without decoding it; any other is validated, for its errors.
	if !knownValid(d) {
		errs, err := schemaErrors(d.Any())
		if err != nil {
			return nil, err
		}
		if len(errs) > 0 {
			// Report the matcher problems too, so one run lists everything.
			p.matcherErrors(d)
			errs = append(errs, p.errs...)
			sort.SliceStable(errs, func(i, j int) bool { return errs[i].Pointer < errs[j].Pointer })
			return nil, invalid(errs...)
		}
	}
	c := &Contract{Version: 2}
	c.Description = d.Get("description").Text()
	callKeys := []string{"description"}
	group := func(v jsondoc.Value) *Group {
		g := &Group{}
		switch id := v.Get("id"); id.Kind() {
		case jsondoc.String:
			g.ID = id.Text()
		case jsondoc.Number:
			g.ID, _ = id.Num()
		}
		opts := v.Get("alternatives")
		g.Options = make([][]ExpectedCall, 0, opts.Len())
		for _, opt := range opts.Elems() {
			var calls []ExpectedCall
			if opt.Kind() == jsondoc.Array {
				calls = make([]ExpectedCall, 0, opt.Len())
				for _, el := range opt.Elems() {
					if ec := p.call(el, callKeys); ec != nil {
						calls = append(calls, *ec)
					}
				}
			} else if ec := p.call(opt, callKeys); ec != nil {
				calls = append(calls, *ec)
			}
			g.Options = append(g.Options, calls)
		}
		return g
	}
	combos := 1
	// overAt is the list holding the group with which the combinations
	// pass MaxCombinations (the error's place).
	var overAt jsondoc.Value
	addGroup := func(g *Group, list jsondoc.Value) {
		c.Required = append(c.Required, Step{Group: g})
		combos *= len(g.Options)
		if combos > MaxCombinations {
			if !overAt.Exists() {
				overAt = list
			}
			combos = MaxCombinations + 1
		}
	}
	req, alts := d.Get("required"), d.Get("alternatives")
	if n := req.Len() + alts.Len(); n > 0 {
		c.Required = make([]Step, 0, n)
	}
	c.requiredCount = req.Len()
	for _, el := range req.Elems() {
		if set := el.Get("alternatives"); set.Exists() && !set.IsNull() {
			addGroup(group(el), req)
		} else if ec := p.call(el, callKeys); ec != nil {
			c.Required = append(c.Required, Step{Call: ec})
		}
	}
	for _, el := range alts.Elems() {
		addGroup(group(el), alts)
	}
	if overAt.Exists() {
		p.errs = append(p.errs, FieldError{p.pointer(overAt), tooManyCombinations(c.Required)})
	}
	c.combos = combos
	for _, el := range d.Get("optional").Elems() {
		if ec := p.call(el, callKeys); ec != nil {
			c.Optional = append(c.Optional, *ec)
		}
	}
	for _, el := range d.Get("forbidden").Elems() {
		if ec := p.call(el, []string{"reason"}); ec != nil {
			c.Forbidden = append(c.Forbidden, ForbiddenCall{Tool: ec.Tool, Args: ec.Args, Reason: el.Get("reason").Text()})
		}
	}
	if w := d.Get("weights"); w.Kind() == jsondoc.Object {
		c.Weights = make(map[string]float64, w.Len())
		for k, v := range w.Members() {
			f, _ := finiteValue(v)
			c.Weights[k] = f
		}
		if _, err := effectiveWeights(c.Weights); err != nil {
			p.errs = append(p.errs, err.(*ValidationError).Errors...)
		}
	}
	if ms := d.Get("min_score"); ms.Exists() {
		f, fine := finiteValue(ms)
		if !fine || f < 0 || f > 1 || math.IsNaN(f) {
			p.errs = append(p.errs, FieldError{"/min_score", "min_score must be a number in [0,1]"})
		}
		c.MinScore = &f
	}
	if len(p.errs) > 0 {
		return nil, invalid(p.errs...)
	}
	return c, nil
}

// tooManyCombinations is the message for the steps whose alternatives
// groups make more than MaxCombinations combinations: every group, by id
// (or "group i", its index among the groups) with its number of options,
// and their exact product, on one line.
func tooManyCombinations(steps []Step) string {
	var b strings.Builder
	product := big.NewInt(1)
	n := 0
	for _, st := range steps {
		g := st.Group
		if g == nil {
			continue
		}
		if n > 0 {
			b.WriteString(", ")
		}
		switch {
		case g.ID != "" && strings.IndexFunc(g.ID, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
			b.WriteString(strconv.Quote(g.ID)) // the message stays one line
		case g.ID != "":
			b.WriteString(g.ID)
		default:
			b.WriteString("group " + strconv.Itoa(n))
		}
		b.WriteString(": " + strconv.Itoa(len(g.Options)))
		if n == 0 {
			b.WriteString(plural(len(g.Options), " option", " options"))
		}
		product.Mul(product, big.NewInt(int64(len(g.Options))))
		n++
	}
	return fmt.Sprintf("%d alternatives groups (%s) make %s combinations, over the limit of %d", n, b.String(), product, MaxCombinations)
}

// matcherErrors checks the matchers of every args object it can find in a
// contract document that may not match the schema.
func (p *contractParser) matcherErrors(d jsondoc.Value) {
	checkCall := func(v jsondoc.Value) {
		if args := v.Get("args"); args.Kind() == jsondoc.Object {
			p.expected(args)
		}
	}
	checkGroup := func(v jsondoc.Value) {
		for _, opt := range v.Get("alternatives").Elems() {
			if opt.Kind() == jsondoc.Array {
				for _, el := range opt.Elems() {
					checkCall(el)
				}
			} else {
				checkCall(opt)
			}
		}
	}
	for _, el := range d.Get("required").Elems() {
		if g := el.Get("alternatives"); g.Exists() && !g.IsNull() {
			checkGroup(el)
		} else {
			checkCall(el)
		}
	}
	for _, el := range d.Get("alternatives").Elems() {
		checkGroup(el)
	}
	for _, key := range []string{"optional", "forbidden"} {
		for _, el := range d.Get(key).Elems() {
			checkCall(el)
		}
	}
}

// valueTypeName names the JSON type of a document's value with its
// article.
func valueTypeName(v jsondoc.Value) string {
	switch v.Kind() {
	case jsondoc.String:
		return "a string"
	case jsondoc.Bool:
		return "a boolean"
	case jsondoc.Object:
		return "an object"
	case jsondoc.Array:
		return "an array"
	case jsondoc.Number:
		return "a number"
	}
	return "null"
}
