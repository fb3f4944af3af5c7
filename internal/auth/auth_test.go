package auth

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
)

// memStore is a KeyStore over a slice, counting reads.
type memStore struct {
	mu      sync.Mutex
	keys    []record.APIKey
	reads   int
	touches int
	err     error
}

func (m *memStore) ActiveKeysByLookup(_ context.Context, lookup []byte) ([]record.APIKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	if m.err != nil {
		return nil, m.err
	}
	var out []record.APIKey
	for _, k := range m.keys {
		if string(k.Lookup) == string(lookup) && k.RevokedAt == nil {
			out = append(out, k)
		}
	}
	return out, nil
}

func (m *memStore) TouchKey(context.Context, uuid.UUID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.touches++
	return nil
}

func TestNewToken(t *testing.T) {
	a, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewToken()
	if a == b || len(a) != 56 || !strings.HasPrefix(a, "tsk_") || CheckToken(a) != nil {
		t.Errorf("NewToken() = %q, %q", a, b)
	}
	if got := DisplayPrefix(a); got != a[:12] {
		t.Errorf("DisplayPrefix = %q, want %q", got, a[:12])
	}
	if got := DisplayPrefix(strings.Repeat("x", 40)); got != "" {
		t.Errorf("DisplayPrefix(operator key) = %q, want empty", got)
	}
}

func TestCheckToken(t *testing.T) {
	for _, tc := range []struct {
		token string
		ok    bool
	}{
		{strings.Repeat("a", 32), true},
		{strings.Repeat("a", 31), false},
		{strings.Repeat("a", 513), false},
		{strings.Repeat("a", 31) + " ", false},
		{strings.Repeat("a", 31) + "é", false},
	} {
		if err := CheckToken(tc.token); (err == nil) != tc.ok {
			t.Errorf("CheckToken(%q) = %v, want ok %v", tc.token, err, tc.ok)
		}
	}
}

func TestParseScopes(t *testing.T) {
	got, err := ParseScopes([]string{"read,ingest", " admin ", "read"})
	if err != nil || !cmp.Equal(got, []Scope{ScopeIngest, ScopeRead, ScopeAdmin}) {
		t.Errorf("ParseScopes = %v, %v", got, err)
	}
	if _, err := ParseScopes([]string{"write"}); err == nil || err.Error() != `unknown scope "write"; valid: ingest, read, contracts:write, regrades, runs, admin` {
		t.Errorf("ParseScopes(write) error = %v", err)
	}
	if _, err := ParseScopes(nil); err == nil {
		t.Error("ParseScopes(nil) = nil error, want one")
	}
}

func TestAuthenticate(t *testing.T) {
	st := &memStore{}
	k, token, err := NewKey(7, "ci", []Scope{ScopeRead, ScopeIngest}, uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	k.ProjectName = "team"
	// A second key whose lookup collides with the first: told apart by
	// the whole hash.
	other := k
	other.ID, other.Hash = uuid.New(), make([]byte, 32)
	st.keys = []record.APIKey{other, k}
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	a := NewAuthenticator(Config{Store: st, Now: func() time.Time { return now }})
	ctx := context.Background()

	p, err := a.Authenticate(ctx, token)
	want := Principal{ProjectID: 7, ProjectName: "team", KeyID: k.ID, KeyPrefix: token[:12], Scopes: []Scope{ScopeRead, ScopeIngest}}
	if err != nil || !cmp.Equal(p, want) {
		t.Fatalf("Authenticate = %+v, %v; want %+v", p, err, want)
	}
	if !p.Has(ScopeRead) || p.Has(ScopeAdmin) {
		t.Errorf("Has: %+v", p)
	}
	// Remembered for the TTL: no second read.
	now = now.Add(4 * time.Second)
	if _, err := a.Authenticate(ctx, token); err != nil || st.reads != 1 || st.touches != 1 {
		t.Errorf("within the TTL: %v, reads %d, touches %d; want 1, 1", err, st.reads, st.touches)
	}
	// Revoked elsewhere: noticed after the TTL.
	st.keys[1].RevokedAt = &now
	now = now.Add(2 * time.Second)
	if _, err := a.Authenticate(ctx, token); !errors.Is(err, ErrInvalidKey) || st.reads != 2 {
		t.Errorf("after the TTL: %v, reads %d; want ErrInvalidKey after a read", err, st.reads)
	}
	// Unknown tokens are remembered too, and malformed ones never read.
	unknown, _ := NewToken()
	for range 3 {
		if _, err := a.Authenticate(ctx, unknown); !errors.Is(err, ErrInvalidKey) {
			t.Fatalf("unknown token: %v", err)
		}
	}
	if _, err := a.Authenticate(ctx, "short"); !errors.Is(err, ErrInvalidKey) || st.reads != 3 {
		t.Errorf("reads = %d, want 3", st.reads)
	}
	// A store failure is not an invalid key.
	st.err = engine.ErrUnavailable
	fresh, _ := NewToken()
	if _, err := a.Authenticate(ctx, fresh); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("store down: %v, want ErrUnavailable", err)
	}
}

func TestForget(t *testing.T) {
	st := &memStore{}
	k, token, _ := NewKey(1, "", []Scope{ScopeRead}, uuid.Nil)
	st.keys = []record.APIKey{k}
	a := NewAuthenticator(Config{Store: st})
	if _, err := a.Authenticate(context.Background(), token); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	st.keys[0].RevokedAt = &now
	a.Forget()
	if _, err := a.Authenticate(context.Background(), token); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("after Forget: %v, want ErrInvalidKey", err)
	}
}

func TestContext(t *testing.T) {
	if _, ok := FromContext(context.Background()); ok {
		t.Error("FromContext(empty) ok")
	}
	p := Principal{ProjectID: 3}
	if got, ok := FromContext(NewContext(context.Background(), p)); !ok || got.ProjectID != 3 {
		t.Errorf("FromContext = %+v, %v", got, ok)
	}
}

// TestUnknownTokensDoNotEvictKeys: a flood of unknown tokens, more than
// the cache holds, leaves an active key remembered (no store read for it
// within the TTL), and each unknown token is itself remembered.
func TestUnknownTokensDoNotEvictKeys(t *testing.T) {
	st := &memStore{}
	k, token, _ := NewKey(1, "", []Scope{ScopeRead}, uuid.Nil)
	st.keys = []record.APIKey{k}
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	a := NewAuthenticator(Config{Store: st, Size: 8, Now: func() time.Time { return now }})
	ctx := context.Background()
	if _, err := a.Authenticate(ctx, token); err != nil {
		t.Fatal(err)
	}
	var last string
	for range 20 {
		last, _ = NewToken()
		if _, err := a.Authenticate(ctx, last); !errors.Is(err, ErrInvalidKey) {
			t.Fatalf("unknown token: %v", err)
		}
	}
	if st.reads != 21 {
		t.Fatalf("reads = %d, want 21 (the key, then each unknown token once)", st.reads)
	}
	if _, err := a.Authenticate(ctx, token); err != nil || st.reads != 21 {
		t.Errorf("the key after the flood: %v, reads %d; want it remembered (21 reads)", err, st.reads)
	}
	if _, err := a.Authenticate(ctx, last); !errors.Is(err, ErrInvalidKey) || st.reads != 21 {
		t.Errorf("the last unknown token again: %v, reads %d; want ErrInvalidKey without a read", err, st.reads)
	}
}
