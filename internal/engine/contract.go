package engine

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
	return nil, &ValidationError{Kind: "contract", Errors: []FieldError{{"", "not implemented yet"}}}
}
