package auth

import (
	"fmt"

	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/record"
)

// NewKey makes a new key of a project: a fresh token (NewToken), to show
// once, and the record to store, which holds only its hash. createdBy is
// the key making it (uuid.Nil for the CLI).
//
// Errors: only if the system's random source fails.
func NewKey(projectID int64, name string, scopes []Scope, createdBy uuid.UUID) (record.APIKey, string, error) {
	token, err := NewToken()
	if err != nil {
		return record.APIKey{}, "", err
	}
	k, err := KeyFromToken(token, projectID, name, scopes, createdBy)
	return k, token, err
}

// KeyFromToken returns the record to store for a token chosen elsewhere
// (such as TOOLSCORE_BOOTSTRAP_KEY).
//
// Errors: the token cannot be a key (CheckToken); no UUID could be made.
func KeyFromToken(token string, projectID int64, name string, scopes []Scope, createdBy uuid.UUID) (record.APIKey, error) {
	if err := CheckToken(token); err != nil {
		return record.APIKey{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return record.APIKey{}, fmt.Errorf("new key id: %w", err)
	}
	h := Hash(token)
	return record.APIKey{
		ID: id, ProjectID: projectID, Name: name, Prefix: DisplayPrefix(token),
		Lookup: Lookup(h), Hash: h[:], Scopes: ScopeNames(scopes), CreatedBy: createdBy,
	}, nil
}
