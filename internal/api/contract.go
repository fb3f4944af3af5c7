package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/toolscore/toolscore/internal/auth"
	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/resultjson"
)

// namePattern is what a registry contract name must match; '@' separates
// the version in references, so names cannot hold it.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// latestTTL is how long "name" (without a version) keeps resolving to the
// latest version this process saw. Versions themselves are immutable and
// cached without expiry.
const latestTTL = 2 * time.Second

// parsedContract is a parsed contract and its identity.
type parsedContract struct {
	c        *engine.Contract
	ref      record.ContractRef
	expected resultjson.ExpectedCache // its expected calls' JSON per combination
	// regexSizes are its $regex patterns' sizes per tool (nil for none),
	// for the bound on matching them (checkRegexWork).
	regexSizes engine.RegexSizes
	// slashU reports that an inline contract's text holds `\u`
	// (jsondoc.Doc.HoldsSlashU; false for a registry contract), for
	// evalInput.mayHoldNUL.
	slashU bool
	// nul reports that an inline contract's text holds a \u0000 escape
	// (false for a registry contract, which Postgres could not have
	// stored), for storedNULProblem to name the contract as the source
	// of a NUL in the result's checks or issues.
	nul bool
}

// contractCache keeps parsed contracts, so that the many evaluations that
// use one contract parse and validate it once: inline ones keyed by a
// 64-bit hash (hash/maphash) of their raw bytes and compared byte for byte
// on a hit, registry ones by project, name and version. Both kinds share
// one budget in bytes (byteCache): an entry costs what parsing it
// allocated plus its raw bytes once per alternatives combination (the
// expected calls' JSON is cached per combination), so a flood of large
// inline contracts evicts older entries instead of growing the heap.
// Contracts are read-only once parsed, so entries are shared by
// concurrent evaluations. Safe for concurrent use.
type contractCache struct {
	store   ContractStore
	seed    maphash.Seed
	entries *byteCache
	// latest maps project/name to its latest version number, for
	// references without a version (up to latestTTL old).
	latest *lru.Cache[string, latestEntry]
	// parses makes concurrent misses of one registry version share one
	// parse.
	parses singleflight.Group
	// starts finds cached inline contracts in request bodies
	// (inlineAt).
	starts inlineStarts
}

type latestEntry struct {
	version int
	fetched time.Time
}

// cacheKey identifies a cache entry: an inline contract's hash, or a
// registry version's "project/name@version".
type cacheKey struct {
	hash uint64
	ref  string
}

func newContractCache(store ContractStore, maxBytes int64) *contractCache {
	latest, _ := lru.New[string, latestEntry](4096) // errors only for size <= 0
	return &contractCache{store: store, seed: maphash.MakeSeed(), entries: newByteCache(maxBytes), latest: latest}
}

// parseMeasured parses a contract and returns it with its cost: the bytes
// allocated while it was parsed (an upper bound of what it keeps; other
// goroutines' allocations meanwhile only raise it) and raw once per
// combination plus once for the copy an inline entry keeps.
func parseMeasured(raw []byte) (*engine.Contract, int64, error) {
	c, _, cost, err := parseMeasuredDoc(raw)
	return c, cost, err
}

// parseMeasuredDoc is parseMeasured that also returns the document it read
// raw into (its own copy of raw, which the contract keeps: never the
// request's tape, which holds the trace too), for the canonical hash.
func parseMeasuredDoc(raw []byte) (*engine.Contract, jsondoc.Value, int64, error) {
	before := allocatedBytes()
	doc, err := jsondoc.Parse(raw)
	if err != nil {
		return nil, jsondoc.Value{}, 0, err
	}
	c, err := engine.ParseContractValue(doc)
	if err != nil {
		return nil, jsondoc.Value{}, 0, err
	}
	return c, doc, int64(allocatedBytes()-before) + int64(len(raw))*int64(1+c.Combinations()), nil
}

