package jsondoc

import "math"

// WriteCache keeps the JSON of strings and floats written before, for a
// writer that writes many similar documents one after another: most
// texts and figures of a batch's results (check details, issue problems
// and fixes, tool names, scores and rates) are those of the results
// before them.
//
// A string is looked up by its content (its length and first and last
// eight bytes choose a slot, whose copy of the string must equal it); a
// string not there is written as AppendString or AppendStringNoHTML
// writes it and kept in its slot in place of the one before. Strings
// shorter than minCachedString or longer than maxCachedString bytes are
// written without the cache. A float is looked up by its bits in the same
// way. The cache holds at most stringSlots strings and floatSlots floats,
// so its memory is bounded (about 1 MB at most; a few tens of KB for a
// batch's usual texts).
//
// A WriteCache is not safe for concurrent use (each worker of a batch
// has its own); the zero value is ready, and a nil *WriteCache writes
// everything without a cache.
type WriteCache struct {
	slots  *[stringSlots]stringSlot
	floats *[floatSlots]floatSlot
}

// floatSlot is one float of a WriteCache: its bits, and AppendFloat's
// text for it (n bytes; 0 for an empty slot).
type floatSlot struct {
	bits uint64
	n    uint8
	text [32]byte // the longest has 25 bytes, as -0.0000012345678901234567
}

// stringSlot is one string of a WriteCache: its length n (0 for an
// empty slot), its first and last eight bytes (the whole string up to 16
// bytes), a copy of its bytes between those, and its JSON in the
// escaping html says.
type stringSlot struct {
	n           int
	first, last uint64
	mid, json   []byte
	html        bool
}

const (
	stringSlotBits  = 9
	stringSlots     = 1 << stringSlotBits
	minCachedString = 8
	maxCachedString = 256
	floatSlotBits   = 7
	floatSlots      = 1 << floatSlotBits
)

// AppendFloat appends the finite f as AppendFloat does, from the cache
// when it holds f.
func (c *WriteCache) AppendFloat(b []byte, f float64) []byte {
	if c == nil {
		return AppendFloat(b, f)
	}
	if c.floats == nil {
		c.floats = new([floatSlots]floatSlot)
	}
	bits := math.Float64bits(f)
	sl := &c.floats[(bits*0x9e3779b97f4a7c15)>>(64-floatSlotBits)]
	if sl.n != 0 && sl.bits == bits {
		return append(b, sl.text[:sl.n]...)
	}
	start := len(b)
	b = AppendFloat(b, f)
	if n := len(b) - start; n <= len(sl.text) {
		sl.bits, sl.n = bits, uint8(copy(sl.text[:], b[start:]))
	}
	return b
}

// AppendString appends s as AppendString does, from the cache when it
// holds s.
func (c *WriteCache) AppendString(b []byte, s string) []byte {
	return c.appendString(b, s, true)
}

// AppendStringNoHTML appends s as AppendStringNoHTML does, from the cache
// when it holds s.
func (c *WriteCache) AppendStringNoHTML(b []byte, s string) []byte {
	return c.appendString(b, s, false)
}

func (c *WriteCache) appendString(b []byte, s string, html bool) []byte {
	safe, safe8 := &plainSafe, &plainSafe8
	if html {
		safe, safe8 = &htmlSafe, &htmlSafe8
	}
	if len(s) < minCachedString {
		// A short string (a status, a tool name) is cheaper to look at
		// than to look up.
		for i := 0; i < len(s); i++ {
			if !safe8[s[i]] {
				return appendString(b, s, safe)
			}
		}
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	if c == nil || len(s) > maxCachedString {
		return appendString(b, s, safe)
	}
	if c.slots == nil {
		c.slots = new([stringSlots]stringSlot)
	}
	first, last := load8(s, 0), load8(s, len(s)-8)
	h := (first*0x9e3779b97f4a7c15 ^ last ^ uint64(len(s))) * 0xff51afd7ed558ccd
	sl := &c.slots[h>>(64-stringSlotBits)]
	if sl.n == len(s) && sl.first == first && sl.last == last && sl.html == html &&
		(len(s) <= 16 || string(sl.mid) == s[8:len(s)-8]) {
		return append(b, sl.json...)
	}
	start := len(b)
	b = appendString(b, s, safe)
	sl.n, sl.first, sl.last, sl.html = len(s), first, last, html
	sl.mid = sl.mid[:0]
	if len(s) > 16 {
		sl.mid = append(sl.mid, s[8:len(s)-8]...)
	}
	sl.json = append(sl.json[:0], b[start:]...)
	return b
}
