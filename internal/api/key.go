package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/auth"
	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
)

// Keys is what the key and project routes need; cmd/server passes in
// *store.DB, whose methods of the same names document the exact
// behaviour.
type Keys interface {
	CreateKey(ctx context.Context, k record.APIKey) (record.APIKey, error)
	ListKeys(ctx context.Context, projectID int64, after *record.Cursor, limit int) ([]record.APIKey, error)
	RevokeKey(ctx context.Context, projectID int64, id uuid.UUID) (record.APIKey, error)
	CreateProjectWithKey(ctx context.Context, name string, k record.APIKey) (record.Project, record.APIKey, error)
	GetProject(ctx context.Context, id int64) (record.Project, error)
}

// ProjectNamePattern is what a project name must match (migration 00008
// checks it too).
var ProjectNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// maxKeyName caps a key's name.
const maxKeyName = 128

func (s *Server) keyRoutes(r chi.Router) {
	r.Post("/keys", s.handle(s.createKey))
	r.Get("/keys", s.handle(s.listKeys))
	r.Delete("/keys/{id}", s.handle(s.revokeKey))
	r.Post("/projects", s.handle(s.createProject))
	r.Get("/projects", s.handle(s.listProjects))
}

// keys returns the configured key store, or a 503 problem.
func (s *Server) keys() (Keys, error) {
	if s.cfg.Keys == nil {
		return nil, newError(probUnavailable, "key management is not enabled on this server")
	}
	return s.cfg.Keys, nil
}

// keyView is the JSON form of a key: never its token or hash.
type keyView struct {
	ID         string     `json:"id"`
	Project    string     `json:"project"`
	Name       string     `json:"name,omitempty"`
	Prefix     string     `json:"prefix,omitempty"`
	Scopes     []string   `json:"scopes"`
	CreatedBy  string     `json:"created_by,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
}

// newKeyView is a key just made, with its token: the one time it is
// shown.
type newKeyView struct {
	keyView
	Token string `json:"token"`
}

func viewKey(k record.APIKey) keyView {
	v := keyView{ID: k.ID.String(), Project: k.ProjectName, Name: k.Name, Prefix: k.Prefix, Scopes: k.Scopes,
		CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt, RevokedAt: k.RevokedAt}
	if k.CreatedBy != uuid.Nil {
		v.CreatedBy = k.CreatedBy.String()
	}
	return v
}

// keyRequest is the body of POST /v1/keys.
type keyRequest struct {
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`
}

// check validates a key request and returns its scopes.
//
// Errors: 422 invalid-request naming every bad field.
func (req *keyRequest) check() ([]auth.Scope, error) {
	var probs []FieldProblem
	if len(req.Name) > maxKeyName {
		probs = append(probs, FieldProblem{Pointer: "/name", Message: fmt.Sprintf("must be at most %d bytes", maxKeyName)})
	} else if p := textProblem(req.Name); p != "" {
		probs = append(probs, FieldProblem{Pointer: "/name", Message: p})
	}
	scopes, err := auth.ParseScopes(req.Scopes)
	if err != nil {
		probs = append(probs, FieldProblem{Pointer: "/scopes", Message: err.Error()})
	}
	if len(probs) > 0 {
		return nil, &apiError{kind: probInvalidRequest, detail: ptrOrRoot(probs[0].Pointer) + ": " + probs[0].Message, errors: probs}
	}
	return scopes, nil
}

// createKey makes a key of the caller's project: 201 with its token,
// shown this once.
func (s *Server) createKey(w http.ResponseWriter, r *http.Request) error {
	ks, err := s.keys()
	if err != nil {
		return err
	}
	var req keyRequest
	if err := s.readJSON(w, r, &req); err != nil {
		return err
	}
	scopes, err := req.check()
	if err != nil {
		return err
	}
	p, _ := auth.FromContext(r.Context())
	k, token, err := auth.NewKey(p.ProjectID, req.Name, scopes, p.KeyID)
	if err != nil {
		return err
	}
	if k, err = ks.CreateKey(r.Context(), k); err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/keys/"+k.ID.String())
	writeJSON(w, mediaJSON, http.StatusCreated, newKeyView{keyView: viewKey(k), Token: token})
	return nil
}

