-- One unique index, results_regrade (regrade_of, regrade_id), serves a
-- regrade result's two uses of its link, in place of migration 00004's
-- two indexes:
--   - at most one result per (regrade, original): a chunk that runs again
--     inserts with ON CONFLICT (regrade_of, regrade_id) WHERE regrade_of
--     IS NOT NULL DO NOTHING (store.DB.WriteRegradeChunk), which this key
--     answers as the old (regrade_id, regrade_of) key did;
--   - the regrade results of one original (ListRegradeResults, the latest
--     verdict per original): an index scan on regrade_of, then a sort of
--     that original's regrade results (one per regrade that selected it)
--     by created_at, instead of reading them in that order from
--     results_regrade_of.
-- Postgres inserted each regrade result into both: one insert fewer is
-- 8,000 of the 154,500 instructions of writing a medium regrade result
-- (COPY, callgrind). The predicate is regrade_of IS NOT NULL, which a
-- lookup by regrade_of implies (the old key's regrade_id IS NOT NULL
-- would not let those lookups use it); results_regrade_link makes it the
-- same rows. Originals are in neither.

-- +goose Up
DROP INDEX results_regrade;
DROP INDEX results_regrade_of;
CREATE UNIQUE INDEX results_regrade ON results (regrade_of, regrade_id) WHERE regrade_of IS NOT NULL;

-- +goose Down
DROP INDEX results_regrade;
CREATE UNIQUE INDEX results_regrade ON results (regrade_id, regrade_of) WHERE regrade_id IS NOT NULL;
CREATE INDEX results_regrade_of ON results (regrade_of, created_at DESC) WHERE regrade_of IS NOT NULL;
