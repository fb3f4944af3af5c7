package record

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// ContractKind tells whether a registry body is a Contract v2 or a gold
// list read as a contract (SPEC section 1).
type ContractKind string

// The two kinds of contract bodies.
const (
	KindContract ContractKind = "contract"
	KindGold     ContractKind = "gold"
)

// ContractVersion is one immutable version of a named contract in the
// registry. It is identified by (ProjectID, Name, Version) and, within a
// name, by SHA256.
type ContractVersion struct {
	// ProjectID scopes the contract.
	ProjectID int64
	// Name matches NamePattern.
	Name string
	// Version counts from 1 per name, in creation order.
	Version int
	// SHA256 is the lowercase hex sha256 of Body.
	SHA256 string
	// Kind is contract or gold.
	Kind ContractKind
	// Description is the contract's description ("" for gold lists).
	Description string
	// Combinations is the number of alternatives combinations (>= 1).
	Combinations int
	// Body is the canonical JSON text of the contract (internal/store
	// canonical form); nil in listings.
	Body json.RawMessage
	// CreatedAt is when the version was created.
	CreatedAt time.Time
	// PublishedBy is the API key that published the version; uuid.Nil when
	// none did (authentication off, or a version older than keys).
	PublishedBy uuid.UUID
}

// ContractSummary describes one contract name in the registry listing.
type ContractSummary struct {
	// Name is the contract's name.
	Name string
	// LatestVersion is the highest version number.
	LatestVersion int
	// Versions is the number of versions (equal to LatestVersion, since
	// versions are never deleted).
	Versions int
	// Kind and Description are those of the latest version.
	Kind        ContractKind
	Description string
	// UpdatedAt is when the latest version was created.
	UpdatedAt time.Time
}
