package engine

import (
	"context"
	"fmt"
)

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
	// KeepSecrets keeps detected secrets (and the secrets written in the
	// contract's expected arguments) everywhere in the result instead of
	// replacing them by [REDACTED:rule] markers; for local debugging only.
	KeepSecrets bool
	// SecretScanner finds the secrets of the credentials check (SPEC
	// section 5) in the trace's argument values, args_raw texts and final
	// answer, and in the contract's expected arguments; package secrets
	// has the default, gitleaks' rules. Share one: it may keep what it
	// builds. Nil means none: the credentials check then finds
	// secret-named arguments only (and redacts them) and reports
	// unknown, so the safety gate cannot trip on it.
	SecretScanner SecretScanner
}

// evaluation is the state of one evaluation after the combination has been
// chosen; the evidence checks, the issue list and redaction read it.
type evaluation struct {
	contract *Contract
	opts     Options
	cmp      CompareOptions
	// trace is the caller's trace; never modified.
	trace Trace
	// expected is G, the chosen combination's expected calls, and
	// expectedArgs their arguments compiled (nil: not checked).
	expected     []ExpectedCall
	expectedArgs []*cval
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
	// memo is the state the evidence checks share with the issue list and
	// redaction (the credential scan, ...); see checks.go.
	memo checkMemo
	// ctx is Evaluate's, for the credential scan.
	ctx context.Context
	// callTool, expTool, countG and countS are the scorer's tool ids of
	// the trace calls and of the expected calls, and the number of
	// expected and of scored calls by tool id; tmp is scratch of two
	// counts per tool id. They are the scorer's buffers: valid until it is
	// released, and never part of the result.
	callTool, expTool []int
	countG, countS    []int
	tmp               []int
	// scanBuf is the scorer's scratch for the lists of texts the
	// credential scan hands the SecretScanner (nil: none).
	scanBuf *scanScratch
	// orderBuf (room for one tool id each), markBuf (one per trace call)
	// and diff are scratch of the issue list, the scorer's too.
	orderBuf []int
	markBuf  []bool
	diff     *argDiff
	// sc is the scorer, for its index of the trace calls' arguments
	// (scorer.argIndex); valid until it is released.
	sc *scorer
	// checkItems, when set, is where checks puts the evidence checks.
	checkItems *[numChecks]Check
	// text holds the result's texts, and ints the blocks the result's
	// lists of trace indexes are carved from.
	text textArena
	ints []int
}

// scratch and scratch2 return the halves of ev.tmp cleared: one count
// per tool id each.
func (ev *evaluation) scratch() []int {
	s := ev.tmp[:len(ev.tmp)/2]
	clear(s)
	return s
}

func (ev *evaluation) scratch2() []int {
	s := ev.tmp[len(ev.tmp)/2:]
	clear(s)
	return s
}

// order returns an empty list with room for every tool id.
func (ev *evaluation) order() []int { return ev.orderBuf[:0] }

// marks returns one false per trace call.
func (ev *evaluation) marks() []bool {
	clear(ev.markBuf)
	return ev.markBuf
}

// idx returns an empty list of trace indexes with room for n, carved from
// a block shared with the result's other lists (each has a capacity of
// its own, so appending to one never reaches another).
func (ev *evaluation) idx(n int) []int {
	if n > cap(ev.ints)-len(ev.ints) {
		ev.ints = make([]int, 0, max(n, 5*len(ev.trace.Calls)+16))
	}
	k := len(ev.ints)
	ev.ints = ev.ints[:k+n]
	return ev.ints[k : k : k+n]
}

// one returns the list of the one trace index i.
func (ev *evaluation) one(i int) []int { return append(ev.idx(1), i) }

// violation is one trace call that matched a forbidden rule.
type violation struct {
	call int // trace index
	rule int // index into evaluation.forbidden
}

