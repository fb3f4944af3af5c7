// Package store persists toolscore's records in Postgres with pgx/v5: the
// contract registry, evaluation results (written in groups by a
// group-commit writer) and idempotency keys. It implements the store
// interface that internal/api declares, in terms of internal/record types,
// and turns Postgres errors into the engine's sentinels (ErrNotFound,
// ErrConflict, ErrUnavailable); nothing above it inspects pgx errors.
//
// One file per noun: contract.go, result.go, idempotency.go, plus db.go
// (connection), migrate.go (schema), writer.go (group commit) and errors.go
// (error translation).
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// Config configures Open.
type Config struct {
	// URL is the Postgres connection string (URL or key=value form).
	// Required.
	URL string
	// MaxConns caps the pool's connections; 0 means 8.
	MaxConns int32
	// Writers is the number of concurrent group-commit transactions; 0
	// means 4. A commit waits for its WAL flush (fsync, milliseconds), so
	// several in flight keep requests from queueing behind one.
	Writers int
	// MaxGroupRows caps the results written by one group-commit
	// transaction; 0 means 1000.
	MaxGroupRows int
	// ParallelRows is the fewest results a group must hold to be written
	// while another group is being written (a smaller one waits for that
	// write to end, gathering more); 0 means 16, 1 writes every group at
	// once (up to Writers at a time). It is capped at MaxGroupRows.
	ParallelRows int
	// WriteDelay spaces the commits of groups smaller than ParallelRows
	// under load (the group waited for a write in flight, or the last
	// group held more than one result): such a group is not written
	// until WriteDelay after the last write ended, gathering what arrives
	// meanwhile. A writer idle for WriteDelay, or fed one result at a
	// time by a client waiting for each, writes at once. 0 means 1 ms; a
	// negative delay writes such a group as soon as no other is being
	// written.
	WriteDelay time.Duration
	// Logger receives write failures; nil means zap.NewNop().
	Logger *zap.Logger
	// Registerer receives the store's metrics; nil means none are
	// registered.
	Registerer prometheus.Registerer
}

// DB is the Postgres store. It is safe for concurrent use. Open it with
// Open and release it with Close.
type DB struct {
	pool *pgxpool.Pool
	log  *zap.Logger
	w    *writer
}

// Open creates a connection pool for cfg.URL and starts the group-commit
// writer. It does not connect: connections are made on first use (and
// made again after Postgres restarts), so Open succeeds while the database
// is down; call Ping or Migrate to check it. When the URL gives no
// connect_timeout, connecting times out after 5 s.
//
// Errors: an invalid URL.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	pcfg, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		// The parse error may quote the URL, password included.
		return nil, errors.New("open database: invalid DATABASE_URL")
	}
	if pcfg.ConnConfig.ConnectTimeout == 0 {
		pcfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	pcfg.MaxConns = cfg.MaxConns
	if pcfg.MaxConns <= 0 {
		pcfg.MaxConns = 8
	}
	pcfg.MinConns = 0
	pcfg.HealthCheckPeriod = 10 * time.Second
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	db := &DB{pool: pool, log: log}
	db.w = newWriter(db, cfg.Writers, cfg.MaxGroupRows, cfg.ParallelRows, cfg.WriteDelay, cfg.Registerer)
	return db, nil
}

// Close stops the writer, after it has written every result already handed
// to it, and closes the connection pool. Call it once, after the HTTP
// server has stopped.
func (db *DB) Close() {
	db.w.close()
	db.pool.Close()
}

// Ping checks that the database answers.
//
// Errors: engine.ErrUnavailable when it does not.
func (db *DB) Ping(ctx context.Context) error {
	return translate(db.pool.Ping(ctx))
}
