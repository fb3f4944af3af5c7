package api

import (
	"context"

	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/record"
)

// Store is what the API needs from persistence; cmd/server passes in
// *store.DB. Methods return the engine's sentinels: ErrNotFound,
// ErrConflict, ErrUnavailable. Implementations must be safe for concurrent
// use.
type Store interface {
	ContractStore
	ResultStore
	// Ready checks that the database answers and its schema is current.
	Ready(ctx context.Context) error
}

// ContractStore is the contract registry (see store.DB's methods of the
// same names for the exact contracts).
type ContractStore interface {
	CreateContractVersion(ctx context.Context, cv record.ContractVersion) (record.ContractVersion, bool, error)
	GetContractVersion(ctx context.Context, projectID int64, name string, version int) (record.ContractVersion, error)
	ListContractVersions(ctx context.Context, projectID int64, name string, after, limit int) ([]record.ContractVersion, error)
	ListContracts(ctx context.Context, projectID int64, after string, limit int) ([]record.ContractSummary, error)
}

// ResultStore holds evaluation results and idempotency keys.
type ResultStore interface {
	// InsertResults writes a batch atomically and returns after commit.
	InsertResults(ctx context.Context, batch record.ResultBatch) error
	GetResult(ctx context.Context, projectID int64, id uuid.UUID) (record.Result, error)
	GetResults(ctx context.Context, projectID int64, ids []uuid.UUID) ([]record.Result, error)
	ListResults(ctx context.Context, projectID int64, f record.ResultFilter, after *record.Cursor, limit int) ([]record.ResultSummary, error)
	Stats(ctx context.Context, projectID int64, f record.ResultFilter, g record.StatsGroupBy) ([]record.StatsGroup, error)
	GetIdempotency(ctx context.Context, projectID int64, key string) (record.Idempotency, error)
}