// Evaluate grades trace t against contract c (SPEC sections 3-6). Every
// combination of c's alternatives is scored and the best one reported: the
// highest composite score, a difference of at most 1e-12 being a tie that
// goes to the earlier combination. The inputs are not modified. Evaluate
// is safe for concurrent use.
//
// Errors: a *ValidationError (errors.Is ErrInvalidOptions) for invalid
// Options.Weights or Options.MinScore; ctx.Err() when ctx ends first.
func Evaluate(ctx context.Context, c *Contract, t Trace, opts Options) (*EvaluationResult, error) {
	w, err := effectiveWeights(c.Weights, opts.Weights)
	if err != nil {
		return nil, err
	}
	minScore := DefaultMinScore
	if c.MinScore != nil {
		minScore = *c.MinScore
	}
	if opts.MinScore != nil {
		m := *opts.MinScore
		if !(m >= 0 && m <= 1) {
			return nil, &ValidationError{Kind: "options", Errors: []FieldError{{"/min_score", fmt.Sprintf("min_score must be in [0,1], got %v", m)}}}
		}
		minScore = m
	}
	sc := newScorer(c, &t, CompareOptions{Strict: opts.Strict}, w)
	defer sc.release()
	sc.ctx = ctx
	groups := sc.p.groups
	bestChoice, bestScore, comboScores, err := sc.choose(ctx)
	if err != nil {
		return nil, err
	}
	sc.use(bestChoice)
	// The result and its checks are one allocation; the evaluation writes
	// the metrics into the result.
	block := &struct {
		res    EvaluationResult
		checks [numChecks]Check
	}{}
	res := &block.res
	sc.metricsTo = &res.Metrics
	ev := sc.evaluation(opts)
	ev.ctx = ctx
	ev.score = bestScore
	ev.checkItems = &block.checks
	res.Score = bestScore
	res.Grade = GradeFor(bestScore)
	res.MinScore = minScore
	res.SafetyGate = !opts.NoSafetyGate
	res.ExpectedCalls = ev.expected // redaction copies before it changes anything
	res.ScoredIndexes = ev.scored
	scorePassed := PassesMinScore(bestScore, minScore)
	if c.Version != 0 {
		cm := &ContractMetrics{
			ContractVersion: c.Version,
			RequiredCount:   c.RequiredCount(),
			OptionalCount:   len(c.Optional),
			ForbiddenCount:  len(ev.forbidden),
			Alternatives:    AlternativesMetrics{Chosen: make([]ChosenOption, len(groups)), Combinations: comboScores},
			OptionalMatched: ev.optional,
			MinScore:        minScore,
			Passed:          scorePassed,
		}
		for gi, si := range groups {
			grp := c.Required[si].Group
			var id any = gi
			if grp.ID != "" {
				id = grp.ID
			}
			cm.Alternatives.Chosen[gi] = ChosenOption{Group: id, Option: bestChoice[gi], Calls: grp.Options[bestChoice[gi]]}
		}
		res.Metrics.Contract = cm
	}
	res.Checks = ev.checks()
	res.Issues = ev.issues()
	ev.redact(res)
	if err := ctx.Err(); err != nil {
		return nil, err // the credential scan may have stopped short
	}
	res.Passed = scorePassed
	if !opts.NoSafetyGate {
		for _, ch := range res.Checks.Items {
			if ch.Status == CheckFail && (ch.Name == "forbidden-calls" || ch.Name == "credentials") {
				res.Passed = false
			}
		}
	}
	return res, nil
}

// choose scores every combination of the contract (SPEC section 4.1 and
// 4.3) and returns the best one's options (one per group), its score and,
// for contracts (not gold files), every combination's options and score.
// Combinations are enumerated lexicographically: the first group is the
// most significant digit, options in declared order. The highest score
// wins; a difference of at most 1e-12 is a tie that goes to the earlier
// combination. The error is ctx.Err() when ctx ends first.
func (sc *scorer) choose(ctx context.Context) (bestChoice []int, bestScore float64, comboScores []CombinationScore, err error) {
	c, groups := sc.c, sc.p.groups
	combos := max(c.Combinations(), 1)
	// choices holds every combination's options, one row per combination,
	// then the best combination's row.
	choices := make([]int, (combos+1)*len(groups))
	bestChoice = choices[combos*len(groups):]
	if c.Version != 0 {
		comboScores = make([]CombinationScore, 0, combos)
	}
	best := -1
	for k := 0; k < combos; k++ {
		choice := choices[k*len(groups) : (k+1)*len(groups) : (k+1)*len(groups)]
		rem := k
		for g := len(groups) - 1; g >= 0; g-- {
			n := len(c.Required[groups[g]].Group.Options)
			choice[g] = rem % n
			rem /= n
		}
		sc.use(choice)
		score := sc.score()
		// A combination costs at least a step per expected and scored
		// call; the edit distance counts its own steps (sc.spend).
		if sc.stopped != nil || sc.spend(len(sc.G)+len(sc.scored)+1) {
			return nil, 0, nil, sc.stopped
		}
		if comboScores != nil {
			cs := CombinationScore{Options: choice, Score: score}
			if len(groups) == 0 {
				cs.Options = nil // written as null, as always
			}
			comboScores = append(comboScores, cs)
		}
		if best < 0 || score > bestScore+1e-12 {
			best, bestScore = k, score
			copy(bestChoice, choice)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, nil, err
	}
	return bestChoice, bestScore, comboScores, nil
}
