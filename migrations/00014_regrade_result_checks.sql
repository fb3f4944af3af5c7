-- What a regrade result costs Postgres to write, without losing what the
-- checks guarded.
--
-- 1. The two foreign keys of results (project_id -> projects, and
-- (project_id, contract_name, contract_version) -> contracts) check
-- originals only. They guard that a result names a project and a
-- registered contract version that exist, and that neither is deleted
-- while results name it. Postgres checks a foreign key one row at a time
-- (a lookup and a key-share lock per row and key): 9-13 µs of its CPU per
-- regrade result, about a sixth of writing one, for rows whose project and
-- contract are, by construction, their regrade's:
--   - store.DB.WriteRegradeChunk writes a chunk's results only with its
--     regrade's project and target contract version (every result of the
--     chunk must name them, or nothing is written), and the same
--     transaction updates the regrades row and checks that it names that
--     project and target;
--   - that regrades row has foreign keys of its own to the same project
--     and contract version (migration 00004), so both existed when the
--     results were written, and neither can be deleted while the regrade
--     exists; the regrade cannot be deleted while its regrade_chunks rows
--     exist (a foreign key), and every chunk that wrote results wrote its
--     regrade_chunks row in the same transaction.
-- The keys now reference original_project_id, project_id for an original
-- and NULL for a regrade result (a foreign key skips a row with a NULL in
-- its columns), so originals are checked exactly as before. Adding the
-- stored generated column rewrites results once (as 00005 and 00007 did).
--
-- 2. regrade_changes' old_issue and new_issue become text: nothing
-- queries inside them (the API returns them as stored), and jsonb's
-- parse of the two issues was most of the cost of a change row (10-20 µs
-- of Postgres CPU each). They hold the issue exactly as the results'
-- issues text holds it (rows written before keep jsonb's text form).

-- +goose Up
ALTER TABLE results
    ADD COLUMN original_project_id bigint
        GENERATED ALWAYS AS (CASE WHEN regrade_id IS NULL THEN project_id END) STORED,
    DROP CONSTRAINT results_project_id_fkey,
    DROP CONSTRAINT results_project_id_contract_name_contract_version_fkey,
    ADD CONSTRAINT results_project_fkey FOREIGN KEY (original_project_id) REFERENCES projects (id),
    ADD CONSTRAINT results_contract_fkey FOREIGN KEY (original_project_id, contract_name, contract_version)
        REFERENCES contracts (project_id, name, version);

ALTER TABLE regrade_changes
    ALTER COLUMN old_issue TYPE text,
    ALTER COLUMN new_issue TYPE text;

-- +goose Down
ALTER TABLE regrade_changes
    ALTER COLUMN old_issue TYPE jsonb USING old_issue::jsonb,
    ALTER COLUMN new_issue TYPE jsonb USING new_issue::jsonb;

ALTER TABLE results
    DROP CONSTRAINT results_contract_fkey,
    DROP CONSTRAINT results_project_fkey,
    DROP COLUMN original_project_id,
    ADD CONSTRAINT results_project_id_fkey FOREIGN KEY (project_id) REFERENCES projects (id),
    ADD CONSTRAINT results_project_id_contract_name_contract_version_fkey
        FOREIGN KEY (project_id, contract_name, contract_version) REFERENCES contracts (project_id, name, version);
