-- results.metrics becomes text, like the other payload columns since
-- migration 00007.
--
-- As json, Postgres validated the metrics of every result written (about
-- 1.4 KB for the medium workload), text the server encoded itself a
-- moment before: json_recv was 6% of Postgres' CPU in a profile of
-- TestRegradeThroughput, and writing a regrade result cost Postgres about
-- 4 µs more (a chunk of 1,000 medium results: 26-31 µs per result as json,
-- 21-23 µs as text). The server reads the column back whole and nothing
-- queries inside it; ad-hoc SQL casts it, e.g.
-- metrics::json -> 'contract_metrics'. The column keeps its compression
-- setting. Changing the type rewrites the table once (json has no
-- binary-coercible cast to text), as 00005 and 00007 did.

-- +goose Up
ALTER TABLE results ALTER COLUMN metrics TYPE text;

-- +goose Down
ALTER TABLE results ALTER COLUMN metrics TYPE json USING metrics::json;
