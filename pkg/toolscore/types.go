package toolscore

import "github.com/toolscore/toolscore/internal/engine"

// Matcher decides whether an actual argument value satisfies an expected
// one. Match gets the value the trace holds at the matcher's place as a
// plain JSON value (json.Number, string, bool, nil, []any or
// map[string]any) and the comparison options of the evaluation.
// Implementations must be safe for concurrent use (a contract is shared
// by evaluations) and should implement json.Marshaler, which results use
// to show them; a custom operator's Matcher that does not is shown as the
// operator object it was read from.
type Matcher = engine.Matcher

// CompareOptions are the comparison options a Matcher is given: Strict
// turns off string trimming and int/float leniency (Options.Strict).
type CompareOptions = engine.CompareOptions

// MatcherFunc builds the Matcher of a custom operator (see WithMatcher)
// from the operator's argument: the value of {"$op": arg} as an expected
// value (numbers as json.Number, objects map[string]any, arrays []any,
// matcher objects inside it already Matchers). A non-nil error, or a nil
// Matcher, makes LoadContract fail with the error's text at the
// argument's JSON pointer. It is called once per occurrence, while the
// contract is loaded.
type MatcherFunc = engine.MatcherFunc

// ExpectedCall is one expected call of a contract, as results list them:
// Tool, and Args (not checked: the zero Args; checked and empty: no
// arguments), whose Map holds JSON values (numbers as json.Number) or
// Matchers at any depth. Its JSON is {"tool", "args"}, matchers as their
// operator objects.
type ExpectedCall = engine.ExpectedCall

// Args are an expected call's or a forbidden rule's arguments: read from
// a contract they stay compiled and become a map only when Map is called;
// NewArgs makes them from a map.
type Args = engine.Args

// NewArgs returns a map of expected values as Args (nil: not checked).
func NewArgs(m map[string]any) Args { return engine.NewArgs(m) }

// ForbiddenCall is a forbidden-call rule: a call of Tool (and, when Args
// are checked, whose arguments satisfy Args as an expected call's would)
// violates it; Reason is shown in the check and the issue. In
// Options.Forbidden, Args (NewArgs) hold plain JSON values (numbers as
// json.Number or Go numbers) or Matchers.
type ForbiddenCall = engine.ForbiddenCall

// Grade is a letter grade, A to F, derived from a composite score.
type Grade = engine.Grade

// The grades, best first.
const (
	GradeA Grade = engine.GradeA
	GradeB Grade = engine.GradeB
	GradeC Grade = engine.GradeC
	GradeD Grade = engine.GradeD
	GradeF Grade = engine.GradeF
)

// Metrics are the figures of an evaluation (docs/grading.md section 3;
// section 4 for Contract), each a fraction in [0,1] unless it is a
// count: SelectionAccuracy, InvocationAccuracy, RequiredCallRecall, the
// argument precision/recall/F1 (Arguments), the tool-name sequence edit
// distance (Sequence), redundant calls (Efficiency), expected versus
// called tool sets (ToolCorrectness), the effective Weights, and for
// contracts the chosen alternatives and every combination's score
// (Contract, nil for gold files).
type Metrics = engine.Metrics

// ArgumentMetrics are the argument precision, recall and F1, each in
// [0,1].
type ArgumentMetrics = engine.ArgumentMetrics

// SequenceMetrics compare the expected and scored tool-name sequences:
// EditDistance is the Levenshtein distance over whole names (a count),
// NormalizedDistance it divided by the longer length (at least 1),
// SequenceAccuracy 1 - NormalizedDistance.
type SequenceMetrics = engine.SequenceMetrics

// EfficiencyMetrics count scored calls beyond each tool's expected count:
// RedundantCount of TotalCalls, RedundantRate their ratio (0 for no
// calls).
type EfficiencyMetrics = engine.EfficiencyMetrics

// ToolCorrectnessMetrics compare the sets of expected and called tool
// names (sorted, each once): ToolCorrectness is CorrectCount /
// TotalExpected.
type ToolCorrectnessMetrics = engine.ToolCorrectnessMetrics

// Weights are the effective composite weights, renormalised to sum 1; the
// composite score is their weighted sum of selection accuracy, argument
// F1, sequence accuracy, 1 - redundant rate and required-call recall.
type Weights = engine.Weights

// ContractMetrics describe a contract's evaluation: its counts of
// required, optional and forbidden entries, the alternatives chosen and
// every combination's score, the trace indexes left out as optional, and
// the passing score with the verdict before the safety gate.
type ContractMetrics = engine.ContractMetrics

// AlternativesMetrics are the option chosen per alternatives group
// (Chosen) and every combination's option indexes and score
// (Combinations), in enumeration order.
type AlternativesMetrics = engine.AlternativesMetrics

// ChosenOption is the option picked for one alternatives group: Group is
// the group's id (a string), or its 0-based index among the groups (an
// int) when it has none; Option the 0-based option index; Calls its
// expected calls.
type ChosenOption = engine.ChosenOption

// CombinationScore is one combination: the option index chosen in each
// group, in group order, and its composite score in [0,1].
type CombinationScore = engine.CombinationScore

// Checks are the evidence checks of a result (Items, in a fixed order)
// with the number of each status.
type Checks = engine.Checks

// Check is one evidence check: Name (required-calls, call-order,
// forbidden-calls, credentials, tool-errors, honesty, grounding), Status,
// a one-line Detail, the trace indexes involved (Calls) and per-item
// Findings (such as the redacted credentials found).
type Check = engine.Check

// CheckStatus is an evidence check's outcome.
type CheckStatus = engine.CheckStatus

// The outcomes of an evidence check.
const (
	CheckPass    CheckStatus = engine.CheckPass
	CheckFail    CheckStatus = engine.CheckFail
	CheckUnknown CheckStatus = engine.CheckUnknown
)

// Finding is one located item of a check: the trace index of the call
// (-1 for the final answer), a JSON pointer into its arguments, the rule
// that fired and the value as shown (redacted).
type Finding = engine.Finding

// Issue is one entry of the ranked list of what to fix: a stable Kind
// ("forbidden-call", "missing-call", "wrong-tool", "arguments", "order",
// "redundant", ...), its Severity, the Tool, the Problem and the Fix in
// one line each, and the trace indexes involved (Calls).
type Issue = engine.Issue

// Severity ranks an Issue.
type Severity = engine.Severity

// Issue severities, most severe first.
const (
	SeverityCritical Severity = engine.SeverityCritical
	SeverityHigh     Severity = engine.SeverityHigh
	SeverityMedium   Severity = engine.SeverityMedium
	SeverityLow      Severity = engine.SeverityLow
)
