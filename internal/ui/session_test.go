package ui_test

import (
	"context"
	"crypto/sha256"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/toolscore/toolscore/internal/api"
	"github.com/toolscore/toolscore/internal/auth"
	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/regrade/regradetest"
	"github.com/toolscore/toolscore/internal/store"
	"github.com/toolscore/toolscore/internal/store/storetest"
	"github.com/toolscore/toolscore/internal/ui"
)

// authFixture is the API and the console with authentication on, over
// two projects (default and beta), each holding one stored result, and
// keys: read and ingest-only of default, read of beta.
type authFixture struct {
	url                   string
	db                    *store.DB
	readA, ingestA, readB string
	readAID               uuid.UUID
	resultA, resultB      string
	// console is the console's handler, for requests with another Host.
	console http.Handler
}

func newAuthFixture(t *testing.T) *authFixture {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{URL: storetest.NewDatabase(t), Logger: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	beta, err := db.CreateProject(ctx, "beta")
	if err != nil {
		t.Fatal(err)
	}
	f := &authFixture{db: db}
	key := func(project int64, scopes ...auth.Scope) (string, uuid.UUID) {
		k, token, err := auth.NewKey(project, "test", scopes, uuid.Nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateKey(ctx, k); err != nil {
			t.Fatal(err)
		}
		return token, k.ID
	}
	f.readA, f.readAID = key(record.DefaultProject, auth.ScopeRead)
	f.ingestA, _ = key(record.DefaultProject, auth.ScopeIngest)
	f.readB, _ = key(beta.ID, auth.ScopeRead)
	// One result per project, graded against an inline contract.
	body := readFile(t, "../../examples/contracts/contract.json")
	c, err := engine.ParseContract(body)
	if err != nil {
		t.Fatal(err)
	}
	ref := record.ContractRef{SHA256: strings.Repeat("0", 64), Kind: record.KindContract}
	answer := "done"
	tr := engine.Trace{FinalAnswer: &answer, Calls: []engine.ToolCall{{Tool: "search_flights", Args: jsondoc.MustFromAny(map[string]any{"destination": "LIS"})}}}
	for _, p := range []struct {
		project int64
		dst     *string
	}{{record.DefaultProject, &f.resultA}, {beta.ID, &f.resultB}} {
		r := regradetest.Result(t, ref, c, tr, regradetest.Options{SafetyGate: true}, time.Now())
		r.ProjectID = p.project
		r.TaskID = "task-of-" + map[int64]string{record.DefaultProject: "default", beta.ID: "beta"}[p.project]
		if err := db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{r}}); err != nil {
			t.Fatal(err)
		}
		*p.dst = r.ID.String()
	}
	authn := auth.NewAuthenticator(auth.Config{Store: db, TTL: 10 * time.Millisecond})
	srv := api.New(api.Config{Store: db, Logger: zap.NewNop(), Auth: authn})
	t.Cleanup(srv.Close)
	f.console = ui.New(ui.Config{Store: db, Auth: authn, Logger: zap.NewNop()}).Handler()
	mux := http.NewServeMux()
	mux.Handle("/ui/", f.console)
	mux.Handle("/", srv.Handler())
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	f.url = hs.URL
	return f
}

// do sends a request without following redirects; cookies are sent as
// given (Go's cookie jar would not send Secure cookies over plain HTTP).
func (f *authFixture) do(t *testing.T, method, path string, form url.Values, cookies []*http.Cookie, header http.Header) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, f.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	for _, c := range cookies {
		req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func cookie(resp *http.Response, name string) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signinForm opens the sign-in form and returns its token and cookie.
func (f *authFixture) signinForm(t *testing.T) (string, *http.Cookie) {
	t.Helper()
	resp, body := f.do(t, http.MethodGet, "/ui/login", nil, nil, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /ui/login: %d", resp.StatusCode)
	}
	ck := cookie(resp, "__Host-toolscore-signin")
	m := csrfField.FindStringSubmatch(body)
	if ck == nil || m == nil || ck.Value != m[1] {
		t.Fatalf("sign-in form: cookie %v, field %v", ck, m)
	}
	if !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" || ck.Domain != "" {
		t.Errorf("sign-in cookie %+v", ck)
	}
	return m[1], ck
}

// signIn signs in with key and returns the session cookie.
func (f *authFixture) signIn(t *testing.T, key, next string) *http.Cookie {
	t.Helper()
	token, ck := f.signinForm(t)
	resp, body := f.do(t, http.MethodPost, "/ui/login", url.Values{"csrf": {token}, "key": {key}, "next": {next}}, []*http.Cookie{ck}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: %d %s", resp.StatusCode, text([]byte(body)))
	}
	s := cookie(resp, "__Host-toolscore-session")
	if s == nil {
		t.Fatal("no session cookie")
	}
	return s
}

