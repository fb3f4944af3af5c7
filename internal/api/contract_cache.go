package api

import (
	"bytes"
	rtmetrics "runtime/metrics"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// byteCache is a least-recently-used cache of parsed contracts bounded by
// the sum of its entries' costs in bytes (and, as a backstop, by a count
// of entries). An entry costing more than a quarter of the budget is not
// kept, so one huge contract cannot empty the cache. Safe for concurrent
// use.
type byteCache struct {
	mu    sync.Mutex
	lru   *simplelru.LRU[cacheKey, cacheEntry]
	bytes int64 // the sum of the entries' costs
	max   int64
}

// cacheEntry is one cached contract: raw is the inline body it was parsed
// from (a hash hit counts only when it is equal; nil for registry
// entries).
type cacheEntry struct {
	raw  []byte
	pc   *parsedContract
	cost int64
}

// maxCacheEntries caps the entries whatever their size.
const maxCacheEntries = 100000

func newByteCache(maxBytes int64) *byteCache {
	c := &byteCache{max: maxBytes}
	c.lru, _ = simplelru.NewLRU(maxCacheEntries, func(_ cacheKey, e cacheEntry) { c.bytes -= e.cost }) // errors only for size <= 0
	return c
}

// get returns the entry of key; for an inline contract (raw non-nil) only
// when its bytes are raw.
func (c *byteCache) get(key cacheKey, raw []byte) (*parsedContract, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.lru.Get(key)
	if !ok || (raw != nil && !bytes.Equal(e.raw, raw)) {
		return nil, false
	}
	return e.pc, true
}

// raw returns the text an inline entry of key was parsed from when it is
// raw's bytes (a copy of them, which the cache keeps unchanged).
func (c *byteCache) raw(key cacheKey, raw []byte) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.lru.Peek(key)
	if !ok || e.raw == nil || !bytes.Equal(e.raw, raw) {
		return nil, false
	}
	return e.raw, true
}

// add keeps pc under key at cost bytes, evicting the least recently used
// entries until the cache fits its budget; an entry over a quarter of the
// budget is not kept.
func (c *byteCache) add(key cacheKey, raw []byte, pc *parsedContract, cost int64) {
	if cost > c.max/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.lru.Peek(key); ok {
		c.bytes -= old.cost // replaced below without the eviction callback
	}
	c.lru.Add(key, cacheEntry{raw: raw, pc: pc, cost: cost})
	c.bytes += cost
	for c.bytes > c.max {
		if _, _, ok := c.lru.RemoveOldest(); !ok {
			break
		}
	}
}

// size returns the entries' total cost in bytes and their number.
func (c *byteCache) size() (int64, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes, c.lru.Len()
}

// allocatedBytes returns the bytes the process allocated on the heap since
// it started (runtime/metrics, read without stopping the world; it only
// grows, and counts small objects a span at a time).
func allocatedBytes() uint64 {
	s := []rtmetrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	rtmetrics.Read(s)
	return s[0].Value.Uint64()
}
