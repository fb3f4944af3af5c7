package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/toolscore/toolscore/internal/record"
)

// Projects and API keys (migration 00008). Keys are stored as hashes;
// see internal/auth.

// CreateProject creates a project named name.
//
// Errors: engine.ErrConflict when the name is taken; engine.ErrUnavailable.
func (db *DB) CreateProject(ctx context.Context, name string) (record.Project, error) {
	var p record.Project
	err := db.pool.QueryRow(ctx, `INSERT INTO projects (name) VALUES ($1) RETURNING id, name, created_at`, name).
		Scan(&p.ID, &p.Name, &p.CreatedAt)
	if err != nil {
		return p, fmt.Errorf("create project %s: %w", name, translate(err))
	}
	p.CreatedAt = p.CreatedAt.UTC()
	return p, nil
}

// CreateProjectWithKey creates a project named name and, in the same
// transaction, the key k in it (k.ProjectID is set to the new project).
//
// Errors: engine.ErrConflict when the name (or the key's hash) is taken;
// engine.ErrUnavailable.
func (db *DB) CreateProjectWithKey(ctx context.Context, name string, k record.APIKey) (_ record.Project, _ record.APIKey, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("create project %s: %w", name, translate(err))
		}
	}()
	var p record.Project
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return p, k, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	if err := tx.QueryRow(ctx, `INSERT INTO projects (name) VALUES ($1) RETURNING id, name, created_at`, name).
		Scan(&p.ID, &p.Name, &p.CreatedAt); err != nil {
		return p, k, err
	}
	p.CreatedAt = p.CreatedAt.UTC()
	k.ProjectID = p.ID
	if k, err = insertKey(ctx, tx, k); err != nil {
		return p, k, err
	}
	return p, k, tx.Commit(ctx)
}

// GetProjectByName returns the project named name.
//
// Errors: engine.ErrNotFound; engine.ErrUnavailable.
func (db *DB) GetProjectByName(ctx context.Context, name string) (record.Project, error) {
	var p record.Project
	err := db.pool.QueryRow(ctx, `SELECT id, name, created_at FROM projects WHERE name = $1`, name).Scan(&p.ID, &p.Name, &p.CreatedAt)
	if err != nil {
		return p, fmt.Errorf("get project %s: %w", name, translate(err))
	}
	p.CreatedAt = p.CreatedAt.UTC()
	return p, nil
}

// GetProject returns the project id.
//
// Errors: engine.ErrNotFound; engine.ErrUnavailable.
func (db *DB) GetProject(ctx context.Context, id int64) (record.Project, error) {
	var p record.Project
	err := db.pool.QueryRow(ctx, `SELECT id, name, created_at FROM projects WHERE id = $1`, id).Scan(&p.ID, &p.Name, &p.CreatedAt)
	if err != nil {
		return p, fmt.Errorf("get project %d: %w", id, translate(err))
	}
	p.CreatedAt = p.CreatedAt.UTC()
	return p, nil
}

// ListProjects returns every project in id order (the operator's view,
// for the CLI; no API route lists other projects).
//
// Errors: engine.ErrUnavailable.
func (db *DB) ListProjects(ctx context.Context) ([]record.Project, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, name, created_at FROM projects ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", translate(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (record.Project, error) {
		var p record.Project
		err := row.Scan(&p.ID, &p.Name, &p.CreatedAt)
		p.CreatedAt = p.CreatedAt.UTC()
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", translate(err))
	}
	return out, nil
}

// keySelect reads a key joined with its project (p). created_by is read
// only when the creating key belongs to the same project: the first key
// of a project made with POST /v1/projects was made by another project's
// key, whose id that project must not learn (the column keeps it, for the
// operator).
const keySelect = `k.id, k.project_id, p.name, k.name, k.prefix, k.lookup, k.hash, k.scopes,
	(SELECT c.id FROM api_keys c WHERE c.id = k.created_by AND c.project_id = k.project_id), k.created_at, k.last_used_at, k.revoked_at`

func scanKey(row pgx.Row) (record.APIKey, error) {
	var k record.APIKey
	var createdBy *uuid.UUID
	err := row.Scan(&k.ID, &k.ProjectID, &k.ProjectName, &k.Name, &k.Prefix, &k.Lookup, &k.Hash, &k.Scopes,
		&createdBy, &k.CreatedAt, &k.LastUsedAt, &k.RevokedAt)
	if createdBy != nil {
		k.CreatedBy = *createdBy
	}
	k.CreatedAt = k.CreatedAt.UTC()
	for _, t := range []*time.Time{k.LastUsedAt, k.RevokedAt} {
		if t != nil {
			*t = t.UTC()
		}
	}
	return k, err
}

// insertKey inserts k within tx and returns it as stored.
func insertKey(ctx context.Context, tx pgx.Tx, k record.APIKey) (record.APIKey, error) {
	var createdBy any
	if k.CreatedBy != uuid.Nil {
		createdBy = k.CreatedBy
	}
	return scanKey(tx.QueryRow(ctx, `WITH k AS (
			INSERT INTO api_keys (id, project_id, name, prefix, lookup, hash, scopes, created_by)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *)
		SELECT `+keySelect+` FROM k JOIN projects p ON p.id = k.project_id`,
		k.ID, k.ProjectID, k.Name, k.Prefix, k.Lookup, k.Hash, k.Scopes, createdBy))
}

