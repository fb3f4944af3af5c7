package record

import (
	"time"

	"github.com/google/uuid"
)

// Project is one tenant: every record belongs to exactly one, and an API
// key acts only on its own.
type Project struct {
	// ID is assigned by the store; DefaultProject exists from the start.
	ID int64
	// Name matches ProjectNamePattern (internal/api) and is unique.
	Name      string
	CreatedAt time.Time
}

// APIKey is one stored API key: its hash, never the token itself.
type APIKey struct {
	// ID is a UUIDv7.
	ID        uuid.UUID
	ProjectID int64
	// ProjectName is the project's name (filled in by reads).
	ProjectName string
	// Name is a label chosen by whoever made the key ("" for none).
	Name string
	// Prefix is the token's displayed prefix (auth.DisplayPrefix), "" for
	// a bootstrap key of another form.
	Prefix string
	// Lookup is the first 8 bytes of Hash (auth.Lookup), the indexed
	// column that finds a token's rows.
	Lookup []byte
	// Hash is the token's SHA-256 (auth.Hash).
	Hash []byte
	// Scopes are the key's scope names (auth.Scope values), at least one.
	Scopes []string
	// CreatedBy is the key that made this one (uuid.Nil for a key made
	// with the CLI or at bootstrap).
	CreatedBy uuid.UUID
	CreatedAt time.Time
	// LastUsedAt is when the key last authenticated a request (updated at
	// most every few seconds per server); nil when never.
	LastUsedAt *time.Time
	// RevokedAt is when the key was revoked; nil while it is active.
	RevokedAt *time.Time
}
