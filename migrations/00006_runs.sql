-- Harness runs (issue 7): POST /v1/runs runs a suite against an agent URL
-- server-side, as river jobs (migration 00002), one job per task; see
-- internal/runs. Each graded task's result is an ordinary row of results
-- with run_id (the run's id as text) and task_id.

-- +goose Up

-- runs is one harness run: the suite as submitted, how the agent is
-- reached, and its progress. Counters only grow, each by what a task's
-- transaction actually inserted, in that transaction.
CREATE TABLE runs (
    id            uuid PRIMARY KEY,
    project_id    bigint NOT NULL REFERENCES projects (id),
    -- running: task jobs queued; completed, cancelled, failed: final.
    state         text NOT NULL CHECK (state IN ('running', 'completed', 'cancelled', 'failed')),
    suite_name    text NOT NULL,
    -- suite is the suite document (schemas/suite.schema.json) as JSON.
    suite         json NOT NULL,
    -- agent_url may carry credentials: it is never logged, and shown
    -- redacted.
    agent_url     text NOT NULL,
    agent         text,
    concurrency   integer NOT NULL CHECK (concurrency > 0),
    timeout_ms    bigint NOT NULL CHECK (timeout_ms > 0),
    retries       integer NOT NULL CHECK (retries >= 0),
    total         integer NOT NULL CHECK (total >= 0),
    done          integer NOT NULL DEFAULT 0,
    passed        integer NOT NULL DEFAULT 0,
    failed        integer NOT NULL DEFAULT 0,
    errors        integer NOT NULL DEFAULT 0,
    -- score_sum is the sum of the scores of the graded tasks (passed +
    -- failed).
    score_sum     double precision NOT NULL DEFAULT 0,
    error         text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    started_at    timestamptz,
    finished_at   timestamptz
);

CREATE INDEX runs_project_created ON runs (project_id, created_at DESC, id DESC);

-- run_tasks is one finished task of a run. Its key makes a task's outcome,
-- and so its result, stored at most once per run: a task job that runs
-- twice (a retry after a crash, or a job rescued while a lost worker
-- still ran it) inserts with ON CONFLICT DO NOTHING and writes the result
-- only when its row went in.
CREATE TABLE run_tasks (
    run_id       uuid NOT NULL REFERENCES runs (id),
    task_id      text NOT NULL,
    task_index   integer NOT NULL,
    outcome      text NOT NULL CHECK (outcome IN ('pass', 'fail', 'error')),
    -- reason says why the outcome is error.
    reason       text,
    -- result_id is the stored result (NULL for an error).
    result_id    uuid,
    score        double precision,
    grade        text,
    top_issue    text,
    attempts     integer NOT NULL,
    duration_us  bigint NOT NULL,
    trace_format text,
    finished_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, task_id),
    UNIQUE (run_id, task_index)
);

-- +goose Down
DROP TABLE run_tasks;
DROP TABLE runs;
