-- A regrade result whose trace calls are byte for byte its original's
-- stores none of its own: trace_calls is NULL and readers take the
-- original's (regrade_of), so GET /v1/evaluations/{id} and every other
-- read returns what it returned when the row held a copy.
--
-- A regrade grades the stored trace calls of its original again; unless
-- the credentials check finds a secret the original's redaction missed
-- (then the engine redacts the calls and the regrade result keeps its own
-- copy), its trace_calls are the original's bytes. For the medium
-- workload that copy is 2,744 bytes of JSON, 698 once compressed: a fifth
-- of the stored row (3,373 bytes), compressed and written again for every
-- regrade.
--
-- The original must outlive its regrade results. Nothing deletes results
-- today; a retention job (or dropping a time partition, see 00001) must
-- first copy the trace into the regrade results that reference it:
--   UPDATE results r SET trace_calls = o.trace_calls FROM results o
--   WHERE r.trace_calls IS NULL AND o.id = r.regrade_of AND <o is going>;
-- A reader that finds neither copy reports the row as unreadable rather
-- than answering without its trace.

-- +goose Up
ALTER TABLE results
    ALTER COLUMN trace_calls DROP NOT NULL,
    ADD CONSTRAINT results_trace_calls CHECK (trace_calls IS NOT NULL OR regrade_of IS NOT NULL);

-- +goose Down
UPDATE results r SET trace_calls = o.trace_calls
FROM results o
WHERE r.trace_calls IS NULL AND o.id = r.regrade_of AND o.project_id = r.project_id;

ALTER TABLE results
    DROP CONSTRAINT results_trace_calls,
    ALTER COLUMN trace_calls SET NOT NULL;
