package regrade

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

var update = flag.Bool("update", false, "rewrite the river goose migrations from the river module in go.mod")

// riverFiles are the goose migrations holding river's main migration line,
// with the river versions each holds. Versions 1-5 and 6-8 are split
// because 004 adds an enum value that 006 uses, which Postgres refuses in
// one transaction (SQLSTATE 55P04) and goose runs each file in one.
var riverFiles = []struct {
	name     string
	from, to int
}{
	{"00002_river_queue.sql", 1, 5},
	{"00003_river_queue_unique.sql", 6, 8},
}

// riverMigrationSQL renders river versions from..to, as the river module
// in go.mod ships them, as one goose migration (river's documented way to
// use another migration framework, `river migrate-get`), recording the
// versions in river_migration so that rivermigrate agrees.
func riverMigrationSQL(all []rivermigrate.Migration, from, to int) string {
	strip := func(sql string) string {
		return strings.TrimSpace(strings.ReplaceAll(sql, "/* TEMPLATE: schema */", ""))
	}
	var b strings.Builder
	fmt.Fprintf(&b, `-- River's job queue schema, versions %d to %d of its main migration line
-- (riverqueue/river), for internal/regrade's durable regrade jobs.
-- GENERATED from the river module in go.mod by
--   go test ./internal/regrade -run TestRiverMigration -update
-- Do not edit. After upgrading river, add the new river versions to
-- riverFiles in internal/regrade/migration_test.go as a new migration.
--
-- River's tables are created by goose rather than by rivermigrate at start
-- so that one tool, under one advisory lock, migrates the database:
-- replicas starting together never race on river's DDL, and the schema
-- version that /readyz checks covers river's tables too.

-- +goose Up
`, from, to)
	var versions []string
	for _, v := range all {
		if v.Version < from || v.Version > to {
			continue
		}
		fmt.Fprintf(&b, "\n-- river %03d: %s\n-- +goose StatementBegin\n%s\n-- +goose StatementEnd\n", v.Version, v.Name, strip(v.SQLUp))
		versions = append(versions, fmt.Sprintf("('main', %d)", v.Version))
	}
	fmt.Fprintf(&b, "\nINSERT INTO river_migration (line, version) VALUES %s;\n", strings.Join(versions, ", "))
	b.WriteString("\n-- +goose Down\n")
	for i := len(all) - 1; i >= 0; i-- {
		v := all[i]
		if v.Version < from || v.Version > to {
			continue
		}
		fmt.Fprintf(&b, "\n-- river %03d: %s\n-- +goose StatementBegin\n%s\n-- +goose StatementEnd\n", v.Version, v.Name, strip(v.SQLDown))
	}
	return b.String()
}

// TestRiverMigration checks that the goose migrations hold exactly the
// river schema of the river module in go.mod.
func TestRiverMigration(t *testing.T) {
	m, err := rivermigrate.New(riverpgxv5.New((*pgxpool.Pool)(nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	all := m.AllVersions()
	if last := riverFiles[len(riverFiles)-1].to; all[len(all)-1].Version != last {
		t.Fatalf("river in go.mod has migrations up to version %d, the goose migrations up to %d: add a migration to riverFiles",
			all[len(all)-1].Version, last)
	}
	for _, f := range riverFiles {
		path := "../../migrations/" + f.name
		want := riverMigrationSQL(all, f.from, f.to)
		if *update {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("migrations/%s differs from river's versions %d-%d; rerun with -update", f.name, f.from, f.to)
		}
	}
}
