// Package migrations holds the SQL migrations of the toolscore database,
// embedded so the server applies them at start (internal/store.Migrate,
// with pressly/goose v3). A migration is one file NNNNN_name.sql with
// "-- +goose Up" and "-- +goose Down" sections; versions are the numeric
// prefixes and never change once released.
package migrations

import "embed"

// FS holds every *.sql migration file at its root.
//
//go:embed *.sql
var FS embed.FS
