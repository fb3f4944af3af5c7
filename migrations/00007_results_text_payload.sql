-- The bulky payload columns of results become text, and scored_calls is
-- no longer stored.
--
-- Measured on the medium workload (about 12 KB of JSON per result): with
-- json columns, Postgres spent more than half of its CPU per inserted
-- result validating JSON text it had just been sent (json_in); as text the
-- same INSERT cost less than half. The server writes these columns itself
-- from values it has just encoded, and reads them back whole
-- (GET /v1/evaluations/{id}, regrades), so nothing is lost but SQL-side
-- validation; ad-hoc queries cast, e.g. checks::json -> 'items'. metrics
-- stays json (the figures dashboards query most) and labels jsonb (it is
-- filtered with @>).
--
-- scored_calls was always the trace calls at scored_indexes (the engine
-- builds it so: internal/engine/checks.go, redact), about a quarter of the
-- bytes of a row; readers now rebuild it from trace_calls and
-- scored_indexes (internal/store, record.ScoredCalls), byte for byte what
-- was stored.
--
-- Servers older than this migration cannot use the new table (they write
-- and read scored_calls, and read issues as json): stop every older
-- replica before a server that applies it starts (docs/api.md, Storage).

-- +goose Up
ALTER TABLE results
    DROP COLUMN scored_calls,
    ALTER COLUMN options        TYPE text,
    ALTER COLUMN expected_calls TYPE text,
    ALTER COLUMN trace_calls    TYPE text,
    ALTER COLUMN scored_indexes TYPE text,
    ALTER COLUMN checks         TYPE text,
    ALTER COLUMN issues         TYPE text;

-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
        ALTER TABLE results
            ALTER COLUMN expected_calls SET COMPRESSION lz4,
            ALTER COLUMN trace_calls    SET COMPRESSION lz4,
            ALTER COLUMN checks         SET COMPRESSION lz4,
            ALTER COLUMN issues         SET COMPRESSION lz4;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
ALTER TABLE results
    ALTER COLUMN options        TYPE json USING options::json,
    ALTER COLUMN expected_calls TYPE json USING expected_calls::json,
    ALTER COLUMN trace_calls    TYPE json USING trace_calls::json,
    ALTER COLUMN scored_indexes TYPE json USING scored_indexes::json,
    ALTER COLUMN checks         TYPE json USING checks::json,
    ALTER COLUMN issues         TYPE json USING issues::json,
    ADD COLUMN scored_calls json;

UPDATE results SET scored_calls = (
    SELECT coalesce(json_agg(trace_calls -> (i.v::int) ORDER BY i.n), '[]'::json)
    FROM json_array_elements_text(scored_indexes) WITH ORDINALITY AS i(v, n));

ALTER TABLE results ALTER COLUMN scored_calls SET NOT NULL;