// parseInline parses an inline contract or gold list (CPU only; call it on
// a worker): raw is its text in the request, looked up by hash and, on a
// miss, read once into its own document, which gives both the contract
// and its canonical hash. Errors are the engine's, with pointers relative
// to raw.
func (cc *contractCache) parseInline(raw []byte) (*parsedContract, error) {
	key := cacheKey{hash: maphash.Bytes(cc.seed, raw)}
	if pc, ok := cc.entries.get(key, raw); ok {
		return pc, nil
	}
	c, doc, cost, err := parseMeasuredDoc(raw)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(doc.AppendCanonical(make([]byte, 0, len(raw))))
	pc := &parsedContract{c: c, ref: record.ContractRef{SHA256: hex.EncodeToString(sum[:]), Kind: kindOf(c)}, regexSizes: c.RegexSizes(),
		slashU: doc.Doc().HoldsSlashU()}
	pc.nul = pc.slashU && hasNUL(raw)
	cc.entries.add(key, bytes.Clone(raw), pc, cost)
	if k := doc.Kind(); (k == jsondoc.Object || k == jsondoc.Array) && depth(doc) <= jsondoc.MaxDepth-2 {
		// Inside a request the contract is one level deeper: one nested
		// MaxDepth-1 levels would not read there.
		cc.starts.add(cc.seed, raw)
	}
	return pc, nil
}

// inlinePrefix is how many leading bytes of an inline contract
// inlineStarts indexes it by; shorter contracts are not indexed.
const inlinePrefix = 32

// inlineStarts indexes the inline contracts parseInline cached by the hash
// of their first inlinePrefix bytes: for each, the lengths of the
// contracts that start so (the most recent first, at most
// maxInlineLengths). An entry may outlive its contract in the cache; a
// look-up then misses. Safe for concurrent use.
type inlineStarts struct {
	mu      sync.RWMutex
	lengths map[uint64][]int
}

// maxInlineLengths and maxInlineStarts bound inlineStarts: lengths per
// prefix, and prefixes (past it the index starts again empty). A flood
// of distinct inline contracts costs at most about 1 MB here; a contract
// the index has lost is read with its body, as one the cache lacks.
const (
	maxInlineLengths = 4
	maxInlineStarts  = 1 << 13
)

func (x *inlineStarts) add(seed maphash.Seed, raw []byte) {
	if len(raw) < inlinePrefix {
		return
	}
	h := maphash.Bytes(seed, raw[:inlinePrefix])
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.lengths == nil || len(x.lengths) >= maxInlineStarts {
		x.lengths = make(map[uint64][]int)
	}
	old := x.lengths[h]
	ls := make([]int, 0, maxInlineLengths)
	ls = append(ls, len(raw))
	for _, n := range old {
		if n != len(raw) && len(ls) < maxInlineLengths {
			ls = append(ls, n)
		}
	}
	x.lengths[h] = ls
}

// inlineAt returns the cached inline contract whose text starts body at
// offset i (body[i:i+len(raw)] is raw, a JSON object or array that read
// as a contract or gold list), and false when none does. It decodes
// nothing: a cached contract is valid JSON, so a value of the body that
// starts with its text is that contract.
func (cc *contractCache) inlineAt(body []byte, i int) (raw []byte, ok bool) {
	if i < 0 || len(body)-i < inlinePrefix {
		return nil, false
	}
	h := maphash.Bytes(cc.seed, body[i:i+inlinePrefix])
	cc.starts.mu.RLock()
	ls := cc.starts.lengths[h]
	cc.starts.mu.RUnlock()
	closing := byte('}')
	if body[i] == '[' {
		closing = ']'
	}
	for _, n := range ls {
		if n > len(body)-i || body[i+n-1] != closing {
			continue
		}
		cand := body[i : i+n]
		if raw, ok := cc.entries.raw(cacheKey{hash: maphash.Bytes(cc.seed, cand)}, cand); ok {
			return raw, true
		}
	}
	return nil, false
}

// depth returns how many arrays and objects v nests (0 for a scalar).
func depth(v jsondoc.Value) int {
	d := 0
	switch v.Kind() {
	case jsondoc.Object:
		for _, m := range v.Members() {
			d = max(d, depth(m))
		}
	case jsondoc.Array:
		for _, e := range v.Elems() {
			d = max(d, depth(e))
		}
	default:
		return 0
	}
	return d + 1
}

func kindOf(c *engine.Contract) record.ContractKind {
	if c.Gold {
		return record.KindGold
	}
	return record.KindContract
}

