package ui

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/toolscore/toolscore/internal/auth"
	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
)

// Signing in (with authentication on). A person signs in at /ui/login
// with an API key holding the read scope. The key is checked by the API's
// authenticator and never kept: the server stores a session (the SHA-256
// of a random session token, the key's hash, an expiry of 12 h) and the
// browser a cookie holding only the session token (__Host- prefixed,
// Secure, HttpOnly, SameSite=Lax, so that a link pasted into a chat
// opens signed in). Every request checks the session's key again through
// the authenticator, so a revoked key ends its sessions within the
// authenticator's cache time (5 s); signing out deletes the session.
//
// Both forms that change state are protected against cross-site request
// forgery twice: net/http's CrossOriginProtection refuses a POST the
// browser marks cross-site (Sec-Fetch-Site, else Origin), and each form
// carries a token a cross-site page cannot know. SameSite alone would not
// do for the sign-in form: a forged sign-in needs no cookie of the victim
// (it sends the attacker's key and sets the attacker's session in the
// victim's browser), so the sign-in form's token is checked against a
// pre-session cookie (SameSite=Strict, so a cross-site POST does not even
// carry it); the sign-out form's token is an HMAC of the session token.

const (
	sessionCookie = "__Host-toolscore-session"
	signinCookie  = "__Host-toolscore-signin"
	// sessionTTL is how long a sign-in lasts.
	sessionTTL = 12 * time.Hour
	// signinTTL is how long a sign-in form may wait.
	signinTTL = time.Hour
	// maxFormBytes bounds the body of the sign-in and sign-out forms.
	maxFormBytes = 4 << 10
)

// Authenticator checks API keys: the API's *auth.Authenticator.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (auth.Principal, error)
	AuthenticateHash(ctx context.Context, hash [32]byte) (auth.Principal, error)
}

// offPrincipal is who every request acts for with authentication off, as
// in the API.
var offPrincipal = auth.Principal{ProjectID: record.DefaultProject, ProjectName: "default", Scopes: auth.AllScopes()}

// sessionKey is the context key of a request's sessionView.
type sessionKey struct{}

// sessionView is the signed-in session the layout shows (nil with
// authentication off).
type sessionView struct {
	Project string
	Key     string
	// CSRF is the sign-out form's token.
	CSRF string
}

// project returns the project every read of the request is scoped by:
// the principal the session middleware set.
func project(r *http.Request) int64 {
	p, _ := auth.FromContext(r.Context())
	return p.ProjectID
}

