// Package record defines the stored forms of toolscore's data, shared by
// internal/api (which declares the store interface it needs in terms of
// these types) and internal/store (which implements it on Postgres). It
// holds plain data only: no I/O and no behaviour beyond validation
// helpers. One file per noun: contract.go, result.go, idempotency.go.
//
// Every record is scoped by a ProjectID. Until authentication exists every
// request belongs to DefaultProject.
package record

// DefaultProject is the id of the one project that exists until
// authentication assigns callers to projects (migration 00001 creates it).
const DefaultProject int64 = 1