func TestSignIn(t *testing.T) {
	f := newAuthFixture(t)
	ctx := context.Background()

	// Without a session, pages send to the sign-in form and come back.
	resp, _ := f.do(t, http.MethodGet, "/ui/evaluations?task_id=x", nil, nil, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/login?next=%2Fui%2Fevaluations%3Ftask_id%3Dx" {
		t.Errorf("without a session: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, _ := f.do(t, http.MethodGet, "/ui/regrades/"+uuid.NewString()+"/progress", nil, nil, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("progress without a session: %d", resp.StatusCode)
	}
	if resp, _ := f.do(t, http.MethodGet, "/ui/static/console.css", nil, nil, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("static files without a session: %d", resp.StatusCode)
	}

	// Over plain HTTP to another host the form warns that the Secure
	// cookie will not be kept; on localhost or behind TLS it does not.
	for host, warn := range map[string]bool{"console.example": true, "10.0.0.5:8080": true, "localhost:8080": false, "127.0.0.1": false, "[::1]:8080": false} {
		req := httptest.NewRequest(http.MethodGet, "/ui/login", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		f.console.ServeHTTP(rec, req)
		if got := strings.Contains(rec.Body.String(), `id="plain-http"`); got != warn {
			t.Errorf("host %s: plain-HTTP warning %v, want %v", host, got, warn)
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/ui/login", nil)
	req.Host, req.Header["X-Forwarded-Proto"] = "console.example", []string{"https"}
	rec := httptest.NewRecorder()
	f.console.ServeHTTP(rec, req)
	if strings.Contains(rec.Body.String(), `id="plain-http"`) {
		t.Error("behind a TLS proxy: a plain-HTTP warning")
	}

	// The forged and the refused sign-ins set no session.
	token, ck := f.signinForm(t)
	_, other := f.signinForm(t)
	forms := []struct {
		name    string
		form    url.Values
		cookies []*http.Cookie
		header  http.Header
		status  int
		problem string
	}{
		{"no form token", url.Values{"key": {f.readA}}, []*http.Cookie{ck}, nil, 403, "The sign-in form expired or was not sent from this console"},
		{"no cookie (a cross-site post does not carry it)", url.Values{"csrf": {token}, "key": {f.readA}}, nil, nil, 403, "The sign-in form expired"},
		{"another form's token", url.Values{"csrf": {token}, "key": {f.readA}}, []*http.Cookie{other}, nil, 403, "The sign-in form expired"},
		{"cross-site fetch", url.Values{"csrf": {token}, "key": {f.readA}}, []*http.Cookie{ck}, http.Header{"Sec-Fetch-Site": {"cross-site"}}, 403, "The sign-in form was sent from another site."},
		{"foreign origin", url.Values{"csrf": {token}, "key": {f.readA}}, []*http.Cookie{ck}, http.Header{"Origin": {"https://evil.example"}}, 403, "The sign-in form was sent from another site."},
		{"unknown key", url.Values{"csrf": {token}, "key": {"tsk_" + strings.Repeat("a", 52)}}, []*http.Cookie{ck}, nil, 401, "That key is unknown or revoked."},
		{"no read scope", url.Values{"csrf": {token}, "key": {f.ingestA}}, []*http.Cookie{ck}, nil, 403, "That key lacks the read scope, which the console needs; its scopes: ingest."},
	}
	for _, c := range forms {
		resp, body := f.do(t, http.MethodPost, "/ui/login", c.form, c.cookies, c.header)
		if resp.StatusCode != c.status || !strings.Contains(text([]byte(body)), c.problem) {
			t.Errorf("%s: %d, want %d with %q: %s", c.name, resp.StatusCode, c.status, c.problem, text([]byte(body)))
		}
		if cookie(resp, "__Host-toolscore-session") != nil {
			t.Errorf("%s: a session cookie was set", c.name)
		}
	}
	var sessions int
	if err := f.db.Pool().QueryRow(ctx, `SELECT count(*) FROM console_sessions`).Scan(&sessions); err != nil || sessions != 0 {
		t.Errorf("%d sessions after refused sign-ins (%v)", sessions, err)
	}

	// A sign-in: the cookie holds a session token, not the key; the
	// server keeps its hash and the key's hash.
	s := f.signIn(t, f.readA, "/ui/evaluations/"+f.resultA)
	if !s.Secure || !s.HttpOnly || s.SameSite != http.SameSiteLaxMode || s.Path != "/" || s.Domain != "" || s.MaxAge != 12*3600 {
		t.Errorf("session cookie %+v", s)
	}
	if strings.Contains(s.Value, f.readA) || strings.Contains(f.readA, s.Value) {
		t.Error("the session cookie holds the key")
	}
	var tokenHash, keyHash []byte
	if err := f.db.Pool().QueryRow(ctx, `SELECT token_hash, key_hash FROM console_sessions`).Scan(&tokenHash, &keyHash); err != nil {
		t.Fatal(err)
	}
	if th, kh := sha256.Sum256([]byte(s.Value)), auth.Hash(f.readA); string(tokenHash) != string(th[:]) || string(keyHash) != string(kh[:]) {
		t.Error("the stored session is not the hashes of the session token and the key")
	}
	resp, body := f.do(t, http.MethodGet, "/ui/", nil, []*http.Cookie{s}, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(text([]byte(body)), "project default · key "+auth.DisplayPrefix(f.readA)) {
		t.Errorf("signed in: %d %s", resp.StatusCode, text([]byte(body)))
	}
	// The session opens the console only: the API wants a key.
	if resp, _ := f.do(t, http.MethodGet, "/v1/evaluations", nil, []*http.Cookie{s}, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the API with the console's cookie: %d", resp.StatusCode)
	}
	// A sign-in returns only to console pages.
	token, ck = f.signinForm(t)
	resp, _ = f.do(t, http.MethodPost, "/ui/login", url.Values{"csrf": {token}, "key": {f.readA}, "next": {"//evil.example/ui/"}}, []*http.Cookie{ck}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/" {
		t.Errorf("next=//evil.example: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}

	// Signing out needs the form's token and a same-site post.
	csrf := csrfField.FindStringSubmatch(body)
	if csrf == nil {
		t.Fatal("no sign-out form")
	}
	for name, c := range map[string]struct {
		form   url.Values
		header http.Header
	}{
		"no token":   {url.Values{}, nil},
		"bad token":  {url.Values{"csrf": {"x" + csrf[1]}}, nil},
		"cross-site": {url.Values{"csrf": {csrf[1]}}, http.Header{"Sec-Fetch-Site": {"cross-site"}}},
	} {
		if resp, _ := f.do(t, http.MethodPost, "/ui/logout", c.form, []*http.Cookie{s}, c.header); resp.StatusCode != http.StatusForbidden {
			t.Errorf("sign-out, %s: %d", name, resp.StatusCode)
		}
	}
	if resp, _ := f.do(t, http.MethodGet, "/ui/", nil, []*http.Cookie{s}, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("the session ended without a valid sign-out: %d", resp.StatusCode)
	}
	resp, _ = f.do(t, http.MethodPost, "/ui/logout", url.Values{"csrf": {csrf[1]}}, []*http.Cookie{s}, http.Header{"Sec-Fetch-Site": {"same-origin"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/login" {
		t.Errorf("sign-out: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if c := cookie(resp, "__Host-toolscore-session"); c == nil || c.MaxAge >= 0 {
		t.Errorf("sign-out does not clear the cookie: %+v", c)
	}
	if resp, _ := f.do(t, http.MethodGet, "/ui/", nil, []*http.Cookie{s}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after sign-out: %d", resp.StatusCode)
	}

	// Revoking the key ends its sessions (within the authenticator's
	// cache time, here 10 ms).
	s = f.signIn(t, f.readA, "/ui/")
	if resp, _ := f.do(t, http.MethodGet, "/ui/", nil, []*http.Cookie{s}, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("signed in again: %d", resp.StatusCode)
	}
	if _, err := f.db.RevokeKeyByID(ctx, f.readAID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // past the authenticator's cache time
	if resp, _ := f.do(t, http.MethodGet, "/ui/", nil, []*http.Cookie{s}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("with a revoked key: %d", resp.StatusCode)
	}
}

// TestProjectScoping checks that a person signed in with one project's
// key sees that project's results only, and another's ids are 404.
func TestProjectScoping(t *testing.T) {
	f := newAuthFixture(t)
	for _, c := range []struct {
		key, own, other, ownTask, otherTask, project string
	}{
		{f.readA, f.resultA, f.resultB, "task-of-default", "task-of-beta", "default"},
		{f.readB, f.resultB, f.resultA, "task-of-beta", "task-of-default", "beta"},
	} {
		s := f.signIn(t, c.key, "/ui/")
		cookies := []*http.Cookie{s}
		for path, want := range map[string]int{
			"/ui/evaluations/" + c.own:   200,
			"/ui/evaluations/" + c.other: 404,
		} {
			if resp, _ := f.do(t, http.MethodGet, path, nil, cookies, nil); resp.StatusCode != want {
				t.Errorf("%s: %s: %d, want %d", c.project, path, resp.StatusCode, want)
			}
		}
		for _, path := range []string{"/ui/", "/ui/evaluations", "/ui/evaluations?latest=true", "/ui/contracts", "/ui/regrades", "/ui/runs"} {
			resp, body := f.do(t, http.MethodGet, path, nil, cookies, nil)
			if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("%s: %s: %d", c.project, path, resp.StatusCode)
			}
			if strings.Contains(body, c.other) || strings.Contains(body, c.otherTask) {
				t.Errorf("%s: %s shows the other project's result", c.project, path)
			}
			if !strings.Contains(text([]byte(body)), "project "+c.project) {
				t.Errorf("%s: %s does not name the project", c.project, path)
			}
		}
		_, body := f.do(t, http.MethodGet, "/ui/evaluations", nil, cookies, nil)
		if !strings.Contains(body, c.own) || !strings.Contains(body, c.ownTask) {
			t.Errorf("%s: the list lacks its own result", c.project)
		}
		_, body = f.do(t, http.MethodGet, "/ui/", nil, cookies, nil)
		if !strings.Contains(text([]byte(body)), "evaluations 1") {
			t.Errorf("%s: the overview does not count its one result: %s", c.project, text([]byte(body)))
		}
	}
}
