package record

import (
	"time"

	"github.com/google/uuid"
)

// TraceState is the state of an OpenTelemetry trace being assembled
// (otlp_traces.state).
type TraceState string

// The trace states. Open and closed are in progress; the others are final
// for the trace's revision.
const (
	// TraceOpen: spans are arriving.
	TraceOpen TraceState = "open"
	// TraceClosed: complete; its grading job is queued or running.
	TraceClosed TraceState = "closed"
	// TraceGraded: graded; ResultID is its result.
	TraceGraded TraceState = "graded"
	// TraceUnmatched: no grading rule matched it.
	TraceUnmatched TraceState = "unmatched"
	// TraceNoToolCalls: a rule matched, the trace has no tool call, and
	// the rule does not grade such traces.
	TraceNoToolCalls TraceState = "no_tool_calls"
	// TraceFailed: it could not be graded (Reason says why).
	TraceFailed TraceState = "failed"
)

// Final reports whether s is a final state.
func (s TraceState) Final() bool { return s != TraceOpen && s != TraceClosed }

// SpanBatch is the spans of one trace from one export request, as
// otlp_spans stores them: Data is a protobuf TracesData.
type SpanBatch struct {
	TraceID   [16]byte
	Spans     int
	RootEnded bool
	Data      []byte
}

// SpanWrite is what one export request stores: its span batches, for one
// project.
type SpanWrite struct {
	ProjectID int64
	Batches   []SpanBatch
	// Quiet is how long after its last span a trace whose root span ended
	// is complete; MaxAge how long after its first span any trace is.
	Quiet, MaxAge time.Duration
	// Reopen makes a span that arrives for a final trace reopen it as a
	// new revision (its batch is stored); otherwise such a batch is only
	// counted as late.
	Reopen bool
}

// SpanWriteResult says what WriteSpans did.
type SpanWriteResult struct {
	// Late is the number of spans that arrived for a trace already closed
	// or final; Reopened the number of final traces they reopened.
	Late, Reopened int
	// Stored is the number of spans stored.
	Stored int
}

// OTLPTrace is one row of otlp_traces.
type OTLPTrace struct {
	ProjectID  int64
	TraceID    [16]byte
	State      TraceState
	Revision   int
	Spans      int
	LateSpans  int
	RootEnded  bool
	FirstSeen  time.Time
	LastSeen   time.Time
	DueAt      time.Time
	ClosedAt   *time.Time
	FinishedAt *time.Time
	// Incomplete is true for a trace closed at the maximum age.
	Incomplete bool
	// RuleName and RuleVersion are the grading rule that matched ("" and
	// 0 when none did).
	RuleName    string
	RuleVersion int
	// ResultID is the latest revision's result, FirstResultID the first
	// revision's (uuid.Nil when none); RegradeID identifies the latest
	// revision's regrade link when Revision > 1.
	ResultID      uuid.UUID
	FirstResultID uuid.UUID
	RegradeID     uuid.UUID
	Reason        string
}

// ClosedTrace is a trace the assembler closed: its grading job is queued
// in the same transaction.
type ClosedTrace struct {
	ProjectID  int64
	TraceID    [16]byte
	Revision   int
	Incomplete bool
	LastSeen   time.Time
	// Spans is the number of spans received for it.
	Spans int
}

// TraceRequeue selects finished traces whose spans are kept, to grade
// them again (store.DB.RequeueOTLPTraces): of a project, in one of
// States, finished before Before, only those in TraceIDs when it is not
// empty, oldest finished first, at most Limit.
type TraceRequeue struct {
	ProjectID int64
	States    []TraceState
	TraceIDs  [][16]byte
	Before    time.Time
	Limit     int
}

// StoredTrace is a trace with the data of its stored span batches, in
// arrival order (empty once they were purged).
type StoredTrace struct {
	OTLPTrace
	Data [][]byte
}

// TraceFinish is what a grading job writes for a trace: its final state,
// the rule, and the result (nil unless graded). KeepSpans keeps the span
// batches (for a later regrade); otherwise they are deleted.
type TraceFinish struct {
	ProjectID   int64
	TraceID     [16]byte
	Revision    int
	State       TraceState
	RuleName    string
	RuleVersion int
	Reason      string
	Result      *Result
	KeepSpans   bool
}

// GradingRule is one version of a named grading rule (grading_rules).
// Body is the canonical JSON of the rule document.
type GradingRule struct {
	ProjectID int64
	Name      string
	Version   int
	SHA256    string
	Body      []byte
	CreatedAt time.Time
}
