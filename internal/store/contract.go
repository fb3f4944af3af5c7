package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/toolscore/toolscore/internal/record"
)

// CreateContractVersion stores cv as the next version of cv.Name, or, when
// that name already has a version with cv.SHA256, returns that version
// with created false. cv.Version and cv.CreatedAt are ignored and set in
// the returned value. Concurrent calls for one name are serialised with a
// transaction-scoped advisory lock, so versions have no gaps.
//
// Errors: engine.ErrUnavailable.
func (db *DB) CreateContractVersion(ctx context.Context, cv record.ContractVersion) (_ record.ContractVersion, created bool, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("create contract %s: %w", cv.Name, translate(err))
		}
	}()
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return cv, false, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('toolscore.contracts/' || $1::bigint::text || '/' || $2::text, 0))`, cv.ProjectID, cv.Name); err != nil {
		return cv, false, err
	}
	existing, err := scanContract(tx.QueryRow(ctx, `SELECT `+contractSelect+` FROM contracts
		WHERE project_id = $1 AND name = $2 AND sha256 = $3`, cv.ProjectID, cv.Name, cv.SHA256), true)
	if err == nil {
		return existing, false, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return cv, false, err
	}
	var publishedBy any
	if cv.PublishedBy != uuid.Nil {
		publishedBy = cv.PublishedBy
	}
	err = tx.QueryRow(ctx, `INSERT INTO contracts (project_id, name, version, sha256, kind, description, combinations, body, published_by)
		SELECT $1, $2, coalesce(max(version), 0) + 1, $3, $4, $5, $6, $7, $8 FROM contracts WHERE project_id = $1 AND name = $2
		RETURNING version, created_at`,
		cv.ProjectID, cv.Name, cv.SHA256, string(cv.Kind), cv.Description, int32(cv.Combinations), string(cv.Body), publishedBy,
	).Scan(&cv.Version, &cv.CreatedAt)
	if err != nil {
		return cv, false, err
	}
	cv.CreatedAt = cv.CreatedAt.UTC()
	return cv, true, tx.Commit(ctx)
}

const contractSelect = `project_id, name, version, sha256, kind, description, combinations, created_at, published_by, body`

func scanContract(row pgx.Row, withBody bool) (record.ContractVersion, error) {
	var cv record.ContractVersion
	var kind string
	var body *string
	var publishedBy *uuid.UUID
	dest := []any{&cv.ProjectID, &cv.Name, &cv.Version, &cv.SHA256, &kind, &cv.Description, &cv.Combinations, &cv.CreatedAt, &publishedBy}
	if withBody {
		dest = append(dest, &body)
	}
	if err := row.Scan(dest...); err != nil {
		return cv, err
	}
	cv.Kind = record.ContractKind(kind)
	cv.CreatedAt = cv.CreatedAt.UTC()
	if publishedBy != nil {
		cv.PublishedBy = *publishedBy
	}
	if body != nil {
		cv.Body = []byte(*body)
	}
	return cv, nil
}

// GetContractVersion returns one version of a named contract with its
// body; version 0 means the latest.
//
// Errors: engine.ErrNotFound when the name or version does not exist;
// engine.ErrUnavailable.
func (db *DB) GetContractVersion(ctx context.Context, projectID int64, name string, version int) (record.ContractVersion, error) {
	var row pgx.Row
	if version == 0 {
		row = db.pool.QueryRow(ctx, `SELECT `+contractSelect+` FROM contracts WHERE project_id = $1 AND name = $2
			ORDER BY version DESC LIMIT 1`, projectID, name)
	} else {
		row = db.pool.QueryRow(ctx, `SELECT `+contractSelect+` FROM contracts WHERE project_id = $1 AND name = $2 AND version = $3`,
			projectID, name, int32(version))
	}
	cv, err := scanContract(row, true)
	if err != nil {
		return cv, fmt.Errorf("get contract %s@%d: %w", name, version, translate(err))
	}
	return cv, nil
}

// ListContractVersions returns up to limit versions of a named contract
// with numbers above after, in ascending order, without bodies.
//
// Errors: engine.ErrNotFound when the name has no versions at all;
// engine.ErrUnavailable.
func (db *DB) ListContractVersions(ctx context.Context, projectID int64, name string, after, limit int) ([]record.ContractVersion, error) {
	rows, err := db.pool.Query(ctx, `SELECT project_id, name, version, sha256, kind, description, combinations, created_at, published_by
		FROM contracts WHERE project_id = $1 AND name = $2 AND version > $3 ORDER BY version LIMIT $4`,
		projectID, name, int32(after), limit)
	if err != nil {
		return nil, fmt.Errorf("list contract versions %s: %w", name, translate(err))
	}
	defer rows.Close()
	out := []record.ContractVersion{}
	for rows.Next() {
		cv, err := scanContract(rows, false)
		if err != nil {
			return nil, fmt.Errorf("list contract versions %s: %w", name, translate(err))
		}
		out = append(out, cv)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list contract versions %s: %w", name, translate(err))
	}
	if len(out) == 0 {
		var exists bool
		if err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM contracts WHERE project_id = $1 AND name = $2)`,
			projectID, name).Scan(&exists); err != nil {
			return nil, fmt.Errorf("list contract versions %s: %w", name, translate(err))
		}
		if !exists {
			return nil, fmt.Errorf("list contract versions %s: %w", name, translate(pgx.ErrNoRows))
		}
	}
	return out, nil
}

// ListContracts returns up to limit contract names of a project that sort
// after the name after ("" for the first page), in ascending order, each
// with its latest version.
//
// Errors: engine.ErrUnavailable.
func (db *DB) ListContracts(ctx context.Context, projectID int64, after string, limit int) ([]record.ContractSummary, error) {
	rows, err := db.pool.Query(ctx, `SELECT DISTINCT ON (name) name, version, kind, description, created_at
		FROM contracts WHERE project_id = $1 AND name > $2 ORDER BY name, version DESC LIMIT $3`,
		projectID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list contracts: %w", translate(err))
	}
	defer rows.Close()
	out := []record.ContractSummary{}
	for rows.Next() {
		var s record.ContractSummary
		var kind string
		if err := rows.Scan(&s.Name, &s.LatestVersion, &kind, &s.Description, &s.UpdatedAt); err != nil {
			return nil, fmt.Errorf("list contracts: %w", translate(err))
		}
		s.Kind = record.ContractKind(kind)
		s.Versions = s.LatestVersion
		s.UpdatedAt = s.UpdatedAt.UTC()
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list contracts: %w", translate(err))
	}
	return out, nil
}
