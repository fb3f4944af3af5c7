-- OpenTelemetry ingest (issue 17): POST /v1/traces stores spans as they
-- arrive, assembles them per trace id and grades each complete trace once,
-- as a river job (migration 00002), with the contract a grading rule
-- chooses; see internal/otlp.

-- +goose Up

-- otlp_traces is one trace being assembled or already graded. A trace is
-- open while spans arrive; the assembler closes it (and queues its grading
-- job, in the same transaction) once due_at has passed: its root span has
-- ended and no span came for the quiet period, or it reached the maximum
-- age. The grading job's transaction moves it to a final state and sets
-- result_id; the primary key and that conditional transition (state =
-- 'closed' and the job's revision) are what make one result per trace
-- revision, however often a job runs.
CREATE TABLE otlp_traces (
    project_id      bigint NOT NULL REFERENCES projects (id),
    trace_id        bytea NOT NULL CHECK (length(trace_id) = 16),
    -- open, closed (its job queued), then graded, unmatched (no rule),
    -- no_tool_calls (matched, no tool call, the rule does not grade such
    -- traces) or failed (reason says why: an unknown contract, a trace
    -- the formats cannot read).
    state           text NOT NULL CHECK (state IN ('open', 'closed', 'graded', 'unmatched', 'no_tool_calls', 'failed')),
    -- revision counts assemblies: a late span reopens a graded trace
    -- (TOOLSCORE_OTLP_LATE_SPANS=regrade) as revision + 1.
    revision        integer NOT NULL DEFAULT 1,
    -- spans received (repeats of a span id included) and late_spans, those
    -- that arrived after the trace closed.
    spans           integer NOT NULL,
    late_spans      integer NOT NULL DEFAULT 0,
    root_ended      boolean NOT NULL,
    first_seen      timestamptz NOT NULL,
    last_seen       timestamptz NOT NULL,
    due_at          timestamptz NOT NULL,
    closed_at       timestamptz,
    -- incomplete: closed at the maximum age, not because it was complete.
    incomplete      boolean NOT NULL DEFAULT false,
    finished_at     timestamptz,
    rule_name       text,
    rule_version    integer,
    -- result_id is the latest revision's result; first_result_id revision
    -- 1's, which the result of a later revision is a regrade of.
    result_id       uuid,
    first_result_id uuid,
    regrade_id      uuid,
    reason          text,
    -- spans_purged: its span batches were deleted (at grading, or after
    -- TOOLSCORE_OTLP_KEEP_SPANS), so a late span can no longer reopen it.
    spans_purged    boolean NOT NULL DEFAULT false,
    PRIMARY KEY (project_id, trace_id)
);

-- The assembler's scan: open traces by due time. Partial, so a trace
-- leaves it when it closes.
CREATE INDEX otlp_traces_due ON otlp_traces (due_at) WHERE state = 'open';
-- The retention sweeps: finished traces by finish time, and those still
-- holding their spans (none unless spans are kept after grading).
CREATE INDEX otlp_traces_finished ON otlp_traces (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX otlp_traces_kept ON otlp_traces (finished_at) WHERE finished_at IS NOT NULL AND NOT spans_purged;

-- otlp_spans holds the spans of open traces: one row per trace per export
-- request, data being a protobuf TracesData of that export's spans of the
-- trace (with their resource and scope), so that an export of 512 spans
-- of 20 traces is 20 rows written by one INSERT. The primary key is the
-- only index; no foreign key (a check per row). Rows go when their trace
-- is graded (or after TOOLSCORE_OTLP_KEEP_SPANS).
CREATE TABLE otlp_spans (
    project_id  bigint NOT NULL,
    trace_id    bytea NOT NULL,
    seq         bigint GENERATED ALWAYS AS IDENTITY,
    spans       integer NOT NULL,
    data        bytea NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, trace_id, seq)
);
-- Span data is protobuf, which compresses poorly: keep it out of line
-- without trying to compress it.
ALTER TABLE otlp_spans ALTER COLUMN data SET STORAGE EXTERNAL;

-- grading_rules is the registry of grading rules: immutable versions of
-- named rules, like contracts. body is the canonical JSON of the rule
-- (internal/otlp.ParseRule reads it); the latest version of each name is
-- in force.
CREATE TABLE grading_rules (
    project_id bigint NOT NULL REFERENCES projects (id),
    name       text NOT NULL,
    version    integer NOT NULL CHECK (version >= 1),
    sha256     text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    body       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, name, version),
    UNIQUE (project_id, name, sha256)
);

-- +goose Down
DROP TABLE grading_rules;
DROP TABLE otlp_spans;
DROP TABLE otlp_traces;
