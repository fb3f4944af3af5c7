package engine

import "errors"

// Sentinel errors of the persistence layer. They live here, in the domain
// package, so that internal/store can return them and internal/api can map
// them to HTTP without either importing the other (STYLE.md section 3).
var (
	// ErrNotFound means the requested record (contract version, result,
	// idempotency key) does not exist in the caller's project.
	ErrNotFound = errors.New("not found")
	// ErrConflict means the write clashes with an existing record, such as
	// an Idempotency-Key already used by another request.
	ErrConflict = errors.New("conflict")
	// ErrUnavailable means the database could not be reached or refused the
	// connection; the operation may succeed when retried later.
	ErrUnavailable = errors.New("database unavailable")
)
