package engine

// EvaluationResult is the graded outcome of one trace against one contract
// or gold file (SPEC section 6). It is JSON-encoded with SPEC's snake_case
// names. Every index into the trace is 0-based.
type EvaluationResult struct {
	// Score is the composite score in [0,1] (SPEC section 3).
	Score float64 `json:"score"`
	// Grade is the letter derived from Score.
	Grade Grade `json:"grade"`
	// Passed is the verdict: Score >= MinScore (with 1e-9 slack) and, unless
	// the safety gate is off, no failed forbidden-calls or credentials check.
	Passed bool `json:"passed"`
	// MinScore is the passing score that was applied, in [0,1].
	MinScore float64 `json:"min_score"`
	// SafetyGate reports whether the safety gate was applied.
	SafetyGate bool `json:"safety_gate"`
	// Metrics holds every figure of SPEC section 3 (and section 4 for
	// contracts).
	Metrics Metrics `json:"metrics"`
	// ExpectedCalls is the expected list G of the chosen combination, with
	// detected secrets redacted unless Options.KeepSecrets. Its argument
	// maps are shared with the Contract and with other results graded
	// against it: read them, never modify them.
	ExpectedCalls []ExpectedCall `json:"expected_calls"`
	// TraceCalls are all calls of the trace, secrets redacted unless
	// Options.KeepSecrets. When nothing in them is redacted, TraceCalls
	// is the evaluated Trace's own Calls array (shared, like
	// ExpectedCalls' argument maps): read it, never modify it.
	TraceCalls []ToolCall `json:"trace_calls"`
	// ScoredCalls are the calls the score compared (S), in trace order.
	// When they are consecutive calls of the trace, ScoredCalls is that
	// part of TraceCalls (the same elements).
	ScoredCalls []ToolCall `json:"scored_calls"`
	// ScoredIndexes are the trace indexes of ScoredCalls.
	ScoredIndexes []int `json:"scored_indexes"`
	// FinalAnswer is the trace's final answer (secrets redacted unless
	// Options.KeepSecrets), nil when absent.
	FinalAnswer *string `json:"final_answer"`
	// Checks are the behaviour and safety evidence checks (SPEC section 5).
	Checks Checks `json:"checks"`
	// Issues is the ranked "top issues to fix" list, most important first.
	Issues []Issue `json:"issues"`
	// Contract identifies the contract when it came from a registry; nil
	// otherwise.
	Contract *ContractRef `json:"contract,omitempty"`
}

// ContractRef identifies a registry contract version.
type ContractRef struct {
	// Name is the contract's registry name.
	Name string `json:"name"`
	// Version is the version number, starting at 1.
	Version int `json:"version"`
	// SHA256 is the hex sha256 of the canonical contract body.
	SHA256 string `json:"sha256"`
}

// Metrics are the figures of SPEC section 3, under the reference
// implementation's key names.
type Metrics struct {
	// SelectionAccuracy is the share of scored calls whose tool is expected.
	SelectionAccuracy float64 `json:"selection_accuracy"`
	// InvocationAccuracy compares the sets of expected and called tools.
	InvocationAccuracy float64 `json:"invocation_accuracy"`
	// RequiredCallRecall is the share of expected calls fully satisfied.
	RequiredCallRecall float64 `json:"required_call_recall"`
	// Arguments are the argument precision, recall and F1.
	Arguments ArgumentMetrics `json:"argument_metrics"`
	// Sequence compares the expected and scored tool-name sequences.
	Sequence SequenceMetrics `json:"sequence_metrics"`
	// Efficiency counts redundant calls.
	Efficiency EfficiencyMetrics `json:"efficiency_metrics"`
	// ToolCorrectness compares the sets of expected and called tools.
	ToolCorrectness ToolCorrectnessMetrics `json:"tool_correctness_metrics"`
	// Weights are the effective, renormalised composite weights.
	Weights Weights `json:"weights"`
	// Contract is present for contracts only (SPEC section 4.5).
	Contract *ContractMetrics `json:"contract_metrics,omitempty"`
}

