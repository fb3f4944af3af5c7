package store

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/auth"
	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
)

func TestProjectsAndKeys(t *testing.T) {
	db, _ := mustMigrated(t)
	ctx := context.Background()

	if _, _, err := db.CountKeys(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := db.CreateProject(ctx, "team-a")
	if err != nil || p.ID != 2 || p.Name != "team-a" {
		t.Fatalf("CreateProject = %+v, %v; want id 2", p, err)
	}
	if _, err := db.CreateProject(ctx, "team-a"); !errors.Is(err, engine.ErrConflict) {
		t.Errorf("CreateProject(taken) = %v, want ErrConflict", err)
	}
	if _, err := db.CreateProject(ctx, "bad name"); err == nil {
		t.Error("CreateProject(bad name) = nil, want the name check to refuse it")
	}

	k, token, _ := auth.NewKey(p.ID, "ci", []auth.Scope{auth.ScopeIngest, auth.ScopeRead}, uuid.Nil)
	stored, err := db.CreateKey(ctx, k)
	if err != nil || stored.ProjectName != "team-a" || stored.CreatedAt.IsZero() || stored.Prefix != token[:12] {
		t.Fatalf("CreateKey = %+v, %v", stored, err)
	}
	if _, err := db.CreateKey(ctx, k); !errors.Is(err, engine.ErrConflict) {
		t.Errorf("CreateKey(again) = %v, want ErrConflict", err)
	}
	lost, _, _ := auth.NewKey(999, "", []auth.Scope{auth.ScopeRead}, uuid.Nil)
	if _, err := db.CreateKey(ctx, lost); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("CreateKey(no project) = %v, want ErrNotFound", err)
	}
	bad, _, _ := auth.NewKey(p.ID, "", []auth.Scope{auth.ScopeRead}, uuid.Nil)
	bad.Scopes = []string{"root"}
	if _, err := db.CreateKey(ctx, bad); err == nil {
		t.Error("CreateKey(unknown scope) = nil, want the scope check to refuse it")
	}

	// A second key, made by the first, and its lookup.
	k2, _, _ := auth.NewKey(p.ID, "", []auth.Scope{auth.ScopeAdmin}, stored.ID)
	if _, err := db.CreateKey(ctx, k2); err != nil {
		t.Fatal(err)
	}
	h := auth.Hash(token)
	found, err := db.ActiveKeysByLookup(ctx, auth.Lookup(h))
	if err != nil || len(found) != 1 || found[0].ID != k.ID || string(found[0].Hash) != string(h[:]) ||
		strings.Join(found[0].Scopes, ",") != "ingest,read" {
		t.Fatalf("ActiveKeysByLookup = %+v, %v", found, err)
	}
	if err := db.TouchKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}

	list, err := db.ListKeys(ctx, p.ID, nil, 10)
	if err != nil || len(list) != 2 || list[0].ID != k2.ID || list[0].CreatedBy != k.ID || list[1].LastUsedAt == nil {
		t.Fatalf("ListKeys = %+v, %v", list, err)
	}
	page2, err := db.ListKeys(ctx, p.ID, &record.Cursor{CreatedAt: list[0].CreatedAt, ID: list[0].ID}, 10)
	if err != nil || len(page2) != 1 || page2[0].ID != k.ID {
		t.Errorf("ListKeys(after) = %+v, %v", page2, err)
	}
	if other, _ := db.ListKeys(ctx, record.DefaultProject, nil, 10); len(other) != 0 {
		t.Errorf("ListKeys(default) = %+v, want none", other)
	}

	// Revocation is scoped by project and final.
	if _, err := db.RevokeKey(ctx, record.DefaultProject, k.ID); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("RevokeKey(other project) = %v, want ErrNotFound", err)
	}
	rk, err := db.RevokeKey(ctx, p.ID, k.ID)
	if err != nil || rk.RevokedAt == nil {
		t.Fatalf("RevokeKey = %+v, %v", rk, err)
	}
	again, _ := db.RevokeKey(ctx, p.ID, k.ID)
	if !again.RevokedAt.Equal(*rk.RevokedAt) {
		t.Errorf("revoking twice moved revoked_at: %v then %v", rk.RevokedAt, again.RevokedAt)
	}
	if found, _ := db.ActiveKeysByLookup(ctx, auth.Lookup(h)); len(found) != 0 {
		t.Errorf("a revoked key is still found: %+v", found)
	}
	if active, all, err := db.CountKeys(ctx); err != nil || active != 1 || all != 2 {
		t.Errorf("CountKeys = %d, %d, %v; want 1, 2", active, all, err)
	}
	if _, err := db.RevokeKeyByID(ctx, k2.ID); err != nil {
		t.Errorf("RevokeKeyByID = %v", err)
	}

	// A project and its first key come together or not at all.
	k3, _, _ := auth.NewKey(0, "", []auth.Scope{auth.ScopeAdmin}, uuid.Nil)
	np, nk, err := db.CreateProjectWithKey(ctx, "team-b", k3)
	if err != nil || nk.ProjectID != np.ID || nk.ProjectName != "team-b" {
		t.Fatalf("CreateProjectWithKey = %+v, %+v, %v", np, nk, err)
	}
	if _, _, err := db.CreateProjectWithKey(ctx, "team-c", k3); !errors.Is(err, engine.ErrConflict) {
		t.Errorf("CreateProjectWithKey(taken key) = %v, want ErrConflict", err)
	}
	if _, err := db.GetProjectByName(ctx, "team-c"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("team-c exists after a failed CreateProjectWithKey: %v", err)
	}
	ps, err := db.ListProjects(ctx)
	if err != nil || len(ps) != 3 || ps[2].Name != "team-b" {
		t.Errorf("ListProjects = %+v, %v", ps, err)
	}
}

func TestContractPublishedBy(t *testing.T) {
	db, _ := mustMigrated(t)
	ctx := context.Background()
	k, _, _ := auth.NewKey(record.DefaultProject, "", []auth.Scope{auth.ScopeContractsWrite}, uuid.Nil)
	if _, err := db.CreateKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	cv := record.ContractVersion{ProjectID: record.DefaultProject, Name: "c", SHA256: strings.Repeat("a", 64), Kind: record.KindGold,
		Combinations: 1, Body: []byte(`[]`), PublishedBy: k.ID}
	if _, _, err := db.CreateContractVersion(ctx, cv); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetContractVersion(ctx, record.DefaultProject, "c", 1)
	if err != nil || got.PublishedBy != k.ID {
		t.Errorf("published_by = %v, %v; want %v", got.PublishedBy, err, k.ID)
	}
	vs, _ := db.ListContractVersions(ctx, record.DefaultProject, "c", 0, 10)
	if len(vs) != 1 || vs[0].PublishedBy != k.ID {
		t.Errorf("listed published_by = %+v", vs)
	}
}
