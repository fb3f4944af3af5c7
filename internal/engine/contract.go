package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
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

	// requiredCount is the number of entries in the "required" array
	// (before the top-level alternatives are appended).
	requiredCount int
	// combos is the number of combinations, computed at parse time.
	combos int
	// plan is what scoring precomputes, built on first use (plan.go).
	plan planCache
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

// ExpectedCall is one expected call. Args nil means "do not check
// arguments"; a non-nil empty map means "expect zero arguments". Argument
// values are JSON values (numbers as json.Number) or Matcher values, at any
// depth.
type ExpectedCall struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
}

// ForbiddenCall is a forbidden call rule: a trace call with this Tool (and,
// when Args is non-nil, whose arguments satisfy Args as an expected call's
// would) is a violation. Reason is shown to the user.
type ForbiddenCall struct {
	Tool   string         `json:"tool"`
	Args   map[string]any `json:"args,omitempty"`
	Reason string         `json:"reason,omitempty"`
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
// "calls", is a gold file.
//
// Errors: a *SyntaxError (line and column) for bad JSON; a *ValidationError
// (errors.Is ErrInvalidContract) listing every problem with its JSON
// pointer for a document of the wrong shape.
func ParseContract(data []byte) (*Contract, error) {
	doc, err := DecodeJSON(data)
	if err != nil {
		return nil, err
	}
	return ContractFromValue(doc)
}

// ContractFromValue is ParseContract on an already decoded JSON value
// (numbers as json.Number, as DecodeJSON returns them).
func ContractFromValue(doc any) (*Contract, error) {
	switch d := doc.(type) {
	case []any:
		return parseGold(d, "")
	case map[string]any:
		_, v := d["contract_version"]
		_, r := d["required"]
		_, o := d["optional"]
		if v || r || o {
			return parseContractObject(d)
		}
		if calls, ok := d["calls"]; ok {
			list, ok := calls.([]any)
			if !ok {
				return nil, invalid(FieldError{"/calls", "calls must be an array of expected calls"})
			}
			return parseGold(list, "/calls")
		}
		return nil, invalid(FieldError{"", "neither a contract (an object with contract_version, required or optional) nor a gold file (an array of calls or an object with calls)"})
	}
	return nil, invalid(FieldError{"", fmt.Sprintf("expected a JSON array (gold file) or object (contract), got %s", jsonTypeName(doc))})
}

func invalid(errs ...FieldError) error { return &ValidationError{Kind: "contract", Errors: errs} }

// parseGold reads a gold list; base is the pointer of the list.
func parseGold(list []any, base string) (*Contract, error) {
	var errs []FieldError
	c := &Contract{Gold: true, combos: 1, requiredCount: len(list)}
	for i, el := range list {
		p := base + "/" + strconv.Itoa(i)
		call, ok := el.(map[string]any)
		if !ok {
			errs = append(errs, FieldError{p, fmt.Sprintf("an expected call must be an object, got %s", jsonTypeName(el))})
			continue
		}
		ec := parseCall(call, p, &errs, "tool", "args", "description")
		if ec != nil {
			c.Required = append(c.Required, Step{Call: ec})
		}
	}
	if len(errs) > 0 {
		return nil, invalid(errs...)
	}
	return c, nil
}

// parseCall reads one expected call object. allowed lists its valid keys.
func parseCall(obj map[string]any, p string, errs *[]FieldError, allowed ...string) *ExpectedCall {
	n := len(*errs)
	for k := range obj {
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		if !ok {
			*errs = append(*errs, FieldError{p + "/" + escapePointer(k), fmt.Sprintf("unknown key %q", k)})
		}
	}
	tool, ok := obj["tool"].(string)
	if !ok || tool == "" {
		*errs = append(*errs, FieldError{p + "/tool", "tool must be a non-empty string"})
	}
	ec := &ExpectedCall{Tool: tool}
	switch a := obj["args"].(type) {
	case nil:
	case map[string]any:
		// args that are themselves a matcher object give a Matcher, or
		// nil when the matcher is invalid (its error is already listed).
		switch m := parseExpected(a, p+"/args", errs).(type) {
		case map[string]any:
			ec.Args = m
		case nil:
		default:
			*errs = append(*errs, FieldError{p + "/args", "args must be an object of arguments, not a matcher"})
		}
	default:
		*errs = append(*errs, FieldError{p + "/args", fmt.Sprintf("args must be an object or null, got %s", jsonTypeName(a))})
	}
	if len(*errs) > n {
		return nil
	}
	return ec
}

func parseContractObject(d map[string]any) (*Contract, error) {
	errs, err := schemaErrors(d)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		// Report the matcher problems too, so one run lists everything.
		errs = append(errs, matcherErrors(d)...)
		sort.SliceStable(errs, func(i, j int) bool { return errs[i].Pointer < errs[j].Pointer })
		return nil, invalid(errs...)
	}
	c := &Contract{Version: 2}
	c.Description, _ = d["description"].(string)
	call := func(v any, p string) *ExpectedCall {
		return parseCall(v.(map[string]any), p, &errs, "tool", "args", "description")
	}
	group := func(v any, p string) *Group {
		g := &Group{}
		obj := v.(map[string]any)
		switch id := obj["id"].(type) {
		case string:
			g.ID = id
		case json.Number:
			g.ID = id.String()
		}
		opts := obj["alternatives"].([]any)
		g.Options = make([][]ExpectedCall, 0, len(opts))
		for i, opt := range opts {
			op := p + "/alternatives/" + strconv.Itoa(i)
			var calls []ExpectedCall
			if list, ok := opt.([]any); ok {
				calls = make([]ExpectedCall, 0, len(list))
				for j, el := range list {
					if ec := call(el, op+"/"+strconv.Itoa(j)); ec != nil {
						calls = append(calls, *ec)
					}
				}
			} else if ec := call(opt, op); ec != nil {
				calls = append(calls, *ec)
			}
			g.Options = append(g.Options, calls)
		}
		return g
	}
	combos := 1
	tooMany := false
	addGroup := func(g *Group) {
		c.Required = append(c.Required, Step{Group: g})
		combos *= len(g.Options)
		if combos > MaxCombinations {
			tooMany = true
			combos = MaxCombinations + 1
		}
	}
	req, _ := d["required"].([]any)
	alts, _ := d["alternatives"].([]any)
	if n := len(req) + len(alts); n > 0 {
		c.Required = make([]Step, 0, n)
	}
	c.requiredCount = len(req)
	for i, el := range req {
		p := "/required/" + strconv.Itoa(i)
		if obj := el.(map[string]any); obj["alternatives"] != nil {
			addGroup(group(el, p))
		} else if ec := call(el, p); ec != nil {
			c.Required = append(c.Required, Step{Call: ec})
		}
	}
	for i, el := range alts {
		addGroup(group(el, "/alternatives/"+strconv.Itoa(i)))
	}
	if tooMany {
		errs = append(errs, FieldError{"", fmt.Sprintf("the alternatives give more than %d combinations", MaxCombinations)})
	}
	c.combos = combos
	if opt, ok := d["optional"].([]any); ok {
		for i, el := range opt {
			if ec := call(el, "/optional/"+strconv.Itoa(i)); ec != nil {
				c.Optional = append(c.Optional, *ec)
			}
		}
	}
	if fb, ok := d["forbidden"].([]any); ok {
		for i, el := range fb {
			obj := el.(map[string]any)
			if ec := parseCall(obj, "/forbidden/"+strconv.Itoa(i), &errs, "tool", "args", "reason"); ec != nil {
				reason, _ := obj["reason"].(string)
				c.Forbidden = append(c.Forbidden, ForbiddenCall{Tool: ec.Tool, Args: ec.Args, Reason: reason})
			}
		}
	}
	if w, ok := d["weights"].(map[string]any); ok {
		c.Weights = make(map[string]float64, len(w))
		for k, v := range w {
			f, _ := finiteNumber(v)
			c.Weights[k] = f
		}
		if _, err := effectiveWeights(c.Weights); err != nil {
			errs = append(errs, err.(*ValidationError).Errors...)
		}
	}
	if ms, ok := d["min_score"]; ok {
		f, fine := finiteNumber(ms)
		if !fine || f < 0 || f > 1 || math.IsNaN(f) {
			errs = append(errs, FieldError{"/min_score", "min_score must be a number in [0,1]"})
		}
		c.MinScore = &f
	}
	if len(errs) > 0 {
		return nil, invalid(errs...)
	}
	return c, nil
}

