package api

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
)

// fakeStore is an in-memory Store. Its err fields, when set, are returned
// by the matching methods; lastFilter records the last filter received.
type fakeStore struct {
	mu         sync.Mutex
	contracts  []record.ContractVersion
	results    map[uuid.UUID]record.Result
	order      []uuid.UUID
	keys       map[string]record.Idempotency
	groups     []record.StatsGroup
	lastFilter record.ResultFilter
	lastAfter  *record.Cursor
	lastGroup  record.StatsGroupBy

	insertErr error
	readyErr  error
	getErr    error
}

var _ Store = (*fakeStore)(nil)

func newFakeStore() *fakeStore {
	return &fakeStore{results: map[uuid.UUID]record.Result{}, keys: map[string]record.Idempotency{}}
}

// reset forgets the stored results (benchmarks call it per iteration).
func (f *fakeStore) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.results)
	f.order = f.order[:0]
}

func (f *fakeStore) Ready(context.Context) error { return f.readyErr }

func (f *fakeStore) CreateContractVersion(_ context.Context, cv record.ContractVersion) (record.ContractVersion, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.insertErr != nil {
		return cv, false, f.insertErr
	}
	n := 0
	for _, c := range f.contracts {
		if c.Name == cv.Name {
			if c.SHA256 == cv.SHA256 {
				return c, false, nil
			}
			n = max(n, c.Version)
		}
	}
	cv.Version = n + 1
	cv.CreatedAt = time.Date(2026, 11, 20, 10, 0, cv.Version, 0, time.UTC)
	f.contracts = append(f.contracts, cv)
	return cv, true, nil
}

func (f *fakeStore) GetContractVersion(_ context.Context, _ int64, name string, version int) (record.ContractVersion, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.getErr != nil {
		return record.ContractVersion{}, f.getErr
	}
	var best *record.ContractVersion
	for i, c := range f.contracts {
		if c.Name == name && (c.Version == version || version == 0 && (best == nil || c.Version > best.Version)) {
			best = &f.contracts[i]
		}
	}
	if best == nil {
		return record.ContractVersion{}, fmt.Errorf("%w: contract %s@%d", engine.ErrNotFound, name, version)
	}
	return *best, nil
}

func (f *fakeStore) ListContractVersions(_ context.Context, _ int64, name string, after, limit int) ([]record.ContractVersion, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []record.ContractVersion{}
	exists := false
	for _, c := range f.contracts {
		if c.Name == name {
			exists = true
			if c.Version > after && len(out) < limit {
				c.Body = nil
				out = append(out, c)
			}
		}
	}
	if !exists {
		return nil, engine.ErrNotFound
	}
	return out, nil
}

func (f *fakeStore) ListContracts(_ context.Context, _ int64, after string, limit int) ([]record.ContractSummary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	latest := map[string]record.ContractVersion{}
	for _, c := range f.contracts {
		if c.Version > latest[c.Name].Version {
			latest[c.Name] = c
		}
	}
	var names []string
	for n := range latest {
		if n > after {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := []record.ContractSummary{}
	for _, n := range names {
		if len(out) == limit {
			break
		}
		c := latest[n]
		out = append(out, record.ContractSummary{Name: n, LatestVersion: c.Version, Versions: c.Version, Kind: c.Kind,
			Description: c.Description, UpdatedAt: c.CreatedAt})
	}
	return out, nil
}

func (f *fakeStore) InsertResults(_ context.Context, b record.ResultBatch) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.insertErr != nil {
		return f.insertErr
	}
	for _, r := range b.Results {
		// Like Postgres (SQLSTATE 22021), refuse NUL in text columns.
		texts := []string{r.TaskID, r.RunID, r.Agent}
		for k, v := range r.Labels {
			texts = append(texts, k, v)
		}
		for _, t := range texts {
			if strings.IndexByte(t, 0) >= 0 {
				return fmt.Errorf("write results: %w", record.ErrInvalidText)
			}
		}
	}
	if k := b.Idempotency; k != nil && hasNUL(k.ItemErrors) {
		return fmt.Errorf("write results: %w", record.ErrInvalidText) // 22P05
	}
	if k := b.Idempotency; k != nil {
		if _, ok := f.keys[k.Key]; ok {
			return fmt.Errorf("%w: key %s", engine.ErrConflict, k.Key)
		}
		f.keys[k.Key] = *k
	}
	for _, r := range b.Results {
		f.results[r.ID] = r
		f.order = append(f.order, r.ID)
	}
	return nil
}

func (f *fakeStore) GetResult(_ context.Context, _ int64, id uuid.UUID) (record.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.getErr != nil {
		return record.Result{}, f.getErr
	}
	r, ok := f.results[id]
	if !ok {
		return r, engine.ErrNotFound
	}
	return r, nil
}

func (f *fakeStore) GetResults(_ context.Context, _ int64, ids []uuid.UUID) ([]record.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []record.Result
	for _, id := range ids {
		if r, ok := f.results[id]; ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// ListResults ignores the filter (it records it) and pages by insertion
// order, newest first.
func (f *fakeStore) ListResults(_ context.Context, _ int64, flt record.ResultFilter, after *record.Cursor, limit int) ([]record.ResultSummary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastFilter, f.lastAfter = flt, after
	var out []record.ResultSummary
	skipping := after != nil
	for i := len(f.order) - 1; i >= 0 && len(out) < limit; i-- {
		r := f.results[f.order[i]]
		if skipping {
			skipping = r.ID != after.ID
			continue
		}
		out = append(out, r.ResultSummary)
	}
	return out, nil
}

func (f *fakeStore) Stats(_ context.Context, _ int64, flt record.ResultFilter, g record.StatsGroupBy) ([]record.StatsGroup, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastFilter, f.lastGroup = flt, g
	return f.groups, nil
}

func (f *fakeStore) GetIdempotency(_ context.Context, _ int64, key string) (record.Idempotency, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.getErr != nil {
		return record.Idempotency{}, f.getErr
	}
	k, ok := f.keys[key]
	if !ok {
		return k, engine.ErrNotFound
	}
	return k, nil
}