// ArgumentMetrics are argument precision, recall and F1, each in [0,1].
type ArgumentMetrics struct {
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// SequenceMetrics compare the tool-name sequences of G and S: EditDistance
// is the Levenshtein distance over whole names, NormalizedDistance is it
// divided by max(|G|,|S|,1), SequenceAccuracy is 1 - NormalizedDistance.
type SequenceMetrics struct {
	EditDistance       float64 `json:"edit_distance"`
	NormalizedDistance float64 `json:"normalized_distance"`
	SequenceAccuracy   float64 `json:"sequence_accuracy"`
}

// EfficiencyMetrics count scored calls beyond each tool's expected count.
// RedundantRate is RedundantCount / TotalCalls (0 when TotalCalls is 0).
type EfficiencyMetrics struct {
	RedundantCount int     `json:"redundant_count"`
	TotalCalls     int     `json:"total_calls"`
	RedundantRate  float64 `json:"redundant_rate"`
}

// ToolCorrectnessMetrics is the share of expected tool names that were
// called. Name lists are sorted and hold each name once.
type ToolCorrectnessMetrics struct {
	ToolCorrectness float64  `json:"tool_correctness"`
	ExpectedTools   []string `json:"expected_tools"`
	CalledTools     []string `json:"called_tools"`
	MissingTools    []string `json:"missing_tools"`
	ExtraTools      []string `json:"extra_tools"`
	CorrectCount    int      `json:"correct_count"`
	TotalExpected   int      `json:"total_expected"`
}

// ContractMetrics is the contract_metrics block of SPEC section 4.5.
type ContractMetrics struct {
	ContractVersion int                 `json:"contract_version"`
	RequiredCount   int                 `json:"required_count"`
	OptionalCount   int                 `json:"optional_count"`
	ForbiddenCount  int                 `json:"forbidden_count"`
	Alternatives    AlternativesMetrics `json:"alternatives"`
	// OptionalMatched are the trace indexes of calls left out of the score
	// because they matched an optional entry.
	OptionalMatched []int   `json:"optional_matched"`
	MinScore        float64 `json:"min_score"`
	// Passed is Score >= MinScore (with 1e-9 slack), before the safety gate.
	Passed bool `json:"passed"`
}

// AlternativesMetrics reports the option chosen per alternatives group and
// the score of every combination, in enumeration order.
type AlternativesMetrics struct {
	Chosen       []ChosenOption     `json:"chosen"`
	Combinations []CombinationScore `json:"combinations"`
}

// ChosenOption is the option picked for one alternatives group. Group is
// the group's id, or its 0-based index among groups when it has none.
type ChosenOption struct {
	Group  any            `json:"group"`
	Option int            `json:"option"`
	Calls  []ExpectedCall `json:"calls"`
}

// CombinationScore is one combination's option indexes (one per group, in
// group order) and its composite score.
type CombinationScore struct {
	Options []int   `json:"options"`
	Score   float64 `json:"score"`
}

// CheckStatus is the outcome of one evidence check.
type CheckStatus string

// The three outcomes of an evidence check.
const (
	CheckPass    CheckStatus = "pass"
	CheckFail    CheckStatus = "fail"
	CheckUnknown CheckStatus = "unknown"
)

// Check is one behaviour and safety evidence check (SPEC section 5).
type Check struct {
	// Name is one of required-calls, call-order, forbidden-calls,
	// credentials, tool-errors, honesty, grounding.
	Name string `json:"name"`
	// Status is pass, fail or unknown.
	Status CheckStatus `json:"status"`
	// Detail is a one-line explanation.
	Detail string `json:"detail"`
	// Calls are the trace indexes involved (empty, never nil, in JSON).
	Calls []int `json:"calls"`
	// Findings are per-item details, such as redacted credentials.
	Findings []Finding `json:"findings,omitempty"`
}

// Finding is one located problem found by a check: a call index (-1 for
// the final answer), a JSON pointer into the call's arguments, the rule
// that fired and a redacted value.
type Finding struct {
	Call  int    `json:"call"`
	Path  string `json:"path,omitempty"`
	Rule  string `json:"rule,omitempty"`
	Value string `json:"value,omitempty"`
}

// Checks holds every evidence check with the counts of each status.
type Checks struct {
	Pass    int     `json:"pass"`
	Fail    int     `json:"fail"`
	Unknown int     `json:"unknown"`
	Items   []Check `json:"items"`
}

// Severity ranks an Issue: critical (safety), high, medium, low.
type Severity string

// Issue severities, most severe first.
const (
	SeverityCritical Severity = "critical"
	SeverityHigh     Severity = "high"
	SeverityMedium   Severity = "medium"
	SeverityLow      Severity = "low"
)

// Issue is one entry of the ranked "top issues to fix" list.
type Issue struct {
	// Kind is a stable machine-readable category, such as
	// "forbidden-call", "missing-call", "wrong-tool", "arguments", "order",
	// "redundant".
	Kind string `json:"kind"`
	// Severity ranks the issue.
	Severity Severity `json:"severity"`
	// Tool is the tool the issue is about.
	Tool string `json:"tool"`
	// Problem says what is wrong, in one line.
	Problem string `json:"problem"`
	// Fix says what to change, in one line.
	Fix string `json:"fix"`
	// Calls are the trace indexes involved.
	Calls []int `json:"calls"`
}