// newToken returns 32 random bytes as base64url.
func newToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// signoutToken is the sign-out form's token for a session token.
func signoutToken(session string) string {
	m := hmac.New(sha256.New, []byte(session))
	m.Write([]byte("toolscore console sign-out"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// protect serves h for a signed-in person with the read scope (anyone
// with authentication off). Without a valid session a page redirects to
// the sign-in form (which returns to it), a progress request is 401.
func (c *Console) protect(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if c.cfg.AuthOff {
			h(w, r.WithContext(auth.NewContext(r.Context(), offPrincipal)))
			return
		}
		p, sv, err := c.signedIn(r)
		switch {
		case err == nil:
			ctx := context.WithValue(auth.NewContext(r.Context(), p), sessionKey{}, sv)
			h(w, r.WithContext(ctx))
		case errors.Is(err, errSignIn):
			if strings.HasSuffix(r.URL.Path, "/progress") || r.Method != http.MethodGet {
				c.writeError(w, r, &pageError{status: http.StatusUnauthorized, title: "Sign in", detail: "Sign in to see this page."})
				return
			}
			http.Redirect(w, r, withQuery("/ui/login", map[string][]string{"next": {r.URL.RequestURI()}}), http.StatusSeeOther)
		default:
			c.writeError(w, r, err)
		}
	}
}

// errSignIn means the request has no valid session.
var errSignIn = errors.New("not signed in")

// signedIn returns the principal of the request's session.
//
// Errors: errSignIn without a session cookie, for an unknown or expired
// session, or a key that is revoked or lost the read scope; the store's
// and authenticator's unavailability.
func (c *Console) signedIn(r *http.Request) (auth.Principal, *sessionView, error) {
	ck, err := r.Cookie(sessionCookie)
	if err != nil || ck.Value == "" || len(ck.Value) > 64 {
		return auth.Principal{}, nil, errSignIn
	}
	keyHash, err := c.store.ConsoleSessionKey(r.Context(), sha256.Sum256([]byte(ck.Value)))
	if errors.Is(err, engine.ErrNotFound) {
		return auth.Principal{}, nil, errSignIn
	}
	if err != nil {
		return auth.Principal{}, nil, err
	}
	if c.cfg.Auth == nil {
		return auth.Principal{}, nil, errSignIn
	}
	p, err := c.cfg.Auth.AuthenticateHash(r.Context(), keyHash)
	if errors.Is(err, auth.ErrInvalidKey) || (err == nil && !p.Has(auth.ScopeRead)) {
		return auth.Principal{}, nil, errSignIn
	}
	if err != nil {
		return auth.Principal{}, nil, err
	}
	return p, &sessionView{Project: p.ProjectName, Key: p.KeyPrefix, CSRF: signoutToken(ck.Value)}, nil
}

// loginView is what login.tmpl shows.
type loginView struct {
	CSRF    string
	Next    string
	Problem string
	// PlainHTTP tells the page was served over plain HTTP to a host that
	// is not this machine, where browsers drop the Secure session cookie.
	PlainHTTP bool
}

// plainHTTP reports whether r came over plain HTTP (no TLS, no proxy
// saying X-Forwarded-Proto: https) for a host other than localhost, where
// a browser keeps no Secure cookie.
func plainHTTP(r *http.Request) bool {
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		return false
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// safeNext returns next when it is a console path, else the overview.
func safeNext(next string) string {
	if strings.HasPrefix(next, "/ui/") && !strings.ContainsAny(next, "\\\r\n") {
		return next
	}
	return "/ui/"
}

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r, []string{"next"}, nil); err != nil {
		return err
	}
	next := safeNext(r.URL.Query().Get("next"))
	if c.cfg.AuthOff {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return nil
	}
	return c.renderLogin(w, r, http.StatusOK, next, "")
}

// renderLogin shows the sign-in form with a fresh form token.
func (c *Console) renderLogin(w http.ResponseWriter, r *http.Request, status int, next, problem string) error {
	token, err := newToken()
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: signinCookie, Value: token, Path: "/", MaxAge: int(signinTTL.Seconds()),
		Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return c.renderStatus(w, r, status, "login.tmpl", "", "sign in", loginView{CSRF: token, Next: next, Problem: problem, PlainHTTP: plainHTTP(r)})
}

// crossOrigin refuses a state-changing request the browser marks as sent
// from another origin.
var crossOrigin = http.NewCrossOriginProtection()

// forbidden is the page of a refused form.
func forbidden(detail string) *pageError {
	return &pageError{status: http.StatusForbidden, title: "Forbidden", detail: detail}
}

func (c *Console) login(w http.ResponseWriter, r *http.Request) error {
	if c.cfg.AuthOff {
		http.Redirect(w, r, "/ui/", http.StatusSeeOther)
		return nil
	}
	if err := crossOrigin.Check(r); err != nil {
		return forbidden("The sign-in form was sent from another site.")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return &pageError{status: http.StatusBadRequest, title: "Bad form", detail: "The sign-in form could not be read."}
	}
	next := safeNext(r.PostForm.Get("next"))
	ck, err := r.Cookie(signinCookie)
	form := r.PostForm.Get("csrf")
	if err != nil || form == "" || subtle.ConstantTimeCompare([]byte(ck.Value), []byte(form)) != 1 {
		return c.renderLogin(w, r, http.StatusForbidden, next, "The sign-in form expired or was not sent from this console; sign in again.")
	}
	key := strings.TrimSpace(r.PostForm.Get("key"))
	if c.cfg.Auth == nil {
		return c.renderLogin(w, r, http.StatusUnauthorized, next, "This server checks no keys: sign-in is unavailable.")
	}
	p, err := c.cfg.Auth.Authenticate(r.Context(), key)
	if errors.Is(err, auth.ErrInvalidKey) {
		return c.renderLogin(w, r, http.StatusUnauthorized, next, "That key is unknown or revoked.")
	}
	if err != nil {
		return err
	}
	if !p.Has(auth.ScopeRead) {
		return c.renderLogin(w, r, http.StatusForbidden, next, "That key lacks the read scope, which the console needs; its scopes: "+
			strings.Join(auth.ScopeNames(p.Scopes), ", ")+".")
	}
	session, err := newToken()
	if err != nil {
		return err
	}
	if err := c.store.CreateConsoleSession(r.Context(), sha256.Sum256([]byte(session)), auth.Hash(key), c.now().Add(sessionTTL)); err != nil {
		return err
	}
	c.log.Info("console sign-in", zap.Int64("project", p.ProjectID), zap.String("key", p.KeyPrefix))
	http.SetCookie(w, &http.Cookie{Name: signinCookie, Value: "", Path: "/", MaxAge: -1, Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: session, Path: "/", MaxAge: int(sessionTTL.Seconds()),
		Secure: true, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request) error {
	if c.cfg.AuthOff {
		http.Redirect(w, r, "/ui/", http.StatusSeeOther)
		return nil
	}
	if err := crossOrigin.Check(r); err != nil {
		return forbidden("The sign-out form was sent from another site.")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return &pageError{status: http.StatusBadRequest, title: "Bad form", detail: "The sign-out form could not be read."}
	}
	ck, err := r.Cookie(sessionCookie)
	if err != nil || ck.Value == "" {
		http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
		return nil
	}
	if subtle.ConstantTimeCompare([]byte(signoutToken(ck.Value)), []byte(r.PostForm.Get("csrf"))) != 1 {
		return forbidden("The sign-out form was not sent from this console.")
	}
	if err := c.store.DeleteConsoleSession(r.Context(), sha256.Sum256([]byte(ck.Value))); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, Secure: true, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
	return nil
}
