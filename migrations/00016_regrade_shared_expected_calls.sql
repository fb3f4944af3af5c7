-- A regrade keeps one copy of its results' expected calls per chosen
-- combination instead of one per result.
--
-- The expected calls of a result depend only on its contract and the
-- combination of the contract's alternatives it was scored against
-- (resultjson.ExpectedCache): every result of one regrade (one target
-- version) with the same combination has the same bytes, unless its
-- credentials check found a secret (then the engine redacts them and the
-- result keeps its own copy). For the medium workload they are 2,573
-- bytes of JSON, the largest column of a regrade result: a regrade result
-- without them stays under toast_tuple_target (migration 00015) and is
-- stored uncompressed, and writing one costs Postgres about a fifth less
-- CPU (BenchmarkWriteRegradeChunk: 36-38.5 to 28.5 µs per result, with
-- half of them changed 40-41 to 32.5-33.5 µs).
--
-- regrade_expected_calls holds the copy, keyed by the regrade and the
-- combination ("0,1," for options 0 and 1 of two alternatives groups, ""
-- for none), written and committed before the first result that names
-- it (store.DB.WriteRegradeChunk), never changed or deleted while its
-- regrade exists. Such a result has expected_calls NULL and the key in
-- expected_combination; readers take the copy (store's resultFrom), so
-- every read returns what it returned when the row held one. Originals
-- and results with their own copy have expected_combination NULL.
--
-- A retention job deleting a regrade must first copy the expected calls
-- back into its results (the statement of the Down section).

-- +goose Up
CREATE TABLE regrade_expected_calls (
    regrade_id     uuid NOT NULL REFERENCES regrades (id),
    combination    text NOT NULL,
    expected_calls text NOT NULL,
    PRIMARY KEY (regrade_id, combination)
);

ALTER TABLE results
    ADD COLUMN expected_combination text,
    ALTER COLUMN expected_calls DROP NOT NULL,
    ADD CONSTRAINT results_expected_calls
        CHECK (expected_calls IS NOT NULL OR (expected_combination IS NOT NULL AND regrade_id IS NOT NULL));

-- +goose Down
UPDATE results r SET expected_calls = e.expected_calls
FROM regrade_expected_calls e
WHERE r.expected_calls IS NULL AND e.regrade_id = r.regrade_id AND e.combination = r.expected_combination;

ALTER TABLE results
    DROP CONSTRAINT results_expected_calls,
    DROP COLUMN expected_combination,
    ALTER COLUMN expected_calls SET NOT NULL;

DROP TABLE regrade_expected_calls;
