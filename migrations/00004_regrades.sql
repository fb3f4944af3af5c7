-- Regrades (issue 6): re-evaluating stored results against another
-- contract version. A regrade never changes a stored result: it writes new
-- results linked to their original by regrade_of and to the regrade by
-- regrade_id. Its work runs as river jobs (migration 00002), one per chunk
-- of about 1,000 originals; see internal/regrade.

-- +goose Up

-- regrade_of is the original result a regrade result re-evaluates (always
-- an original, never another regrade result); regrade_id the regrade that
-- wrote it. Both are NULL for results of POST /v1/evaluations.
ALTER TABLE results
    ADD COLUMN regrade_of uuid,
    ADD COLUMN regrade_id uuid,
    ADD CONSTRAINT results_regrade_link CHECK ((regrade_of IS NULL) = (regrade_id IS NULL));

-- At most one result per (regrade, original): a chunk that runs twice
-- (a retry after a crash, or a job rescued while a lost worker still ran
-- it) inserts with ON CONFLICT DO NOTHING and counts only what it inserted.
-- When results is partitioned by created_at (see 00001), a unique index
-- must include created_at: move this key to a small unpartitioned table
-- (regrade_id, regrade_of) written in the same transaction.
CREATE UNIQUE INDEX results_regrade ON results (regrade_id, regrade_of) WHERE regrade_id IS NOT NULL;
-- The regrade results of one original, newest first ("latest verdict per
-- original", version comparison).
CREATE INDEX results_regrade_of ON results (regrade_of, created_at DESC) WHERE regrade_of IS NOT NULL;

-- regrades is one regrade: what it selects, its target contract version
-- and its progress. Counters only grow, each by what a chunk's
-- transaction actually inserted, in that transaction.
CREATE TABLE regrades (
    id               uuid PRIMARY KEY,
    project_id       bigint NOT NULL REFERENCES projects (id),
    -- pending: waiting for its plan job; running: chunks queued;
    -- completed, cancelled, failed: final.
    state            text NOT NULL CHECK (state IN ('pending', 'running', 'completed', 'cancelled', 'failed')),
    -- the target contract version.
    contract_name    text NOT NULL,
    contract_version integer NOT NULL,
    contract_sha256  text NOT NULL,
    -- selection is the record.RegradeSelection as JSON; it only selects
    -- originals (regrade_id IS NULL) created before snapshot_at.
    selection        jsonb NOT NULL,
    snapshot_at      timestamptz NOT NULL,
    chunk_size       integer NOT NULL CHECK (chunk_size > 0),
    -- total is the number of selected originals counted by the plan, made
    -- exact (done + failed) on completion.
    total            bigint NOT NULL DEFAULT 0,
    chunks           integer NOT NULL DEFAULT 0,
    chunks_done      integer NOT NULL DEFAULT 0,
    done             bigint NOT NULL DEFAULT 0,
    failed           bigint NOT NULL DEFAULT 0,
    pass_to_fail     bigint NOT NULL DEFAULT 0,
    fail_to_pass     bigint NOT NULL DEFAULT 0,
    changed          bigint NOT NULL DEFAULT 0,
    -- score_delta_sum is the sum of (new score - old score) over done.
    score_delta_sum  double precision NOT NULL DEFAULT 0,
    error            text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    finished_at      timestamptz,
    FOREIGN KEY (project_id, contract_name, contract_version)
        REFERENCES contracts (project_id, name, version)
);

CREATE INDEX regrades_project_created ON regrades (project_id, created_at DESC, id DESC);

-- regrade_chunks records each chunk whose transaction committed, so a
-- chunk is counted in chunks_done once however often it runs.
CREATE TABLE regrade_chunks (
    regrade_id  uuid NOT NULL REFERENCES regrades (id),
    chunk       integer NOT NULL,
    done        integer NOT NULL,
    failed      integer NOT NULL,
    finished_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (regrade_id, chunk)
);

-- regrade_changes lists the originals whose verdict or grade changed, for
-- GET /v1/regrades/{id}/changes; written with the result, in the chunk's
-- transaction, only for results that transaction inserted.
CREATE TABLE regrade_changes (
    regrade_id   uuid NOT NULL REFERENCES regrades (id),
    original_id  uuid NOT NULL,
    result_id    uuid NOT NULL,
    old_version  integer,
    old_score    double precision NOT NULL,
    new_score    double precision NOT NULL,
    old_grade    text NOT NULL,
    new_grade    text NOT NULL,
    old_passed   boolean NOT NULL,
    new_passed   boolean NOT NULL,
    -- the first entry of each result's issues (NULL when none).
    old_issue    jsonb,
    new_issue    jsonb,
    PRIMARY KEY (regrade_id, original_id)
);

-- regrade_failures lists the originals that could not be regraded (a
-- stored row that no longer parses), with the reason.
CREATE TABLE regrade_failures (
    regrade_id  uuid NOT NULL REFERENCES regrades (id),
    original_id uuid NOT NULL,
    reason      text NOT NULL,
    PRIMARY KEY (regrade_id, original_id)
);

-- +goose Down
DROP TABLE regrade_failures;
DROP TABLE regrade_changes;
DROP TABLE regrade_chunks;
DROP TABLE regrades;
DROP INDEX results_regrade_of;
DROP INDEX results_regrade;
ALTER TABLE results
    DROP CONSTRAINT results_regrade_link,
    DROP COLUMN regrade_id,
    DROP COLUMN regrade_of;
