package engine

import (
	"strconv"
	"unsafe"
)

// textArena holds the texts of one evaluation's result (check details,
// issue problems and fixes, the items they list) in a few shared blocks
// of memory instead of one allocation per text. A text is built by
// appending to the block in use and then taken as a string over the bytes
// written; those bytes are never written again (a full block is left as
// it is and a new one started), so the strings stay valid and immutable
// for as long as anything refers to them.
//
// One text is built at a time: start, appends, then end. str builds a
// whole text in one call. The zero value is ready to use.
type textArena struct {
	// buf is the text being built, at the start of the unused rest of the
	// current block (empty between texts): appending never reaches the
	// bytes of texts already taken.
	buf []byte
	// open reports that a text is being built.
	open bool
	// block is the size of the next block (0: minTextBlock); each block
	// is twice the one before, so a result with many texts takes few.
	block int
}

// minTextBlock is the smallest block a textArena allocates.
const minTextBlock = 512

// start begins a text. Building two texts at once is a programming error.
func (a *textArena) start() {
	if a.open {
		panic("textArena: a text is already being built")
	}
	a.open = true
}

// end returns the text built since start.
func (a *textArena) end() string {
	a.open = false
	if len(a.buf) == 0 {
		return ""
	}
	s := unsafe.String(&a.buf[0], len(a.buf))
	// The bytes now belong to s: the next text starts after them.
	a.buf = a.buf[len(a.buf):]
	return s
}

// room makes room for n more bytes of the current text: a full block is
// replaced by a new one (at least twice the size of the text so far plus
// n) holding the bytes of the current text.
func (a *textArena) room(n int) {
	if len(a.buf)+n <= cap(a.buf) {
		return
	}
	size := max(minTextBlock, a.block, 2*(len(a.buf)+n))
	a.block = 2 * size
	nb := make([]byte, len(a.buf), size)
	copy(nb, a.buf)
	a.buf = nb
}

// use makes b, which nothing else writes, the arena's first block, its
// next one twice as large; a is new (no text taken or open).
func (a *textArena) use(b []byte) {
	a.buf, a.block = b[:0], 2*cap(b)
}

// s appends x to the current text.
func (a *textArena) s(x string) {
	a.room(len(x))
	a.buf = append(a.buf, x...)
}

// b appends the byte c to the current text.
func (a *textArena) b(c byte) {
	a.room(1)
	a.buf = append(a.buf, c)
}

// int appends the decimal form of i to the current text (one or two
// digits, most trace indexes and counts, without strconv).
func (a *textArena) int(i int) {
	a.room(20)
	switch {
	case uint(i) < 10:
		a.buf = append(a.buf, byte('0'+i))
	case uint(i) < 100:
		a.buf = append(a.buf, byte('0'+i/10), byte('0'+i%10))
	default:
		a.buf = strconv.AppendInt(a.buf, int64(i), 10)
	}
}

// str returns the concatenation of parts as one text.
func (a *textArena) str(parts ...string) string {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n == 0 {
		return ""
	}
	a.start()
	a.room(n)
	for _, p := range parts {
		a.buf = append(a.buf, p...)
	}
	return a.end()
}

// bytesText returns b as a string without copying, for reading it while
// b is not written.
func bytesText(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