// listKeys lists the caller's project's keys, revoked ones included,
// newest first.
func (s *Server) listKeys(w http.ResponseWriter, r *http.Request) error {
	ks, err := s.keys()
	if err != nil {
		return err
	}
	limit, err := parseLimit(r)
	if err != nil {
		return err
	}
	var after *record.Cursor
	if r.URL.Query().Get("cursor") != "" {
		var c resultCursor
		if err := decodeCursor(r, &c); err != nil {
			return err
		}
		after = &record.Cursor{CreatedAt: c.T, ID: c.ID}
	}
	list, err := ks.ListKeys(r.Context(), ProjectFrom(r.Context()), after, limit+1)
	if err != nil {
		return err
	}
	out := page[keyView]{Items: []keyView{}}
	for i, k := range list {
		if i == limit {
			last := list[i-1]
			out.NextCursor = encodeCursor(resultCursor{T: last.CreatedAt, ID: last.ID})
			break
		}
		out.Items = append(out.Items, viewKey(k))
	}
	writeJSON(w, mediaJSON, http.StatusOK, out)
	return nil
}

// revokeKey revokes a key of the caller's project (200 with the key; a
// revoked key stays listed). It stops working on this server at once and
// on the others within the authenticator's cache time (5 s).
func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request) error {
	ks, err := s.keys()
	if err != nil {
		return err
	}
	id, err := pathID(r)
	if err != nil {
		return err
	}
	k, err := ks.RevokeKey(r.Context(), ProjectFrom(r.Context()), id)
	if err != nil {
		return notFoundID("key", id, err)
	}
	if s.cfg.Auth != nil {
		s.cfg.Auth.Forget()
	}
	writeJSON(w, mediaJSON, http.StatusOK, viewKey(k))
	return nil
}

// projectView is the JSON form of a project.
type projectView struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// newProjectView answers POST /v1/projects: the project and its first
// admin key, with the key's token shown this once.
type newProjectView struct {
	Project projectView `json:"project"`
	Key     newKeyView  `json:"key"`
}

// projectRequest is the body of POST /v1/projects.
type projectRequest struct {
	Name string `json:"name"`
}

// createProject creates a project and its first admin key (201). The
// caller's own project gains nothing: its keys still see only their
// project, and the new project is reached with the returned key.
func (s *Server) createProject(w http.ResponseWriter, r *http.Request) error {
	ks, err := s.keys()
	if err != nil {
		return err
	}
	var req projectRequest
	if err := s.readJSON(w, r, &req); err != nil {
		return err
	}
	if !ProjectNamePattern.MatchString(req.Name) {
		return &apiError{kind: probInvalidRequest, detail: "/name: must match " + ProjectNamePattern.String(),
			errors: []FieldProblem{{Pointer: "/name", Message: "must match " + ProjectNamePattern.String()}}}
	}
	caller, _ := auth.FromContext(r.Context())
	k, token, err := auth.NewKey(0, "first admin key", []auth.Scope{auth.ScopeAdmin}, caller.KeyID)
	if err != nil {
		return err
	}
	p, k, err := ks.CreateProjectWithKey(r.Context(), req.Name, k)
	if errors.Is(err, engine.ErrConflict) {
		return &apiError{kind: probConflict, detail: fmt.Sprintf("a project named %q exists", req.Name), cause: err}
	}
	if err != nil {
		return err
	}
	writeJSON(w, mediaJSON, http.StatusCreated, newProjectView{
		Project: projectView{ID: p.ID, Name: p.Name, CreatedAt: p.CreatedAt},
		Key:     newKeyView{keyView: viewKey(k), Token: token}})
	return nil
}

// listProjects lists the projects the caller's key may see: its own.
func (s *Server) listProjects(w http.ResponseWriter, r *http.Request) error {
	ks, err := s.keys()
	if err != nil {
		return err
	}
	p, err := ks.GetProject(r.Context(), ProjectFrom(r.Context()))
	if err != nil {
		return err
	}
	writeJSON(w, mediaJSON, http.StatusOK, page[projectView]{Items: []projectView{{ID: p.ID, Name: p.Name, CreatedAt: p.CreatedAt}}})
	return nil
}

// readJSON reads a small JSON request body strictly into v.
//
// Errors: 415, 413, 400 invalid-json, 422 invalid-request.
func (s *Server) readJSON(w http.ResponseWriter, r *http.Request, v any) error {
	if _, err := mediaType(r, mediaJSON); err != nil {
		return err
	}
	body, err := s.readBody(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		return err
	}
	return decodeStrict(body, v, "")
}
