// Package storetest gives tests a fresh, migrated Postgres database.
//
// The server is TOOLSCORE_TEST_DATABASE_URL (default
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable). Each call of
// NewDatabase creates a database with a random name and drops it when the
// test ends. When the server cannot be reached the test is skipped with a
// hint, unless CI=true or TOOLSCORE_TEST_DB=required, when it fails.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultURL is the test server used when TOOLSCORE_TEST_DATABASE_URL is
// unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// ServerURL returns the test server's connection URL.
func ServerURL() string {
	if u := os.Getenv("TOOLSCORE_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// required reports whether an unreachable test database fails the test.
func required() bool {
	return os.Getenv("CI") == "true" || os.Getenv("TOOLSCORE_TEST_DB") == "required"
}

// NewDatabase creates an empty database on the test server, registers its
// removal with tb.Cleanup and returns its connection URL. It does not
// migrate it.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	base := ServerURL()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		if required() {
			tb.Fatalf("test database unreachable (CI=true or TOOLSCORE_TEST_DB=required): %v", err)
		}
		tb.Skipf("skipping: Postgres unreachable at TOOLSCORE_TEST_DATABASE_URL (default %s): %v; start it, e.g. 'pg_ctlcluster 15 main start'", DefaultURL, err)
	}
	defer conn.Close(context.Background())
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "toolscore_test_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("create test database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			tb.Errorf("drop test database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("drop test database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" {
		tb.Fatalf("TOOLSCORE_TEST_DATABASE_URL must be a URL (postgres://...), got an unparsable value")
	}
	u.Path = "/" + name
	return u.String()
}