// resolve looks up a registry contract; version 0 means the latest. It
// returns the parsed contract when it is cached, else the stored version,
// for parseVersion to parse on a worker (resolve does I/O, on the request
// goroutine, and no parsing).
//
// Errors: engine.ErrNotFound, engine.ErrUnavailable.
func (cc *contractCache) resolve(ctx context.Context, project int64, name string, version int) (*parsedContract, *record.ContractVersion, error) {
	latestKey := strconv.FormatInt(project, 10) + "/" + name
	if version == 0 {
		if e, ok := cc.latest.Get(latestKey); ok && time.Since(e.fetched) < latestTTL {
			if pc, ok := cc.entries.get(versionKey(project, name, e.version), nil); ok {
				return pc, nil, nil
			}
		}
	} else if pc, ok := cc.entries.get(versionKey(project, name, version), nil); ok {
		return pc, nil, nil
	}
	cv, err := cc.store.GetContractVersion(ctx, project, name, version)
	if err != nil {
		return nil, nil, err
	}
	if version == 0 {
		cc.latest.Add(latestKey, latestEntry{version: cv.Version, fetched: time.Now()})
	}
	if pc, ok := cc.entries.get(versionKey(project, name, cv.Version), nil); ok {
		return pc, nil, nil
	}
	return nil, &cv, nil
}

// versionKey is the cache key of a registry version.
func versionKey(project int64, name string, version int) cacheKey {
	return cacheKey{ref: strconv.FormatInt(project, 10) + "/" + name + "@" + strconv.Itoa(version)}
}

