// Package record defines the stored forms of toolscore's data, shared by
// internal/api (which declares the store interface it needs in terms of
// these types) and internal/store (which implements it on Postgres). It
// holds plain data only: no I/O and no behaviour beyond validation
// helpers. One file per noun: contract.go, result.go, idempotency.go.
//
// Every record is scoped by a ProjectID: the project of the API key that
// made the request (internal/auth).
package record

import "errors"

// DefaultProject is the id of project "default", which exists from the
// start (migration 00001 creates it); bootstrap keys and requests with
// authentication off act on it.
const DefaultProject int64 = 1

// ErrInvalidText is wrapped by the store's errors when Postgres refuses a
// text value: a NUL character (\u0000) or a byte sequence that is not
// UTF-8 (SQLSTATE 22021 or 22P05). It is the caller's mistake, never the
// server's; the API checks its text fields before storing them, so this is
// a backstop.
var ErrInvalidText = errors.New("text holds a NUL character (\\u0000) or invalid UTF-8")
