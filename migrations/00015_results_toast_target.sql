-- A result row keeps its compressed payload in the row up to about 4 KB
-- instead of 2 KB (toast_tuple_target, Postgres' default 2,032 bytes).
--
-- A medium result holds about 9 KB of JSON text (trace_calls, expected
-- calls, metrics, checks, issues), 3.4 KB once compressed; a regrade
-- result, without its trace, about 6 KB. Over the default target, Postgres
-- compressed every column and then moved the largest out of line: a row
-- and an index entry in the TOAST table for each result written, and a
-- second lookup for each original a regrade reads (7% and 5% of Postgres'
-- CPU per regrade result in a profile of TestRegradeThroughput). With
-- 4,080 bytes the compressed columns stay in the row (two rows to a page),
-- and compression stops once a row fits, so a regrade result's checks and
-- issues are not compressed at all. Larger results still go out of line.
-- The setting applies to rows written from now on; nothing is rewritten.

-- +goose Up
ALTER TABLE results SET (toast_tuple_target = 4080);

-- +goose Down
ALTER TABLE results RESET (toast_tuple_target);
