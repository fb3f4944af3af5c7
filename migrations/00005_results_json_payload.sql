-- The payload columns of results become json (text, validated on input)
-- instead of jsonb: they are written once per evaluation, thousands of
-- times per second, and read back whole (GET /v1/evaluations/{id},
-- regrades), never searched inside. json skips jsonb's parse-and-convert
-- on every insert (most of Postgres's cost per stored result), keeps the
-- exact bytes the API returned, and still supports ->, ->> and casts to
-- jsonb for ad-hoc queries. labels stays jsonb: it is filtered with @>.
-- Large values are TOAST-compressed with lz4 where the server has it
-- (cheaper than the default pglz).

-- +goose Up
ALTER TABLE results
    ALTER COLUMN options        TYPE json USING options::json,
    ALTER COLUMN expected_calls TYPE json USING expected_calls::json,
    ALTER COLUMN trace_calls    TYPE json USING trace_calls::json,
    ALTER COLUMN scored_calls   TYPE json USING scored_calls::json,
    ALTER COLUMN scored_indexes TYPE json USING scored_indexes::json,
    ALTER COLUMN metrics        TYPE json USING metrics::json,
    ALTER COLUMN checks         TYPE json USING checks::json,
    ALTER COLUMN issues         TYPE json USING issues::json;

-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
        ALTER TABLE results
            ALTER COLUMN expected_calls SET COMPRESSION lz4,
            ALTER COLUMN trace_calls    SET COMPRESSION lz4,
            ALTER COLUMN scored_calls   SET COMPRESSION lz4,
            ALTER COLUMN metrics        SET COMPRESSION lz4,
            ALTER COLUMN checks         SET COMPRESSION lz4,
            ALTER COLUMN issues         SET COMPRESSION lz4;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
ALTER TABLE results
    ALTER COLUMN options        TYPE jsonb USING options::jsonb,
    ALTER COLUMN expected_calls TYPE jsonb USING expected_calls::jsonb,
    ALTER COLUMN trace_calls    TYPE jsonb USING trace_calls::jsonb,
    ALTER COLUMN scored_calls   TYPE jsonb USING scored_calls::jsonb,
    ALTER COLUMN scored_indexes TYPE jsonb USING scored_indexes::jsonb,
    ALTER COLUMN metrics        TYPE jsonb USING metrics::jsonb,
    ALTER COLUMN checks         TYPE jsonb USING checks::jsonb,
    ALTER COLUMN issues         TYPE jsonb USING issues::jsonb;
ALTER TABLE results
    ALTER COLUMN expected_calls SET COMPRESSION default,
    ALTER COLUMN trace_calls    SET COMPRESSION default,
    ALTER COLUMN scored_calls   SET COMPRESSION default,
    ALTER COLUMN metrics        SET COMPRESSION default,
    ALTER COLUMN checks         SET COMPRESSION default,
    ALTER COLUMN issues         SET COMPRESSION default;
