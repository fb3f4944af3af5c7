package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/toolscore/toolscore/internal/auth"
	"github.com/toolscore/toolscore/internal/store"
	"github.com/toolscore/toolscore/internal/store/storetest"
)

// runEnv runs toolscore with an environment.
func runEnv(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(t.Context(), args, stdio{in: strings.NewReader(""), out: &out, err: &errb, getenv: func(k string) string { return env[k] }})
	return result{code, out.String(), errb.String()}
}

func TestKeysCommands(t *testing.T) {
	dbURL := storetest.NewDatabase(t) // not migrated: the CLI does it
	env := map[string]string{"DATABASE_URL": dbURL}

	r := runEnv(t, env, "keys", "create", "--project", "default", "--scope", "ingest,read", "--scope", "admin", "--name", "ci")
	token := strings.TrimSpace(r.stdout)
	if r.code != 0 || !regexp.MustCompile(`^tsk_[a-z2-7]{52}$`).MatchString(token) ||
		!regexp.MustCompile(`^created key [0-9a-f-]{36} \(tsk_[a-z2-7]{8}…, ci\) of project default with scopes ingest, read, admin; it is shown only now:\n$`).MatchString(r.stderr) {
		t.Fatalf("keys create = %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}

	// The server's authenticator accepts it, for project default.
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{URL: dbURL})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := auth.NewAuthenticator(auth.Config{Store: db}).Authenticate(ctx, token)
	if err != nil || p.ProjectName != "default" || !p.Has(auth.ScopeAdmin) || p.Has(auth.ScopeRuns) {
		t.Fatalf("Authenticate = %+v, %v", p, err)
	}

	r = runEnv(t, env, "keys", "list", "--json")
	var keys []keyJSON
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &keys) != nil || len(keys) != 1 || keys[0].ID != p.KeyID.String() ||
		strings.Contains(r.stdout, token) {
		t.Fatalf("keys list --json = %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := runEnv(t, env, "keys", "list"); r.code != 0 || !strings.Contains(r.stdout, p.KeyID.String()) || strings.Contains(r.stdout, token) {
		t.Errorf("keys list = %d %s", r.code, r.stdout)
	}

	if r := runEnv(t, env, "keys", "project", "create", "team-b"); r.code != 0 || r.stdout != "created project team-b (id 2)\n" {
		t.Errorf("project create = %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := runEnv(t, env, "keys", "project", "list"); r.code != 0 || !strings.Contains(r.stdout, "team-b") || !strings.Contains(r.stdout, "default") {
		t.Errorf("project list = %d %s", r.code, r.stdout)
	}
	if r := runEnv(t, env, "keys", "create", "--project", "team-b", "--scope", "read"); r.code != 0 {
		t.Errorf("create in team-b = %d %s", r.code, r.stderr)
	}
	if r := runEnv(t, env, "keys", "list", "--project", "team-b", "--json"); r.code != 0 || strings.Count(r.stdout, `"id"`) != 1 {
		t.Errorf("list --project team-b = %s", r.stdout)
	}

	r = runEnv(t, env, "keys", "revoke", p.KeyID.String())
	if r.code != 0 || !strings.HasPrefix(r.stdout, "revoked key "+p.KeyID.String()) {
		t.Errorf("revoke = %d %q %q", r.code, r.stdout, r.stderr)
	}
	if _, err := auth.NewAuthenticator(auth.Config{Store: db}).Authenticate(ctx, token); !errors.Is(err, auth.ErrInvalidKey) {
		t.Errorf("revoked key: %v, want ErrInvalidKey", err)
	}

	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no database", nil, []string{"keys", "list"}, "toolscore: the service's database is needed: set DATABASE_URL or --database-url, e.g. postgres://postgres@127.0.0.1:5432/toolscore?sslmode=disable\n"},
		{"no project", env, []string{"keys", "create", "--scope", "read"}, "toolscore: --project is required: the key's project (default exists from the start; see toolscore keys project list)\n"},
		{"unknown project", env, []string{"keys", "create", "--project", "nope", "--scope", "read"}, "toolscore: no project \"nope\": create it with toolscore keys project create nope\n"},
		{"bad scope", env, []string{"keys", "create", "--project", "default", "--scope", "write"}, "toolscore: --scope: unknown scope \"write\"; valid: ingest, read, contracts:write, regrades, runs, admin\n"},
		{"no scope", env, []string{"keys", "create", "--project", "default"}, "toolscore: --scope: at least one scope is required; valid: ingest, read, contracts:write, regrades, runs, admin\n"},
		{"bad id", env, []string{"keys", "revoke", "abc"}, "toolscore: KEY_ID must be a key's id (a UUID, see toolscore keys list), got \"abc\"\n"},
		{"unknown id", env, []string{"keys", "revoke", "0193c6a1-0000-7000-8000-000000000001"}, "toolscore: no key 0193c6a1-0000-7000-8000-000000000001\n"},
		{"taken project", env, []string{"keys", "project", "create", "team-b"}, "toolscore: a project named \"team-b\" exists\n"},
		{"unreachable", map[string]string{"DATABASE_URL": "postgres://u:s3cret@127.0.0.1:1/x?sslmode=disable&connect_timeout=1"}, []string{"keys", "list"},
			"toolscore: the database is unreachable (check DATABASE_URL; the URL is not shown, it may hold a password)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runEnv(t, tc.env, tc.args...)
			if r.code != 2 || r.stderr != tc.want || r.stdout != "" {
				t.Errorf("code %d, stdout %q, stderr %q; want 2 and %q", r.code, r.stdout, r.stderr, tc.want)
			}
		})
	}
}
