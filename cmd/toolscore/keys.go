package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/toolscore/toolscore/internal/auth"
	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/store"
)

// keysFlags are the flags shared by the keys commands.
type keysFlags struct {
	databaseURL string
	project     string
	scopes      []string
	name        string
	json        bool
}

// newKeysCmd builds `toolscore keys`: the operator's tool for projects
// and API keys, working on the service's database directly (as the
// server does, migrating it first), so that it also makes the first key
// of a new installation.
func newKeysCmd(s stdio) *cobra.Command {
	var f keysFlags
	cmd := &cobra.Command{
		Use:   "keys (create | list | revoke | project)",
		Short: "Make, list and revoke the service's API keys and projects (on its database)",
		Long: `Manage the toolscore service's projects and API keys on its Postgres
database (DATABASE_URL, or --database-url), as the server does: the
schema is migrated first, so the first admin key of a new installation
can be made before the server ever starts.

A key belongs to one project and acts only on that project's data, with
its scopes: ingest (POST evaluations and batches), read (results, stats,
contracts, regrades, runs), contracts:write (publish contract versions),
regrades (start and cancel), runs (start and cancel harness runs), admin
(the project's keys, new projects). A key is printed once, on stdout, when
it is made; the database keeps only its SHA-256.`,
		Example: `  export DATABASE_URL='postgres://postgres@127.0.0.1:5432/toolscore?sslmode=disable'
  toolscore keys create --project default --scope admin --name first-admin
  export TOOLSCORE_API_KEY=$(toolscore keys create --project default --scope ingest,read --name ci)
  toolscore keys list
  toolscore keys revoke 0193c6a1-0000-7000-8000-000000000001
  toolscore keys project create team-b`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.databaseURL, "database-url", "", "the service's Postgres `URL` (default: DATABASE_URL)")

	create := &cobra.Command{
		Use:   "create --project NAME --scope SCOPE...",
		Short: "Make a key; it is printed once, on stdout",
		Args:  exactArgs(),
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			return withStore(cmd.Context(), s, f, func(ctx context.Context, db *store.DB) error { return createKeyCmd(ctx, s, db, f) })
		}),
	}
	create.Flags().StringVar(&f.project, "project", "", "the key's project `NAME` (required; default exists from the start)")
	create.Flags().StringSliceVar(&f.scopes, "scope", nil, "a `SCOPE` of the key (repeatable or comma-separated): "+strings.Join(auth.ScopeNames(auth.AllScopes()), ", "))
	create.Flags().StringVar(&f.name, "name", "", "a `LABEL` for people")

	list := &cobra.Command{
		Use:   "list [--project NAME]",
		Short: "List keys (never their tokens), revoked ones included",
		Args:  exactArgs(),
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			return withStore(cmd.Context(), s, f, func(ctx context.Context, db *store.DB) error { return listKeysCmd(ctx, s, db, f) })
		}),
	}
	list.Flags().StringVar(&f.project, "project", "", "only the keys of project `NAME`")
	list.Flags().BoolVar(&f.json, "json", false, "print the keys as JSON")

	revoke := &cobra.Command{
		Use:   "revoke KEY_ID",
		Short: "Revoke a key (servers refuse it within 5 s)",
		Args:  exactArgs("KEY_ID"),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			id, err := uuid.Parse(args[0])
			if err != nil {
				return failf("KEY_ID must be a key's id (a UUID, see toolscore keys list), got %q", args[0])
			}
			return withStore(cmd.Context(), s, f, func(ctx context.Context, db *store.DB) error {
				k, err := db.RevokeKeyByID(ctx, id)
				if errors.Is(err, engine.ErrNotFound) {
					return failf("no key %s", id)
				}
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(s.out, "revoked key %s (%s) of project %s at %s\n", k.ID, keyLabel(k), k.ProjectName, k.RevokedAt.Format(time.RFC3339))
				return err
			})
		}),
	}

	project := &cobra.Command{Use: "project (create NAME | list)", Short: "Create and list projects"}
	projectCreate := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a project (then make its keys with keys create --project NAME)",
		Args:  exactArgs("NAME"),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			return withStore(cmd.Context(), s, f, func(ctx context.Context, db *store.DB) error {
				p, err := db.CreateProject(ctx, args[0])
				if errors.Is(err, engine.ErrConflict) {
					return failf("a project named %q exists", args[0])
				}
				if err != nil {
					return failf("project %q: %v (a name is 1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit)", args[0], unwrapAll(err))
				}
				_, err = fmt.Fprintf(s.out, "created project %s (id %d)\n", p.Name, p.ID)
				return err
			})
		}),
	}
	projectList := &cobra.Command{
		Use:   "list",
		Short: "List the projects",
		Args:  exactArgs(),
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			return withStore(cmd.Context(), s, f, func(ctx context.Context, db *store.DB) error {
				ps, err := db.ListProjects(ctx)
				if err != nil {
					return err
				}
				t := newTable()
				t.AppendHeader([]any{"id", "name", "created"})
				for _, p := range ps {
					t.AppendRow([]any{p.ID, p.Name, p.CreatedAt.Format(time.RFC3339)})
				}
				_, err = fmt.Fprintln(s.out, t.Render())
				return err
			})
		}),
	}
	project.AddCommand(projectCreate, projectList)
	cmd.AddCommand(create, list, revoke, project)
	return cmd
}

