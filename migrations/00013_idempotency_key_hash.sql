-- Idempotency-Key values are kept as their SHA-256 only (issue 14): a
-- client may put anything in the header, a credential included, and the
-- database must not hold it in clear. A request's key is hashed by the
-- store (store.idempotencyHash) before it is looked up or written; the
-- rows already stored are hashed in place, so a retry with an old key
-- still finds its answer.
--
-- Down keeps the hashes (as hex text in key): the keys themselves cannot
-- be recovered, so a retry after a downgrade is a new request.

-- +goose Up
ALTER TABLE idempotency_keys ADD COLUMN key_sha256 bytea;
UPDATE idempotency_keys SET key_sha256 = sha256(convert_to(key, 'UTF8'));
ALTER TABLE idempotency_keys
    DROP CONSTRAINT idempotency_keys_pkey,
    DROP COLUMN key,
    ALTER COLUMN key_sha256 SET NOT NULL,
    ADD CONSTRAINT idempotency_keys_key_sha256_check CHECK (length(key_sha256) = 32),
    ADD PRIMARY KEY (project_id, key_sha256);

-- +goose Down
ALTER TABLE idempotency_keys ADD COLUMN key text;
UPDATE idempotency_keys SET key = encode(key_sha256, 'hex');
ALTER TABLE idempotency_keys
    DROP CONSTRAINT idempotency_keys_pkey,
    DROP COLUMN key_sha256,
    ALTER COLUMN key SET NOT NULL,
    ADD PRIMARY KEY (project_id, key);
