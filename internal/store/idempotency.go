package store

import (
	"context"
	"crypto/sha256"
	"fmt"

	"github.com/toolscore/toolscore/internal/record"
)

// idempotencyHash is what the store keeps of an Idempotency-Key: its
// SHA-256 (column idempotency_keys.key_sha256, migration 00013), so that
// a key holding a credential is never stored in clear.
func idempotencyHash(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// GetIdempotency returns the record of an Idempotency-Key of a project.
// Records are written by InsertResults, together with their results; the
// key is looked up by its hash (idempotencyHash).
//
// Errors: engine.ErrNotFound when the key was never used;
// engine.ErrUnavailable.
func (db *DB) GetIdempotency(ctx context.Context, projectID int64, key string) (record.Idempotency, error) {
	k := record.Idempotency{ProjectID: projectID, Key: key}
	var itemErrors *string
	err := db.pool.QueryRow(ctx, `SELECT request_sha256, result_ids, item_errors FROM idempotency_keys
		WHERE project_id = $1 AND key_sha256 = $2`, projectID, idempotencyHash(key)).Scan(&k.RequestSHA256, &k.ResultIDs, &itemErrors)
	if err != nil {
		return k, fmt.Errorf("get idempotency key: %w", translate(err))
	}
	if itemErrors != nil {
		k.ItemErrors = []byte(*itemErrors)
	}
	return k, nil
}
