package engine

import "context"

// DefaultMinScore is the passing score used when neither the contract nor
// the caller gives one.
const DefaultMinScore = 0.9

// Options tune one evaluation. The zero value is the default: lenient
// comparison, the contract's weights and min score, the safety gate on and
// secrets redacted.
type Options struct {
	// Strict turns off string trimming and int/float leniency (SPEC
	// section 2).
	Strict bool
	// Weights are merged over the contract's weights, which are merged over
	// the defaults; the result is renormalised to sum 1. Keys are the names
	// of Weights' JSON fields. Unknown keys, negative or non-finite values
	// and an all-zero sum give an ErrInvalidOptions error.
	Weights map[string]float64
	// MinScore overrides the contract's passing score; it must be in [0,1].
	MinScore *float64
	// Forbidden rules are added to the contract's.
	Forbidden []ForbiddenCall
	// NoSafetyGate turns the safety gate off: a failed forbidden-calls or
	// credentials check then no longer forces FAIL.
	NoSafetyGate bool
	// KeepSecrets keeps detected secrets in TraceCalls, ScoredCalls and
	// FinalAnswer instead of redacting them (for local debugging only).
	KeepSecrets bool
}

// evaluation is the state of one evaluation after the combination has been
// chosen; the evidence checks, the issue list and redaction read it.
type evaluation struct {
	contract *Contract
	opts     Options
	cmp      CompareOptions
	// trace is the caller's trace; never modified.
	trace Trace
	// expected is G, the chosen combination's expected calls.
	expected []ExpectedCall
	// filledBy[i] is the trace index of the call that filled expected[i]
	// (SPEC section 4.2), or -1.
	filledBy []int
	// satisfiedBy[i] is the trace index of the scored call that fully
	// satisfies expected[i] (required_call_recall matching), or -1.
	satisfiedBy []int
	// scored are the trace indexes of S, in trace order.
	scored []int
	// optional are the trace indexes left out of the score as optional.
	optional []int
	// forbidden are the contract's rules followed by Options.Forbidden.
	forbidden []ForbiddenCall
	// violations are the forbidden-call violations in trace order.
	violations []violation
	// metrics are the chosen combination's metrics.
	metrics *Metrics
	// score is the composite score.
	score float64
}

// violation is one trace call that matched a forbidden rule.
type violation struct {
	call int // trace index
	rule int // index into evaluation.forbidden
}

// Evaluate grades trace t against contract c (SPEC sections 3-6). Every
// combination of c's alternatives is scored and the best one reported.
// The inputs are not modified. Evaluate is safe for concurrent use.
//
// Errors: a *ValidationError (errors.Is ErrInvalidOptions) for invalid
// Options.Weights or Options.MinScore; ctx.Err() when ctx ends first.
func Evaluate(ctx context.Context, c *Contract, t Trace, opts Options) (*EvaluationResult, error) {
	return nil, ctx.Err()
}
