-- The console's overview filtered by one label (internal/ui, issue 16):
-- result_rollup_labels and result_rollup_label_issues are result_rollup
-- and result_rollup_issues (migration 00009) split further by each label
-- key and value a result carries, filled by the same store.DB.Rollup.
-- A label key with more than 100 distinct values in a bucket (an id put
-- in a label) is not split: the bucket and key go into
-- result_rollup_label_overflow instead, and an overview filtered by that
-- key reads the results themselves.

-- +goose Up
CREATE TABLE result_rollup_labels (
    project_id       bigint NOT NULL REFERENCES projects (id),
    span             text NOT NULL CHECK (span IN ('hour', 'day')),
    bucket           timestamptz NOT NULL,
    label_key        text NOT NULL,
    label_value      text NOT NULL,
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
    PRIMARY KEY (project_id, label_key, label_value, bucket, span, contract_name, contract_version, agent, regrade)
);

CREATE TABLE result_rollup_label_issues (
    project_id       bigint NOT NULL REFERENCES projects (id),
    span             text NOT NULL CHECK (span IN ('hour', 'day')),
    bucket           timestamptz NOT NULL,
    label_key        text NOT NULL,
    label_value      text NOT NULL,
    contract_name    text NOT NULL,
    contract_version integer NOT NULL,
    agent            text NOT NULL,
    regrade          boolean NOT NULL,
    kind             text NOT NULL,
    severity         text NOT NULL,
    tool             text NOT NULL,
    n                bigint NOT NULL,
    problem          text NOT NULL,
    PRIMARY KEY (project_id, label_key, label_value, bucket, span, contract_name, contract_version, agent, regrade, kind, severity, tool)
);

CREATE TABLE result_rollup_label_overflow (
    project_id bigint NOT NULL REFERENCES projects (id),
    span       text NOT NULL CHECK (span IN ('hour', 'day')),
    bucket     timestamptz NOT NULL,
    label_key  text NOT NULL,
    PRIMARY KEY (project_id, label_key, bucket, span)
);

-- +goose Down
DROP TABLE result_rollup_label_overflow;
DROP TABLE result_rollup_label_issues;
DROP TABLE result_rollup_labels;