// parseVersion parses a registry version resolve returned (CPU only; call
// it on a worker) and caches it; concurrent calls for one version share
// one parse.
//
// Errors: the stored body no longer parses.
func (cc *contractCache) parseVersion(project int64, cv *record.ContractVersion) (*parsedContract, error) {
	key := versionKey(project, cv.Name, cv.Version)
	v, err, _ := cc.parses.Do(key.ref, func() (any, error) {
		if pc, ok := cc.entries.get(key, nil); ok {
			return pc, nil
		}
		c, cost, err := parseMeasured(cv.Body)
		if err != nil {
			return nil, fmt.Errorf("stored contract %s@%d no longer parses: %w", cv.Name, cv.Version, err)
		}
		pc := &parsedContract{c: c, ref: record.ContractRef{Name: cv.Name, Version: cv.Version, SHA256: cv.SHA256, Kind: cv.Kind}, regexSizes: c.RegexSizes()}
		cc.entries.add(key, nil, pc, cost)
		return pc, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*parsedContract), nil
}

// parseRef splits a registry reference "name", "name@latest" or
// "name@N"; version 0 means the latest.
func parseRef(ref string) (name string, version int, err error) {
	name, v, hasVersion := strings.Cut(ref, "@")
	if !namePattern.MatchString(name) {
		return "", 0, fmt.Errorf("%q is not a contract reference: want name or name@version, the name matching %s", ref, namePattern)
	}
	if !hasVersion || v == "latest" {
		return name, 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return "", 0, fmt.Errorf("%q has an invalid version %q: want a number from 1, or latest", ref, v)
	}
	return name, n, nil
}

func (s *Server) contractRoutes(r chi.Router) {
	r.Post("/validate", s.handle(s.validateContract))
	r.Get("/contracts", s.handle(s.listContracts))
	r.Post("/contracts/{name}/versions", s.handle(s.createContractVersion))
	r.Get("/contracts/{name}/versions", s.handle(s.listContractVersions))
	r.Get("/contracts/{name}/versions/{version}", s.handle(s.getContractVersion))
}

// contractVersionView is the JSON form of a registry version.
type contractVersionView struct {
	Name         string    `json:"name"`
	Version      int       `json:"version"`
	SHA256       string    `json:"sha256"`
	Kind         string    `json:"kind"`
	Description  string    `json:"description"`
	Combinations int       `json:"combinations"`
	CreatedAt    time.Time `json:"created_at"`
	// PublishedBy is the id of the API key that published the version
	// (omitted when none did).
	PublishedBy string          `json:"published_by,omitempty"`
	Contract    json.RawMessage `json:"contract,omitempty"`
}

// viewContractVersion is the JSON form of cv, its body shown with the
// secrets written in it hidden (engine.RedactDocument; sha256 stays the
// stored body's).
//
// Errors: the scan is incomplete (the request ended).
func (s *Server) viewContractVersion(ctx context.Context, cv record.ContractVersion) (contractVersionView, error) {
	v := contractVersionView{Name: cv.Name, Version: cv.Version, SHA256: cv.SHA256, Kind: string(cv.Kind),
		Description: cv.Description, Combinations: cv.Combinations, CreatedAt: cv.CreatedAt}
	if cv.PublishedBy != uuid.Nil {
		v.PublishedBy = cv.PublishedBy.String()
	}
	if cv.Body != nil {
		body, err := engine.RedactDocument(ctx, cv.Body, s.cfg.SecretScanner)
		if err != nil {
			return v, err
		}
		v.Contract = body
	}
	return v, nil
}

// readContract reads and validates a contract or gold list request body.
func (s *Server) readContract(w http.ResponseWriter, r *http.Request) (*readContractResult, error) {
	if _, err := mediaType(r, mediaJSON); err != nil {
		return nil, err
	}
	body, err := s.readBody(w, r, s.cfg.MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	// Parsing and canonicalizing are the expensive part: they run on the
	// worker pool, like evaluations (429 when it is full, the evaluation
	// timeout applies).
	out := &readContractResult{body: body}
	err = s.poolFor(len(body)).Do(r.Context(), func(context.Context) error {
		c, err := engine.ParseContract(body)
		if err != nil {
			if withinLimits(body, err) {
				return limitError(probInvalidContract, "", err) // a limit of the JSON layer
			}
			return err
		}
		out.c = c
		out.canon, out.sum, err = jsondoc.Canonical(body)
		return err
	})
	if err != nil {
		s.countError(err)
		return nil, err
	}
	return out, nil
}

// readContractResult is a contract request body read and parsed: its
// bytes, parse, canonical form and that form's sha256.
type readContractResult struct {
	body, canon []byte
	sum         string
	c           *engine.Contract
}

// validationView is the answer of POST /v1/validate.
type validationView struct {
	Valid          bool   `json:"valid"`
	Kind           string `json:"kind"`
	SHA256         string `json:"sha256"`
	Description    string `json:"description"`
	Combinations   int    `json:"combinations"`
	RequiredCount  int    `json:"required_count"`
	OptionalCount  int    `json:"optional_count"`
	ForbiddenCount int    `json:"forbidden_count"`
}

// validateContract checks a contract or gold list as `toolscore doctor`
// does, without storing it: 200 with its counts, or a 4xx problem.
func (s *Server) validateContract(w http.ResponseWriter, r *http.Request) error {
	rc, err := s.readContract(w, r)
	if err != nil {
		return err
	}
	c, sum := rc.c, rc.sum
	desc := c.Description
	if err := redactTexts(r.Context(), s.cfg.SecretScanner, []*string{&desc}, nil); err != nil {
		return err
	}
	writeJSON(w, mediaJSON, http.StatusOK, validationView{Valid: true, Kind: string(kindOf(c)), SHA256: sum,
		Description: desc, Combinations: c.Combinations(), RequiredCount: c.RequiredCount(),
		OptionalCount: len(c.Optional), ForbiddenCount: len(c.Forbidden)})
	return nil
}

// createContractVersion stores a new version of a named contract: 201 with
// the new version, or 200 with the existing one when the canonical body is
// identical to an existing version's.
func (s *Server) createContractVersion(w http.ResponseWriter, r *http.Request) error {
	name := chi.URLParam(r, "name")
	if !namePattern.MatchString(name) {
		return &apiError{kind: probInvalidParameter, detail: fmt.Sprintf("contract name %q must match %s", name, namePattern),
			errors: []FieldProblem{{Parameter: "name", Message: "must match " + namePattern.String()}}}
	}
	rc, err := s.readContract(w, r)
	if err != nil {
		return err
	}
	if err := nulError("", rc.body); err != nil {
		return err // Postgres text and jsonb cannot hold it
	}
	c, canon, sum := rc.c, rc.canon, rc.sum
	// The description is stored and listed redacted; the body is kept as
	// published (it grades) and shown redacted.
	desc := c.Description
	if err := redactTexts(r.Context(), s.cfg.SecretScanner, []*string{&desc}, nil); err != nil {
		return err
	}
	p, _ := auth.FromContext(r.Context())
	cv, created, err := s.store.CreateContractVersion(r.Context(), record.ContractVersion{
		ProjectID: p.ProjectID, Name: name, SHA256: sum, Kind: kindOf(c),
		Description: desc, Combinations: c.Combinations(), Body: canon, PublishedBy: p.KeyID,
	})
	if err != nil {
		return err
	}
	w.Header().Set("Location", fmt.Sprintf("/v1/contracts/%s/versions/%d", name, cv.Version))
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	v, err := s.viewContractVersion(r.Context(), cv)
	if err != nil {
		return err
	}
	writeJSON(w, mediaJSON, status, v)
	return nil
}

func (s *Server) getContractVersion(w http.ResponseWriter, r *http.Request) error {
	name, v := chi.URLParam(r, "name"), chi.URLParam(r, "version")
	if !namePattern.MatchString(name) {
		return newError(probNotFound, "no contract named %q", name)
	}
	version := 0
	if v != "latest" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return &apiError{kind: probInvalidParameter, detail: fmt.Sprintf("version %q must be a number from 1, or latest", v),
				errors: []FieldProblem{{Parameter: "version", Message: "must be a number from 1, or latest"}}}
		}
		version = n
	}
	cv, err := s.store.GetContractVersion(r.Context(), ProjectFrom(r.Context()), name, version)
	if errors.Is(err, engine.ErrNotFound) {
		return newError(probNotFound, "contract %s has no version %s", name, v)
	}
	if err != nil {
		return err
	}
	view, err := s.viewContractVersion(r.Context(), cv)
	if err != nil {
		return err
	}
	writeJSON(w, mediaJSON, http.StatusOK, view)
	return nil
}

