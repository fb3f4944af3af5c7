-- The references of an original result (its project, and its registered
-- contract version when it names one) are checked by one constraint
-- trigger that regrade results do not fire, in place of the two foreign
-- keys of migration 00014.
--
-- Those keys referenced original_project_id, a stored generated column
-- that is NULL for a regrade result, so that a foreign key skips it. But
-- Postgres still computes the column for every row, and queues and runs
-- both foreign keys' triggers for every row, only for them to find the
-- NULL: 17,000 of the 171,000 instructions Postgres spends to COPY one
-- medium regrade result into results. A trigger's WHEN condition is
-- tested when the row is written, so a regrade result queues nothing.
--
-- What is checked is what the foreign keys checked, with the same locks:
--   - an original (regrade_id NULL) naming a contract version (name and
--     version set, MATCH SIMPLE) needs that row of contracts, locked FOR
--     KEY SHARE as a foreign key locks it. Its project is then checked
--     too: contracts has a foreign key to projects, so the project cannot
--     go while the locked contract row stays. One lookup, not two: an
--     original costs 34,000 instructions less (452,000 to 418,000);
--   - any other original needs its projects row, locked alike;
--   - a contract version, or a project, cannot be deleted or have its key
--     changed while an original names it (contracts_results_refs and
--     projects_results_refs). Under READ COMMITTED, the isolation the
--     server uses, this sees a result committed while the delete waited
--     for its lock, as the foreign key does; nothing in toolscore deletes
--     either (a delete in a REPEATABLE READ transaction could miss a
--     result committed after its snapshot, which the foreign key's
--     cross-check would see).
-- Regrade results are guarded as in 00014: by WriteRegradeChunk and the
-- foreign keys of their regrade's row.
--
-- The errors are the foreign keys' (SQLSTATE 23503, constraint
-- results_project_fkey or results_contract_fkey, the same message and
-- detail). Dropping the generated column changes only the catalog.

-- +goose Up
ALTER TABLE results
    DROP CONSTRAINT results_contract_fkey,
    DROP CONSTRAINT results_project_fkey,
    DROP COLUMN original_project_id;

-- +goose StatementBegin
CREATE FUNCTION results_original_refs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.contract_name IS NULL OR NEW.contract_version IS NULL THEN
        PERFORM FROM projects WHERE id = NEW.project_id FOR KEY SHARE;
        IF NOT FOUND THEN
            RAISE foreign_key_violation USING
                MESSAGE = 'insert or update on table "results" violates foreign key constraint "results_project_fkey"',
                DETAIL = format('Key (project_id)=(%s) is not present in table "projects".', NEW.project_id),
                TABLE = 'results', CONSTRAINT = 'results_project_fkey';
        END IF;
    ELSE
        PERFORM FROM contracts
            WHERE project_id = NEW.project_id AND name = NEW.contract_name AND version = NEW.contract_version
            FOR KEY SHARE;
        IF NOT FOUND THEN
            RAISE foreign_key_violation USING
                MESSAGE = 'insert or update on table "results" violates foreign key constraint "results_contract_fkey"',
                DETAIL = format('Key (project_id, contract_name, contract_version)=(%s, %s, %s) is not present in table "contracts".',
                    NEW.project_id, NEW.contract_name, NEW.contract_version),
                TABLE = 'results', CONSTRAINT = 'results_contract_fkey';
        END IF;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE CONSTRAINT TRIGGER results_original_refs
    AFTER INSERT OR UPDATE OF project_id, contract_name, contract_version, regrade_id ON results
    FOR EACH ROW WHEN (NEW.regrade_id IS NULL)
    EXECUTE FUNCTION results_original_refs();

-- +goose StatementBegin
CREATE FUNCTION contracts_results_refs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND (NEW.project_id, NEW.name, NEW.version) IS NOT DISTINCT FROM (OLD.project_id, OLD.name, OLD.version) THEN
        RETURN NULL;
    END IF;
    PERFORM FROM results
        WHERE project_id = OLD.project_id AND contract_name = OLD.name AND contract_version = OLD.version
            AND regrade_id IS NULL
        LIMIT 1;
    IF FOUND THEN
        RAISE foreign_key_violation USING
            MESSAGE = 'update or delete on table "contracts" violates foreign key constraint "results_contract_fkey" on table "results"',
            DETAIL = format('Key (project_id, name, version)=(%s, %s, %s) is still referenced from table "results".',
                OLD.project_id, OLD.name, OLD.version),
            TABLE = 'results', CONSTRAINT = 'results_contract_fkey';
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE CONSTRAINT TRIGGER contracts_results_refs
    AFTER DELETE OR UPDATE OF project_id, name, version ON contracts
    FOR EACH ROW EXECUTE FUNCTION contracts_results_refs();

-- +goose StatementBegin
CREATE FUNCTION projects_results_refs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.id = OLD.id THEN
        RETURN NULL;
    END IF;
    PERFORM FROM results WHERE project_id = OLD.id AND regrade_id IS NULL LIMIT 1;
    IF FOUND THEN
        RAISE foreign_key_violation USING
            MESSAGE = 'update or delete on table "projects" violates foreign key constraint "results_project_fkey" on table "results"',
            DETAIL = format('Key (id)=(%s) is still referenced from table "results".', OLD.id),
            TABLE = 'results', CONSTRAINT = 'results_project_fkey';
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE CONSTRAINT TRIGGER projects_results_refs
    AFTER DELETE OR UPDATE OF id ON projects
    FOR EACH ROW EXECUTE FUNCTION projects_results_refs();

-- +goose Down
DROP TRIGGER projects_results_refs ON projects;
DROP FUNCTION projects_results_refs();
DROP TRIGGER contracts_results_refs ON contracts;
DROP FUNCTION contracts_results_refs();
DROP TRIGGER results_original_refs ON results;
DROP FUNCTION results_original_refs();

ALTER TABLE results
    ADD COLUMN original_project_id bigint
        GENERATED ALWAYS AS (CASE WHEN regrade_id IS NULL THEN project_id END) STORED,
    ADD CONSTRAINT results_project_fkey FOREIGN KEY (original_project_id) REFERENCES projects (id),
    ADD CONSTRAINT results_contract_fkey FOREIGN KEY (original_project_id, contract_name, contract_version)
        REFERENCES contracts (project_id, name, version);
