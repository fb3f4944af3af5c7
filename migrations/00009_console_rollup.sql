-- The web console (internal/ui, issue 16): its aggregates and its
-- sign-in sessions.
--
-- The console's overview reads daily aggregates of
-- results instead of the results themselves, so that it answers in a
-- bounded time however many results are stored: result_rollup counts
-- results and result_rollup_issues their first issues, per time bucket,
-- contract version, agent and kind of result (original or regrade
-- result). store.DB.Rollup fills them from results created before
-- rollup_state.upto, a time it moves forward (only past a margin after
-- the present, so that no result is still being written into a bucket
-- already counted: results are stored with created_at = when graded).
-- Buckets are hours while their day is still open, then one row per day
-- (span 'day' replaces the day's 'hour' rows). The overview adds the
-- results created since upto, read from results.

-- +goose Up
CREATE TABLE result_rollup (
    project_id       bigint NOT NULL REFERENCES projects (id),
    -- span is hour or day; bucket the UTC start of that hour or day.
    span             text NOT NULL CHECK (span IN ('hour', 'day')),
    bucket           timestamptz NOT NULL,
    -- '' and 0 for inline contracts and gold lists; '' for no agent.
    contract_name    text NOT NULL,
    contract_version integer NOT NULL,
    agent            text NOT NULL,
    regrade          boolean NOT NULL,
    n                bigint NOT NULL,
    passed           bigint NOT NULL,
    score_sum        double precision NOT NULL,
    grade_a          bigint NOT NULL,
    grade_b          bigint NOT NULL,
    grade_c          bigint NOT NULL,
    grade_d          bigint NOT NULL,
    grade_f          bigint NOT NULL,
    PRIMARY KEY (project_id, bucket, span, contract_name, contract_version, agent, regrade)
);

-- result_rollup_issues counts, per bucket, the results whose first issue
-- (issues[0]) has this kind, severity and tool; problem is one of their
-- problem texts, as an example.
CREATE TABLE result_rollup_issues (
    project_id       bigint NOT NULL REFERENCES projects (id),
    span             text NOT NULL CHECK (span IN ('hour', 'day')),
    bucket           timestamptz NOT NULL,
    contract_name    text NOT NULL,
    contract_version integer NOT NULL,
    agent            text NOT NULL,
    regrade          boolean NOT NULL,
    kind             text NOT NULL,
    severity         text NOT NULL,
    tool             text NOT NULL,
    n                bigint NOT NULL,
    problem          text NOT NULL,
    PRIMARY KEY (project_id, bucket, span, contract_name, contract_version, agent, regrade, kind, severity, tool)
);

-- rollup_state has one row: every result created before upto is counted
-- in the rollup tables (NULL: nothing is yet).
CREATE TABLE rollup_state (
    one  boolean PRIMARY KEY DEFAULT true CHECK (one),
    upto timestamptz
);
INSERT INTO rollup_state (upto) VALUES (NULL);

-- console_sessions are the console's sign-ins (internal/ui): the cookie
-- holds a random session token, of which only the SHA-256 is stored;
-- key_hash is the API key the person signed in with (api_keys.hash), so
-- that each request checks the key again through the authenticator and a
-- revoked key ends its sessions. Expired rows are deleted at sign-in.
CREATE TABLE console_sessions (
    token_hash bytea PRIMARY KEY CHECK (length(token_hash) = 32),
    key_hash   bytea NOT NULL REFERENCES api_keys (hash),
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX console_sessions_expires ON console_sessions (expires_at);

-- +goose Down
DROP TABLE console_sessions;
DROP TABLE rollup_state;
DROP TABLE result_rollup_issues;
DROP TABLE result_rollup;
