package engine

import (
	"strconv"
	"strings"
	"testing"
)

// TestTextArena checks that texts built in a textArena keep their bytes
// while later texts are built, across blocks and texts longer than a
// block.
func TestTextArena(t *testing.T) {
	var a textArena
	var got, want []string
	for i := range 300 {
		var s string
		switch i % 4 {
		case 0:
			s = a.str("call #", strconv.Itoa(i), " done")
			want = append(want, "call #"+strconv.Itoa(i)+" done")
		case 1:
			a.start()
			a.s("n=")
			a.int(i * 1000)
			a.b('!')
			a.times(i % 3)
			s = a.end()
			w := "n=" + strconv.Itoa(i*1000) + "!"
			switch i % 3 {
			case 1:
				w += "once"
			case 2:
				w += "twice"
			default:
				w += "0 times"
			}
			want = append(want, w)
		case 2:
			long := strings.Repeat("é"+strconv.Itoa(i), i)
			s = a.str(long)
			want = append(want, long)
		case 3:
			s = a.value(strings.Repeat("x", i))
			want = append(want, cutValueText(quoteJSON(strings.Repeat("x", i))))
		}
		got = append(got, s)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("text %d = %q, want %q", i, got[i], want[i])
		}
	}
	if s := a.str("", ""); s != "" {
		t.Errorf("empty text = %q", s)
	}
	a.start()
	if s := a.end(); s != "" {
		t.Errorf("empty built text = %q", s)
	}
}

// TestTextArenaOneAtATime checks that starting a text while another is
// being built is caught.
func TestTextArenaOneAtATime(t *testing.T) {
	var a textArena
	a.start()
	defer func() {
		if recover() == nil {
			t.Error("a second start did not panic")
		}
	}()
	a.start()
}

// TestTextArenaInt checks int against strconv.Itoa around its one- and
// two-digit forms and for negative and large numbers.
func TestTextArenaInt(t *testing.T) {
	var a textArena
	for _, i := range []int{0, 1, 9, 10, 11, 42, 99, 100, 101, 999, 1000, 123456789, -1, -9, -10, -99, -100, 1<<63 - 1, -1 << 63} {
		a.start()
		a.int(i)
		if got, want := a.end(), strconv.Itoa(i); got != want {
			t.Errorf("int(%d) = %q, want %q", i, got, want)
		}
	}
}