// page is a list answer: items and the cursor of the next page ("" on the
// last page).
type page[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"next_cursor,omitempty"`
}

func (s *Server) listContractVersions(w http.ResponseWriter, r *http.Request) error {
	name := chi.URLParam(r, "name")
	if !namePattern.MatchString(name) {
		return newError(probNotFound, "no contract named %q", name)
	}
	limit, err := parseLimit(r)
	if err != nil {
		return err
	}
	var after int
	if err := decodeCursor(r, &after); err != nil {
		return err
	}
	vs, err := s.store.ListContractVersions(r.Context(), ProjectFrom(r.Context()), name, after, limit+1)
	if errors.Is(err, engine.ErrNotFound) {
		return newError(probNotFound, "no contract named %s", name)
	}
	if err != nil {
		return err
	}
	return writeVersionPage(r.Context(), w, vs, limit, func(cv record.ContractVersion) int { return cv.Version }, s.viewContractVersion)
}

// writeVersionPage answers one keyset page of versions: vs are at most
// limit+1 versions in ascending order (one more than the page, read to
// know whether another page follows), each shown by view; the cursor is
// the last shown version.
func writeVersionPage[T, V any](ctx context.Context, w http.ResponseWriter, vs []T, limit int, version func(T) int, view func(context.Context, T) (V, error)) error {
	out := page[V]{Items: []V{}}
	for i, x := range vs {
		if i == limit {
			out.NextCursor = encodeCursor(version(vs[i-1]))
			break
		}
		v, err := view(ctx, x)
		if err != nil {
			return err
		}
		out.Items = append(out.Items, v)
	}
	writeJSON(w, mediaJSON, http.StatusOK, out)
	return nil
}

// contractSummaryView is one entry of GET /v1/contracts.
type contractSummaryView struct {
	Name          string    `json:"name"`
	LatestVersion int       `json:"latest_version"`
	Versions      int       `json:"versions"`
	Kind          string    `json:"kind"`
	Description   string    `json:"description"`
	UpdatedAt     time.Time `json:"updated_at"`
}

func (s *Server) listContracts(w http.ResponseWriter, r *http.Request) error {
	limit, err := parseLimit(r)
	if err != nil {
		return err
	}
	var after string
	if err := decodeCursor(r, &after); err != nil {
		return err
	}
	cs, err := s.store.ListContracts(r.Context(), ProjectFrom(r.Context()), after, limit+1)
	if err != nil {
		return err
	}
	out := page[contractSummaryView]{Items: []contractSummaryView{}}
	for i, c := range cs {
		if i == limit {
			out.NextCursor = encodeCursor(cs[i-1].Name)
			break
		}
		out.Items = append(out.Items, contractSummaryView{Name: c.Name, LatestVersion: c.LatestVersion, Versions: c.Versions,
			Kind: string(c.Kind), Description: c.Description, UpdatedAt: c.UpdatedAt})
	}
	writeJSON(w, mediaJSON, http.StatusOK, out)
	return nil
}
