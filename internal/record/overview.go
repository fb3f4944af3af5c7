package record

import "time"

// OverviewFilter selects the results the console's overview aggregates:
// those of whole UTC days From <= day < Until, narrowed by the other
// fields (their zero values select everything).
type OverviewFilter struct {
	// From and Until are UTC midnights; Until is after From.
	From, Until time.Time
	// ContractName selects one registry contract; ContractVersion one of
	// its versions (0: every version; needs ContractName).
	ContractName    string
	ContractVersion int
	Agent           string
	// Labels must all match. A label filter makes the overview read the
	// matching results themselves: the daily aggregates do not keep
	// labels.
	Labels []LabelFilter
	// Regrades selects originals, regrade results or both ("" is
	// RegradesInclude).
	Regrades RegradesFilter
}

// Overview aggregates the results an OverviewFilter selects.
type Overview struct {
	// Series are the aggregates per UTC day and contract version, ordered
	// by day, then contract name and version. A contract version with no
	// result on a day has no entry for it.
	Series []DayContractStats
	// TopIssues are the most frequent first issues of the results (each
	// result's most important issue, if it has one), most frequent first;
	// at most the limit asked for.
	TopIssues []IssueCount
}

// DayContractStats aggregates the results of one contract version on one
// UTC day.
type DayContractStats struct {
	// Day is the UTC midnight starting the day.
	Day time.Time
	// ContractName and ContractVersion identify the contract version; ""
	// and 0 stand for inline contracts and gold lists.
	ContractName    string
	ContractVersion int
	// Count is the number of results, Passed the passing ones.
	Count  int64
	Passed int64
	// ScoreSum is the sum of their composite scores.
	ScoreSum float64
	// Grades counts the results per grade: A, B, C, D, F in that order.
	Grades [5]int64
}

// IssueCount counts the results whose first issue is of one kind, about
// one tool, at one severity.
type IssueCount struct {
	Kind     string
	Severity string
	// Tool is "" for an issue about no one tool (the final answer).
	Tool string
	// Problem is the problem text of one of those issues, as an example
	// (the texts name call numbers and arguments, so they differ).
	Problem string
	Count   int64
}
