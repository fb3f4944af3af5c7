package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/toolscore/toolscore/internal/record"
)

// ErrInvalidKey is returned by Authenticate for a token that is no active
// key: malformed, unknown or revoked (the three are not told apart, to
// the caller or in timing).
var ErrInvalidKey = errors.New("invalid API key")

// KeyStore is what the Authenticator reads; cmd/server passes in
// *store.DB, whose methods of the same names document the exact
// behaviour.
type KeyStore interface {
	// ActiveKeysByLookup returns the active (not revoked) keys whose
	// Lookup is lookup, with their project's name.
	ActiveKeysByLookup(ctx context.Context, lookup []byte) ([]record.APIKey, error)
	// TouchKey sets a key's last use to now.
	TouchKey(ctx context.Context, id uuid.UUID) error
}

// Config configures NewAuthenticator. Zero values take the documented
// defaults.
type Config struct {
	// Store finds keys. Required.
	Store KeyStore
	// TTL is how long a verified key (or a token found to be no key) is
	// remembered by this process: a revoked key stops working on other
	// processes within it. Default 5 s.
	TTL time.Duration
	// Size caps the remembered tokens; default 10,000. Active keys and
	// unknown tokens are remembered apart, Size each, so a flood of
	// unknown tokens evicts only other unknown tokens.
	Size int
	// Now returns the current time; default time.Now.
	Now func() time.Time
	// OnTouchError receives a failure to record a key's last use (the
	// request is still served); nil ignores it.
	OnTouchError func(error)
}

// Authenticator turns bearer tokens into principals. It is safe for
// concurrent use.
type Authenticator struct {
	cfg Config
	// cache remembers active keys' answers, unknown the tokens that are
	// no active key: apart, so unknown tokens cannot evict keys.
	cache, unknown *lru.Cache[[32]byte, cached]
	// reads makes concurrent requests with one token whose answer expired
	// share one store read.
	reads singleflight.Group
}

// cached is a remembered answer for one token hash.
type cached struct {
	p       Principal
	ok      bool
	fetched time.Time
}

// NewAuthenticator returns an Authenticator on cfg.Store.
func NewAuthenticator(cfg Config) *Authenticator {
	if cfg.TTL <= 0 {
		cfg.TTL = 5 * time.Second
	}
	if cfg.Size <= 0 {
		cfg.Size = 10000
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	c, _ := lru.New[[32]byte, cached](cfg.Size) // errors only for size <= 0
	u, _ := lru.New[[32]byte, cached](cfg.Size)
	return &Authenticator{cfg: cfg, cache: c, unknown: u}
}

// Authenticate returns the principal of an active key. A key is read
// from the store at most once per TTL per process (which also records its
// last use); in between, the remembered answer is used.
//
// Errors: ErrInvalidKey; engine.ErrUnavailable (wrapped) when the store
// cannot be read.
func (a *Authenticator) Authenticate(ctx context.Context, token string) (Principal, error) {
	if CheckToken(token) != nil {
		return Principal{}, ErrInvalidKey
	}
	return a.AuthenticateHash(ctx, Hash(token))
}

// AuthenticateHash is Authenticate for a key known by its hash (Hash),
// as the web console's sessions keep it: the same store reads, cache and
// errors.
func (a *Authenticator) AuthenticateHash(ctx context.Context, h [32]byte) (Principal, error) {
	now := a.cfg.Now()
	if c, ok := a.cache.Get(h); ok && now.Sub(c.fetched) < a.cfg.TTL {
		return c.p, nil
	}
	if c, ok := a.unknown.Get(h); ok && now.Sub(c.fetched) < a.cfg.TTL {
		return Principal{}, ErrInvalidKey
	}
	v, err, _ := a.reads.Do(string(h[:]), func() (any, error) {
		// The read is shared: one caller giving up must not fail the
		// others.
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return a.load(lctx, h, now)
	})
	if err != nil {
		return Principal{}, err
	}
	c := v.(cached)
	if !c.ok {
		return Principal{}, ErrInvalidKey
	}
	return c.p, nil
}

// load reads the active key of hash h from the store and remembers the
// answer.
func (a *Authenticator) load(ctx context.Context, h [32]byte, now time.Time) (cached, error) {
	keys, err := a.cfg.Store.ActiveKeysByLookup(ctx, Lookup(h))
	if err != nil {
		return cached{}, fmt.Errorf("authenticate: %w", err)
	}
	var found *record.APIKey
	for i := range keys {
		// Every candidate is compared, so the time taken does not say
		// which one matched.
		if subtle.ConstantTimeCompare(keys[i].Hash, h[:]) == 1 {
			found = &keys[i]
		}
	}
	if found == nil {
		c := cached{fetched: now}
		a.cache.Remove(h)
		a.unknown.Add(h, c)
		return c, nil
	}
	scopes := make([]Scope, len(found.Scopes))
	for i, s := range found.Scopes {
		scopes[i] = Scope(s)
	}
	c := cached{ok: true, fetched: now,
		p: Principal{ProjectID: found.ProjectID, ProjectName: found.ProjectName, KeyID: found.ID, KeyPrefix: found.Prefix, Scopes: scopes}}
	a.unknown.Remove(h)
	a.cache.Add(h, c)
	if err := a.cfg.Store.TouchKey(ctx, found.ID); err != nil && a.cfg.OnTouchError != nil {
		a.cfg.OnTouchError(err)
	}
	return c, nil
}

// Forget drops what this process remembers of every token, so that a key
// revoked here stops working here at once (other processes notice within
// TTL).
func (a *Authenticator) Forget() {
	a.cache.Purge()
	a.unknown.Purge()
}
