package record

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// RegradeState is the life cycle of a regrade: pending (waiting for its
// plan), running (chunks queued or being worked), then one of the final
// states completed, cancelled or failed.
type RegradeState string

// The states of a regrade.
const (
	RegradePending   RegradeState = "pending"
	RegradeRunning   RegradeState = "running"
	RegradeCompleted RegradeState = "completed"
	RegradeCancelled RegradeState = "cancelled"
	RegradeFailed    RegradeState = "failed"
)

// Final reports whether s is a state a regrade never leaves.
func (s RegradeState) Final() bool {
	return s == RegradeCompleted || s == RegradeCancelled || s == RegradeFailed
}

// RegradeSelection selects the original results (never regrade results)
// a regrade re-evaluates. ContractName is required; the zero value of every
// other field selects everything.
type RegradeSelection struct {
	// ContractName selects results graded against this registry contract.
	ContractName string `json:"contract_name"`
	// FromVersions selects these versions of it; empty means every version
	// but the regrade's target.
	FromVersions []int  `json:"from_versions,omitempty"`
	TaskID       string `json:"task_id,omitempty"`
	RunID        string `json:"run_id,omitempty"`
	Agent        string `json:"agent,omitempty"`
	// Labels must all match.
	Labels []LabelFilter `json:"labels,omitempty"`
	// Since and Until bound the originals' created_at: Since <= created_at
	// < Until; zero means unbounded.
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
}

// Regrade is one regrade: its selection, its target contract version and
// its progress. Counters count originals.
type Regrade struct {
	ID        uuid.UUID
	ProjectID int64
	State     RegradeState
	// Target is the contract version the originals are re-evaluated
	// against.
	Target    ContractRef
	Selection RegradeSelection
	// SnapshotAt bounds the selection: only originals created before it.
	SnapshotAt time.Time
	// ChunkSize is the number of originals per chunk job.
	ChunkSize int
	// Total is the number of selected originals: counted when the regrade
	// is planned (0 while pending), and set to Done + Failed when it
	// completes.
	Total int64
	// Chunks and ChunksDone count chunk jobs.
	Chunks     int
	ChunksDone int
	// Done counts originals with a new result; Failed those whose stored
	// row could not be regraded (see RegradeFailure).
	Done   int64
	Failed int64
	// PassToFail and FailToPass count verdict flips; Changed counts
	// results whose verdict or grade changed.
	PassToFail int64
	FailToPass int64
	Changed    int64
	// ScoreDeltaSum is the sum over Done of new score - old score.
	ScoreDeltaSum float64
	// Error says why a failed regrade failed ("" otherwise).
	Error      string
	CreatedAt  time.Time
	StartedAt  *time.Time
	FinishedAt *time.Time
}

// RegradeChange is one original whose verdict or grade changed in a
// regrade.
type RegradeChange struct {
	OriginalID uuid.UUID
	ResultID   uuid.UUID
	// OldVersion is the original's contract version (0 for none).
	OldVersion int
	OldScore   float64
	NewScore   float64
	OldGrade   string
	NewGrade   string
	OldPassed  bool
	NewPassed  bool
	// OldIssue and NewIssue are the first entry of each result's issues
	// as JSON, nil when there is none.
	OldIssue json.RawMessage
	NewIssue json.RawMessage
}

// RegradeFailure is one original a regrade could not re-evaluate, with
// the reason (its stored row no longer parses, or its stored options are
// invalid).
type RegradeFailure struct {
	OriginalID uuid.UUID
	Reason     string
}

// RegradeKey is a position in the (created_at, id) order of results; a
// chunk covers the originals after one key up to another.
type RegradeKey struct {
	CreatedAt time.Time `json:"created_at"`
	ID        uuid.UUID `json:"id"`
}

// RegradeChunk is the range of originals of one chunk job: those after
// After (from the start when nil) up to and including Upto, in
// (created_at, id) order.
type RegradeChunk struct {
	Index int         `json:"index"`
	After *RegradeKey `json:"after,omitempty"`
	Upto  RegradeKey  `json:"upto"`
}

// RegradeOriginal is what a regrade reads of an original result: its
// identity and stored verdict, the stored inputs of grading (trace calls,
// final answer, options) and the columns copied to the new result.
type RegradeOriginal struct {
	ResultSummary
	Options     json.RawMessage
	TraceCalls  json.RawMessage
	FinalAnswer *string
	// FailedCredentials is the original's credentials check when it
	// failed (nil otherwise): the stored calls are redacted, so a regrade
	// cannot find those secrets again and keeps this finding.
	FailedCredentials json.RawMessage
	// FirstIssue is the original's first issue (nil when none).
	FirstIssue json.RawMessage
	// Unreadable says why a stored column could not be read ("" when
	// the row was read whole); the regrade counts the original as failed.
	Unreadable string
}

// RegradeOutcome is the new result of one original, or why there is none.
type RegradeOutcome struct {
	// Original is the original's summary.
	Original ResultSummary
	// OriginalIssue is the original's first issue (nil when none).
	OriginalIssue json.RawMessage
	// Result is the new result; nil when Failure is set.
	Result *Result
	// Failure says why the original could not be regraded.
	Failure string
}

// ChunkWrite is what one chunk's transaction writes.
type ChunkWrite struct {
	RegradeID uuid.UUID
	ProjectID int64
	// Chunk is the chunk's index.
	Chunk    int
	Outcomes []RegradeOutcome
}

// ChunkCounts is what one chunk's transaction actually wrote: duplicates
// of a chunk that ran before are not counted.
type ChunkCounts struct {
	// Repeated reports that the chunk had already been counted.
	Repeated   bool
	Done       int64
	Failed     int64
	Skipped    int64
	PassToFail int64
	FailToPass int64
	Changed    int64
	// State is the regrade's state after the chunk.
	State RegradeState
}

// VersionComparison compares two contract versions of one contract on the
// same originals: those with a result at both versions (an original graded
// at one and regraded at the other, or regraded at both; the latest
// result per version counts).
type VersionComparison struct {
	ContractName string
	VersionA     int
	VersionB     int
	// Originals is the number of originals with a result at both
	// versions.
	Originals int64
	// PassedA and PassedB count passing results at each version.
	PassedA int64
	PassedB int64
	// MeanScoreA and MeanScoreB are the mean composite scores (0 when
	// Originals is 0).
	MeanScoreA float64
	MeanScoreB float64
	// PassToFail and FailToPass count verdict flips from A to B.
	PassToFail int64
	FailToPass int64
	// GradesA and GradesB count results per grade letter.
	GradesA map[string]int64
	GradesB map[string]int64
}

// LatestResult is one original result with its latest verdict: the
// newest of its regrade results, or the original itself when it has
// none.
type LatestResult struct {
	// Original is the original's position, the cursor of the listing.
	Original Cursor
	// Result is the latest result's summary.
	Result ResultSummary
}