// unwrapAll returns the innermost error's message (the database's reason,
// without the store's wrapping).
func unwrapAll(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

// withStore opens the service's database, migrates it and runs fn.
func withStore(ctx context.Context, s stdio, f keysFlags, fn func(context.Context, *store.DB) error) error {
	u := f.databaseURL
	if u == "" {
		u = s.env("DATABASE_URL")
	}
	if u == "" {
		return failf("the service's database is needed: set DATABASE_URL or --database-url, e.g. postgres://postgres@127.0.0.1:5432/toolscore?sslmode=disable")
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	db, err := store.Open(ctx, store.Config{URL: u, MaxConns: 2, Writers: 1})
	if err != nil {
		return failf("%v", err)
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		if errors.Is(err, engine.ErrUnavailable) {
			return failf("the database is unreachable (check DATABASE_URL; the URL is not shown, it may hold a password)")
		}
		return failf("%v", err)
	}
	return fn(ctx, db)
}

// createKeyCmd makes a key and prints its token alone on stdout (so that
// $(toolscore keys create ...) captures it), and what it is on stderr.
func createKeyCmd(ctx context.Context, s stdio, db *store.DB, f keysFlags) error {
	if f.project == "" {
		return failf("--project is required: the key's project (default exists from the start; see toolscore keys project list)")
	}
	scopes, err := auth.ParseScopes(f.scopes)
	if err != nil {
		return failf("--scope: %v", err)
	}
	if len(f.name) > 128 {
		return failf("--name must be at most 128 bytes")
	}
	p, err := db.GetProjectByName(ctx, f.project)
	if errors.Is(err, engine.ErrNotFound) {
		return failf("no project %q: create it with toolscore keys project create %s", f.project, f.project)
	}
	if err != nil {
		return err
	}
	k, token, err := auth.NewKey(p.ID, f.name, scopes, uuid.Nil)
	if err != nil {
		return err
	}
	if k, err = db.CreateKey(ctx, k); err != nil {
		return err
	}
	fmt.Fprintf(s.err, "created key %s (%s) of project %s with scopes %s; it is shown only now:\n",
		k.ID, keyLabel(k), k.ProjectName, strings.Join(k.Scopes, ", "))
	_, err = fmt.Fprintln(s.out, token)
	return err
}

// keyLabel names a key for people: its prefix, else its name.
func keyLabel(k record.APIKey) string {
	switch {
	case k.Prefix != "" && k.Name != "":
		return k.Prefix + "…, " + k.Name
	case k.Prefix != "":
		return k.Prefix + "…"
	case k.Name != "":
		return k.Name
	}
	return "no prefix"
}

// keyJSON is one key of `keys list --json`.
type keyJSON struct {
	ID         string     `json:"id"`
	Project    string     `json:"project"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	Scopes     []string   `json:"scopes"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
}

func listKeysCmd(ctx context.Context, s stdio, db *store.DB, f keysFlags) error {
	keys, err := db.ListAllKeys(ctx)
	if err != nil {
		return err
	}
	var shown []record.APIKey
	for _, k := range keys {
		if f.project == "" || k.ProjectName == f.project {
			shown = append(shown, k)
		}
	}
	if f.json {
		out := []keyJSON{}
		for _, k := range shown {
			out = append(out, keyJSON{ID: k.ID.String(), Project: k.ProjectName, Name: k.Name, Prefix: k.Prefix, Scopes: k.Scopes,
				CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt, RevokedAt: k.RevokedAt})
		}
		return writeJSON(s, out)
	}
	if len(shown) == 0 {
		_, err := fmt.Fprintln(s.out, "no keys")
		return err
	}
	when := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.Format(time.RFC3339)
	}
	t := newTable()
	t.AppendHeader([]any{"id", "project", "prefix", "name", "scopes", "created", "last used", "revoked"})
	for _, k := range shown {
		t.AppendRow([]any{k.ID, k.ProjectName, k.Prefix, k.Name, strings.Join(k.Scopes, ","), k.CreatedAt.Format(time.RFC3339),
			when(k.LastUsedAt), when(k.RevokedAt)})
	}
	_, err = fmt.Fprintln(s.out, t.Render())
	return err
}
