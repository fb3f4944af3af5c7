package record

import (
	"encoding/json"

	"github.com/google/uuid"
)

// Idempotency remembers one use of an Idempotency-Key: the hash of the
// request that used it and what it produced, so that a retry with the same
// key and body gets the stored answer and one with another body a 409.
type Idempotency struct {
	// ProjectID scopes the key.
	ProjectID int64
	// Key is the Idempotency-Key header value.
	Key string
	// RequestSHA256 is the hex sha256 of the request (method, path and
	// body).
	RequestSHA256 string
	// ResultIDs are the stored results, in request order; uuid.Nil for a
	// batch item that failed.
	ResultIDs []uuid.UUID
	// ItemErrors is, for a batch, a JSON array with the problem of each
	// failed item (null for stored items); nil for a single evaluation.
	ItemErrors json.RawMessage
}
