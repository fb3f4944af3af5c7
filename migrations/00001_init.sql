-- toolscore schema, version 1: projects, the contract registry, stored
-- evaluation results and idempotency keys. Every table is scoped by
-- project_id; until authentication exists every row belongs to project 1
-- ("default").

-- +goose Up
CREATE TABLE projects (
    id         bigint PRIMARY KEY,
    name       text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
);

INSERT INTO projects (id, name) VALUES (1, 'default');

-- contracts is the registry: immutable versions of named contracts (or gold
-- lists). body is the canonical JSON text (see internal/store/canonical.go)
-- whose hex sha256 is sha256; posting an identical body again returns the
-- existing version, which the (project_id, name, sha256) key enforces.
CREATE TABLE contracts (
    project_id   bigint NOT NULL REFERENCES projects (id),
    name         text NOT NULL,
    version      integer NOT NULL CHECK (version >= 1),
    sha256       text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    kind         text NOT NULL CHECK (kind IN ('contract', 'gold')),
    description  text NOT NULL DEFAULT '',
    combinations integer NOT NULL,
    body         text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, name, version),
    UNIQUE (project_id, name, sha256)
);

-- results holds one row per stored evaluation: everything needed to show it
-- again and to regrade it (trace_calls + final_answer + options) without
-- the original request.
--
-- Ready for time partitioning: every key includes created_at, no other
-- table references results, and every query filters or orders by
-- created_at. To partition, in a later migration:
--   ALTER TABLE results RENAME TO results_legacy;
--   CREATE TABLE results (LIKE results_legacy INCLUDING ALL)
--       PARTITION BY RANGE (created_at);
--   ALTER TABLE results ATTACH PARTITION results_legacy
--       FOR VALUES FROM (MINVALUE) TO ('<first month>');
--   CREATE TABLE results_yYYYYmMM PARTITION OF results
--       FOR VALUES FROM ('YYYY-MM-01') TO ('<next month>');  -- one per month,
--       created ahead of time by a job (or pg_partman).
-- Ids are UUIDv7, whose first 48 bits are the creation time in ms, so a
-- lookup by id can also bound created_at for partition pruning.
CREATE TABLE results (
    id               uuid NOT NULL,
    project_id       bigint NOT NULL REFERENCES projects (id),
    created_at       timestamptz NOT NULL,
    -- contract identity: name and version are NULL for an inline contract
    -- or gold list; sha256 is always the canonical body's.
    contract_name    text,
    contract_version integer,
    contract_sha256  text NOT NULL,
    contract_kind    text NOT NULL CHECK (contract_kind IN ('contract', 'gold')),
    task_id          text,
    run_id           text,
    agent            text,
    labels           jsonb NOT NULL DEFAULT '{}',
    trace_format     text NOT NULL,
    score            double precision NOT NULL,
    grade            text NOT NULL CHECK (grade IN ('A', 'B', 'C', 'D', 'F')),
    passed           boolean NOT NULL,
    min_score        double precision NOT NULL,
    safety_gate      boolean NOT NULL,
    -- options are the request's evaluation options (strict, forbidden,
    -- weights, min_score, safety_gate) as given, so a regrade can apply
    -- them again.
    options          jsonb NOT NULL,
    expected_calls   jsonb NOT NULL,
    trace_calls      jsonb NOT NULL,
    scored_calls     jsonb NOT NULL,
    scored_indexes   jsonb NOT NULL,
    final_answer     text,
    metrics          jsonb NOT NULL,
    checks           jsonb NOT NULL,
    issues           jsonb NOT NULL,
    PRIMARY KEY (id, created_at),
    FOREIGN KEY (project_id, contract_name, contract_version)
        REFERENCES contracts (project_id, name, version)
);

CREATE INDEX results_project_created ON results (project_id, created_at DESC, id DESC);
CREATE INDEX results_contract ON results (project_id, contract_name, contract_version, created_at DESC, id DESC);
CREATE INDEX results_task ON results (project_id, task_id, created_at DESC) WHERE task_id IS NOT NULL;
CREATE INDEX results_run ON results (project_id, run_id, created_at DESC) WHERE run_id IS NOT NULL;
CREATE INDEX results_agent ON results (project_id, agent, created_at DESC) WHERE agent IS NOT NULL;
CREATE INDEX results_labels ON results USING gin (labels jsonb_path_ops);

-- idempotency_keys remembers, per Idempotency-Key, the sha256 of the
-- request that used it and the result ids it produced (NULL for a batch
-- item that failed), with the per-item problems of a batch. It is written in
-- the same transaction as the results.
CREATE TABLE idempotency_keys (
    project_id     bigint NOT NULL REFERENCES projects (id),
    key            text NOT NULL,
    request_sha256 text NOT NULL,
    result_ids     uuid[] NOT NULL,
    item_errors    jsonb,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, key)
);

-- +goose Down
DROP TABLE idempotency_keys;
DROP TABLE results;
DROP TABLE contracts;
DROP TABLE projects;