// CreateKey stores the key k (its hash, never a token) in k.ProjectID and
// returns it as stored (CreatedAt and ProjectName set).
//
// Errors: engine.ErrConflict when its id or hash is taken;
// engine.ErrNotFound when the project does not exist;
// engine.ErrUnavailable.
func (db *DB) CreateKey(ctx context.Context, k record.APIKey) (_ record.APIKey, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("create key: %w", translate(err))
		}
	}()
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return k, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	var one int
	if err := tx.QueryRow(ctx, `SELECT 1 FROM projects WHERE id = $1`, k.ProjectID).Scan(&one); err != nil {
		return k, err
	}
	if k, err = insertKey(ctx, tx, k); err != nil {
		return k, err
	}
	return k, tx.Commit(ctx)
}

// ListKeys returns up to limit keys of a project, revoked ones included,
// newest first (created_at DESC, id DESC), continuing strictly after the
// cursor when non-nil.
//
// Errors: engine.ErrUnavailable.
func (db *DB) ListKeys(ctx context.Context, projectID int64, after *record.Cursor, limit int) ([]record.APIKey, error) {
	q := `SELECT ` + keySelect + ` FROM api_keys k JOIN projects p ON p.id = k.project_id WHERE k.project_id = $1`
	args := []any{projectID, limit}
	if after != nil {
		q += ` AND (k.created_at, k.id) < ($3, $4)`
		args = append(args, after.CreatedAt, after.ID)
	}
	rows, err := db.pool.Query(ctx, q+` ORDER BY k.created_at DESC, k.id DESC LIMIT $2`, args...)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", translate(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (record.APIKey, error) { return scanKey(row) })
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", translate(err))
	}
	return out, nil
}

// ListAllKeys returns every key of every project (the operator's view,
// for the CLI), by project and then newest first.
//
// Errors: engine.ErrUnavailable.
func (db *DB) ListAllKeys(ctx context.Context) ([]record.APIKey, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+keySelect+` FROM api_keys k JOIN projects p ON p.id = k.project_id
		ORDER BY k.project_id, k.created_at DESC, k.id DESC`)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", translate(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (record.APIKey, error) { return scanKey(row) })
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", translate(err))
	}
	return out, nil
}

// RevokeKey revokes a key of a project and returns it; a key already
// revoked is returned unchanged.
//
// Errors: engine.ErrNotFound when the project has no such key;
// engine.ErrUnavailable.
func (db *DB) RevokeKey(ctx context.Context, projectID int64, id uuid.UUID) (record.APIKey, error) {
	k, err := scanKey(db.pool.QueryRow(ctx, `WITH k AS (
			UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE project_id = $1 AND id = $2 RETURNING *)
		SELECT `+keySelect+` FROM k JOIN projects p ON p.id = k.project_id`, projectID, id))
	if err != nil {
		return k, fmt.Errorf("revoke key %s: %w", id, translate(err))
	}
	return k, nil
}

// RevokeKeyByID revokes a key of any project (the operator's CLI) and
// returns it; a key already revoked is returned unchanged.
//
// Errors: engine.ErrNotFound; engine.ErrUnavailable.
func (db *DB) RevokeKeyByID(ctx context.Context, id uuid.UUID) (record.APIKey, error) {
	k, err := scanKey(db.pool.QueryRow(ctx, `WITH k AS (
			UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING *)
		SELECT `+keySelect+` FROM k JOIN projects p ON p.id = k.project_id`, id))
	if err != nil {
		return k, fmt.Errorf("revoke key %s: %w", id, translate(err))
	}
	return k, nil
}

// ActiveKeysByLookup returns the keys that are not revoked whose lookup
// (the first 8 bytes of the hash) is lookup, with their project's name:
// the candidates of one token, usually none or one.
//
// Errors: engine.ErrUnavailable.
func (db *DB) ActiveKeysByLookup(ctx context.Context, lookup []byte) ([]record.APIKey, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+keySelect+` FROM api_keys k JOIN projects p ON p.id = k.project_id
		WHERE k.lookup = $1 AND k.revoked_at IS NULL`, lookup)
	if err != nil {
		return nil, fmt.Errorf("find key: %w", translate(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (record.APIKey, error) { return scanKey(row) })
	if err != nil {
		return nil, fmt.Errorf("find key: %w", translate(err))
	}
	return out, nil
}

// TouchKey sets a key's last use to now.
//
// Errors: engine.ErrUnavailable.
func (db *DB) TouchKey(ctx context.Context, id uuid.UUID) error {
	if _, err := db.pool.Exec(ctx, `UPDATE api_keys SET last_used_at = now() WHERE id = $1`, id); err != nil {
		return fmt.Errorf("touch key %s: %w", id, translate(err))
	}
	return nil
}

// CountKeys returns the number of keys of every project that are not
// revoked, and of all keys ever made (0 on a new database: the server then
// explains how to make the first one, or makes the bootstrap key).
//
// Errors: engine.ErrUnavailable.
func (db *DB) CountKeys(ctx context.Context) (active, all int64, err error) {
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE revoked_at IS NULL), count(*) FROM api_keys`).Scan(&active, &all); err != nil {
		return 0, 0, fmt.Errorf("count keys: %w", translate(err))
	}
	return active, all, nil
}
