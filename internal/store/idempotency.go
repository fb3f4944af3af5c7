package store

import (
	"context"
	"fmt"

	"github.com/toolscore/toolscore/internal/record"
)

// GetIdempotency returns the record of an Idempotency-Key of a project.
// Records are written by InsertResults, together with their results.
//
// Errors: engine.ErrNotFound when the key was never used;
// engine.ErrUnavailable.
func (db *DB) GetIdempotency(ctx context.Context, projectID int64, key string) (record.Idempotency, error) {
	k := record.Idempotency{ProjectID: projectID, Key: key}
	var itemErrors *string
	err := db.pool.QueryRow(ctx, `SELECT request_sha256, result_ids, item_errors FROM idempotency_keys
		WHERE project_id = $1 AND key = $2`, projectID, key).Scan(&k.RequestSHA256, &k.ResultIDs, &itemErrors)
	if err != nil {
		return k, fmt.Errorf("get idempotency key: %w", translate(err))
	}
	if itemErrors != nil {
		k.ItemErrors = []byte(*itemErrors)
	}
	return k, nil
}
