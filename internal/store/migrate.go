package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/migrations"
)

// ErrSchemaTooNew means the database was migrated by a newer toolscore
// than this binary: it refuses to run on a schema it does not know.
var ErrSchemaTooNew = errors.New("database schema is newer than this binary")

// MigrationsFS holds the migrations this binary applies (migrations.FS).
var MigrationsFS fs.FS = migrations.FS

// LatestVersion returns the highest migration version this binary knows.
func LatestVersion() int64 {
	entries, _ := fs.Glob(MigrationsFS, "*.sql")
	var v int64
	for _, e := range entries {
		var n int64
		if _, err := fmt.Sscanf(e, "%d_", &n); err == nil && n > v {
			v = n
		}
	}
	return v
}

// Migrate applies the embedded migrations with pressly/goose, holding a
// Postgres advisory lock so that replicas starting together migrate once.
// It returns the schema version reached.
//
// Errors: ErrSchemaTooNew (wrapped, with both versions) when the database
// is at a version this binary does not know; engine.ErrUnavailable when
// the database cannot be reached.
func (db *DB) Migrate(ctx context.Context) (int64, error) {
	sqlDB := stdlib.OpenDBFromPool(db.pool)
	defer sqlDB.Close()
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, MigrationsFS, goose.WithSessionLocker(locker))
	if err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	current, err := p.GetDBVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("migrate: read schema version: %w", translate(err))
	}
	known := LatestVersion()
	if current > known {
		return current, fmt.Errorf("%w: database at version %d, this binary knows up to %d", ErrSchemaTooNew, current, known)
	}
	if _, err := p.Up(ctx); err != nil {
		return current, fmt.Errorf("migrate: %w", translate(err))
	}
	return known, nil
}

// SchemaVersion returns the database's current migration version (0 when
// none was applied).
//
// Errors: engine.ErrUnavailable when the database cannot be reached.
func (db *DB) SchemaVersion(ctx context.Context) (int64, error) {
	var v int64
	err := db.pool.QueryRow(ctx, `SELECT coalesce(max(version_id), 0) FROM goose_db_version WHERE is_applied`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("schema version: %w", translate(err))
	}
	return v, nil
}

// Ready checks that the database answers and that its schema is the
// version this binary knows.
//
// Errors: engine.ErrUnavailable when the database cannot be reached or
// cannot be read (dropped, recreated empty: no goose_db_version table);
// ErrSchemaTooNew, or an error naming both versions, when the schema is
// not current.
func (db *DB) Ready(ctx context.Context) error {
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		if !errors.Is(err, engine.ErrUnavailable) && ctx.Err() == nil {
			// Any other database error also means not ready; the wrap keeps
			// the driver's message (hosts, users, names) out of answers.
			err = fmt.Errorf("%w: %w", engine.ErrUnavailable, err)
		}
		return err
	}
	switch known := LatestVersion(); {
	case v > known:
		return fmt.Errorf("%w: database at version %d, this binary knows up to %d", ErrSchemaTooNew, v, known)
	case v < known:
		return fmt.Errorf("database schema at version %d, want %d", v, known)
	}
	return nil
}
