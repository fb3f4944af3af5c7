-- +goose NO TRANSACTION

-- The time-ordered indexes of results keep created_at (and id) in
-- ascending order instead of descending, so that a new result, created
-- now, goes at the end of its key's range rather than at its start.
--
-- Every query that reads them orders by created_at DESC, id DESC (the
-- listings, the latest verdicts, their keyset cursors) or by created_at,
-- id (a regrade's plan and chunks), never by a mix: a backward scan of
-- an ascending index returns the first order exactly as a forward scan of
-- a descending one did, and a forward scan the second (it was a backward
-- scan). Nothing else changes: the same columns, predicates and names.
--
-- What the order changes is the cost of an insert. Results arrive in
-- created_at order, so with descending keys each insert landed at the
-- start of its key's range; ascending, it lands at the end, which for
-- the newest contract version, agent or project is the index's rightmost
-- leaf page, where a B-tree skips the descent from the root (its
-- rightmost-leaf fast path). Measured by callgrind on a single-user
-- backend inserting medium regrade results (INSERT ... SELECT; 1,500
-- rows less 500, each run on a copy of the same data directory, the five
-- indexes built afresh in both orders): 153.0k instructions per row with
-- descending keys, 131.1k ascending. The index sizes after a regrade of
-- 100,000 results are the same (within 1.3%).

-- Each index is built under a new name with CREATE INDEX CONCURRENTLY
-- (writes go on; hence no transaction), then the old one is dropped
-- concurrently and the new one takes its name. Each step can run again
-- after a failure: a leftover new index (an invalid one left by a failed
-- build, or a valid one whose rename did not run) is dropped and built
-- again, and an old index already dropped is skipped.

-- +goose Up
DROP INDEX CONCURRENTLY IF EXISTS results_project_created_asc;
CREATE INDEX CONCURRENTLY results_project_created_asc ON results (project_id, created_at, id);
DROP INDEX CONCURRENTLY IF EXISTS results_project_created;
ALTER INDEX results_project_created_asc RENAME TO results_project_created;

DROP INDEX CONCURRENTLY IF EXISTS results_contract_asc;
CREATE INDEX CONCURRENTLY results_contract_asc ON results (project_id, contract_name, contract_version, created_at, id);
DROP INDEX CONCURRENTLY IF EXISTS results_contract;
ALTER INDEX results_contract_asc RENAME TO results_contract;

DROP INDEX CONCURRENTLY IF EXISTS results_task_asc;
CREATE INDEX CONCURRENTLY results_task_asc ON results (project_id, task_id, created_at) WHERE task_id IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS results_task;
ALTER INDEX results_task_asc RENAME TO results_task;

DROP INDEX CONCURRENTLY IF EXISTS results_run_asc;
CREATE INDEX CONCURRENTLY results_run_asc ON results (project_id, run_id, created_at) WHERE run_id IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS results_run;
ALTER INDEX results_run_asc RENAME TO results_run;

DROP INDEX CONCURRENTLY IF EXISTS results_agent_asc;
CREATE INDEX CONCURRENTLY results_agent_asc ON results (project_id, agent, created_at) WHERE agent IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS results_agent;
ALTER INDEX results_agent_asc RENAME TO results_agent;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS results_project_created_desc;
CREATE INDEX CONCURRENTLY results_project_created_desc ON results (project_id, created_at DESC, id DESC);
DROP INDEX CONCURRENTLY IF EXISTS results_project_created;
ALTER INDEX results_project_created_desc RENAME TO results_project_created;

DROP INDEX CONCURRENTLY IF EXISTS results_contract_desc;
CREATE INDEX CONCURRENTLY results_contract_desc ON results (project_id, contract_name, contract_version, created_at DESC, id DESC);
DROP INDEX CONCURRENTLY IF EXISTS results_contract;
ALTER INDEX results_contract_desc RENAME TO results_contract;

DROP INDEX CONCURRENTLY IF EXISTS results_task_desc;
CREATE INDEX CONCURRENTLY results_task_desc ON results (project_id, task_id, created_at DESC) WHERE task_id IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS results_task;
ALTER INDEX results_task_desc RENAME TO results_task;

DROP INDEX CONCURRENTLY IF EXISTS results_run_desc;
CREATE INDEX CONCURRENTLY results_run_desc ON results (project_id, run_id, created_at DESC) WHERE run_id IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS results_run;
ALTER INDEX results_run_desc RENAME TO results_run;

DROP INDEX CONCURRENTLY IF EXISTS results_agent_desc;
CREATE INDEX CONCURRENTLY results_agent_desc ON results (project_id, agent, created_at DESC) WHERE agent IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS results_agent;
ALTER INDEX results_agent_desc RENAME TO results_agent;
