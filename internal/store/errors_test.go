package store

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/store/storetest"
)

// TestInvalidText checks that Postgres refusing a NUL character in text
// (SQLSTATE 22021) is record.ErrInvalidText, a client
// error.
func TestInvalidText(t *testing.T) {
	db, _ := mustMigrated(t)
	ctx := context.Background()
	bad := newResult(t, 1, func(r *record.Result) { r.Agent = "a\x00b" })
	if err := db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{bad}}); !errors.Is(err, record.ErrInvalidText) {
		t.Errorf("InsertResults(NUL agent) = %v, want ErrInvalidText", err)
	}
	cv := record.ContractVersion{ProjectID: record.DefaultProject, Name: "flights", SHA256: "00", Kind: record.KindContract,
		Description: "a\x00b", Body: []byte(`{"contract_version": 2, "required": []}`)}
	if _, _, err := db.CreateContractVersion(ctx, cv); !errors.Is(err, record.ErrInvalidText) {
		t.Errorf("CreateContractVersion(NUL description) = %v, want ErrInvalidText", err)
	}
	if _, err := db.ListResults(ctx, record.DefaultProject, record.ResultFilter{Agent: "a\x00b"}, nil, 10); !errors.Is(err, record.ErrInvalidText) {
		t.Errorf("ListResults(NUL agent) = %v, want ErrInvalidText", err)
	}
	if _, err := db.Stats(ctx, record.DefaultProject, record.ResultFilter{TaskID: "\xff"}, record.GroupByAgent); !errors.Is(err, record.ErrInvalidText) {
		t.Errorf("Stats(invalid UTF-8 task) = %v, want ErrInvalidText", err)
	}
	if errors.Is(record.ErrInvalidText, engine.ErrUnavailable) {
		t.Fatal("ErrInvalidText must not be unavailability")
	}
	rs, err := db.ListResults(ctx, record.DefaultProject, record.ResultFilter{}, nil, 10)
	if err != nil || len(rs) != 0 {
		t.Errorf("ListResults = %d results, %v; want none stored", len(rs), err)
	}
}

// TestDatabaseDropped checks that a database dropped at runtime (the
// server answers FATAL 3D000 inside a *pgconn.ConnectError) is
// ErrUnavailable, not an internal error, and that a database recreated
// empty (42P01 on goose_db_version and our tables) is too.
func TestDatabaseDropped(t *testing.T) {
	db, url := mustMigrated(t)
	ctx := context.Background()
	if err := db.Ready(ctx); err != nil {
		t.Fatalf("Ready() = %v", err)
	}
	name := url[strings.LastIndex(url, "/")+1:]
	if i := strings.IndexByte(name, '?'); i >= 0 {
		name = name[:i]
	}
	admin, err := pgx.Connect(ctx, storetest.ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
		t.Fatal(err)
	}
	for _, check := range []struct {
		name string
		err  func() error
	}{
		{"Ping", func() error { return db.Ping(ctx) }},
		{"Ready", func() error { return db.Ready(ctx) }},
		{"InsertResults", func() error {
			return db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{newResult(t, 1, nil)}})
		}},
		{"ListResults", func() error {
			_, err := db.ListResults(ctx, record.DefaultProject, record.ResultFilter{}, nil, 10)
			return err
		}},
	} {
		if err := check.err(); !errors.Is(err, engine.ErrUnavailable) {
			t.Errorf("dropped: %s() = %v, want ErrUnavailable", check.name, err)
		}
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	if err := db.Ready(ctx); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("recreated empty: Ready() = %v, want ErrUnavailable", err)
	}
	if _, err := db.ListResults(ctx, record.DefaultProject, record.ResultFilter{}, nil, 10); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("recreated empty: ListResults() = %v, want ErrUnavailable", err)
	}
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatalf("Migrate() = %v", err)
	}
	if err := db.Ready(ctx); err != nil {
		t.Errorf("migrated again: Ready() = %v", err)
	}
}

// TestTranslateCodes checks the SQLSTATEs that mean the database cannot
// be used now (TestDatabaseDropped covers a real dropped database).
func TestTranslateCodes(t *testing.T) {
	for _, code := range []string{"3D000", "28P01", "28000", "57P01", "57P04", "08006", "53300", "42P01"} {
		if got := translate(&pgconn.PgError{Severity: "FATAL", Code: code}); !errors.Is(got, engine.ErrUnavailable) {
			t.Errorf("translate(%s) = %v, want ErrUnavailable", code, got)
		}
	}
	for _, code := range []string{"42601", "23503"} {
		if got := translate(&pgconn.PgError{Code: code}); errors.Is(got, engine.ErrUnavailable) || errors.Is(got, record.ErrInvalidText) {
			t.Errorf("translate(%s) = %v, want it unchanged", code, got)
		}
	}
}