// matcherErrors checks the matchers of every args object it can find in a
// contract document that may not match the schema.
func matcherErrors(d map[string]any) []FieldError {
	var errs []FieldError
	checkCall := func(v any, p string) {
		if obj, ok := v.(map[string]any); ok {
			if args, ok := obj["args"].(map[string]any); ok {
				parseExpected(args, p+"/args", &errs)
			}
		}
	}
	checkGroup := func(v any, p string) {
		obj, _ := v.(map[string]any)
		opts, _ := obj["alternatives"].([]any)
		for i, opt := range opts {
			op := p + "/alternatives/" + strconv.Itoa(i)
			if list, ok := opt.([]any); ok {
				for j, el := range list {
					checkCall(el, op+"/"+strconv.Itoa(j))
				}
			} else {
				checkCall(opt, op)
			}
		}
	}
	list := func(key string) []any { l, _ := d[key].([]any); return l }
	for i, el := range list("required") {
		p := "/required/" + strconv.Itoa(i)
		if obj, ok := el.(map[string]any); ok && obj["alternatives"] != nil {
			checkGroup(el, p)
		} else {
			checkCall(el, p)
		}
	}
	for i, el := range list("alternatives") {
		checkGroup(el, "/alternatives/"+strconv.Itoa(i))
	}
	for _, key := range []string{"optional", "forbidden"} {
		for i, el := range list(key) {
			checkCall(el, "/"+key+"/"+strconv.Itoa(i))
		}
	}
	return errs
}

// jsonTypeName names the JSON type of a decoded value.
func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	if _, ok := toNumber(v); ok {
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}
