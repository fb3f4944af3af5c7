-- results.format_warning holds the trace format's warning of an
-- evaluation (format.Parsed.Warning: the trace read with no calls though
-- the document holds what looks like tool calls or results, naming the
-- first places), as the API answered it in format_warning; NULL when
-- there was none, as for every result written before this migration and
-- every regrade result (a regrade reads the stored calls, not the
-- document: its original holds the warning). Adding a nullable column
-- without a default changes only the catalog: no table rewrite.

-- +goose Up
ALTER TABLE results ADD COLUMN format_warning text;

-- +goose Down
ALTER TABLE results DROP COLUMN format_warning;
