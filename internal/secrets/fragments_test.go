package secrets

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// span is one [start, end) byte range.
type span struct{ start, end int }

func fragmentSpans(s string) []span {
	var out []span
	for start, end := range fragments(s) {
		out = append(out, span{start, end})
	}
	return out
}

// TestFragments pins where long texts are cut for the secret scan.
func TestFragments(t *testing.T) {
	lines := strings.Repeat(strings.Repeat("a", 99)+"\n", 400) // 40000 bytes
	tests := []struct {
		name string
		text string
		want []span
	}{
		{"empty", "", []span{{0, 0}}},
		{"short", "hello", []span{{0, 5}}},
		{"exactly one fragment", strings.Repeat("x", fragmentSize), []span{{0, fragmentSize}}},
		// No white space: hard cuts, overlapping by exactly fragmentOverlap.
		{"no white space", strings.Repeat("x", 40000), []span{{0, 16384}, {12288, 28672}, {24576, 40000}}},
		// Lines of 100 bytes: every cut falls after a line break.
		{"lines", lines, []span{{0, 16300}, {12200, 28500}, {24400, 40000}}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, fragmentSpans(tc.text), cmp.AllowUnexported(span{})); diff != "" {
			t.Errorf("%s: fragments mismatch (-want +got):\n%s", tc.name, diff)
		}
	}

	// The invariants on random texts of words, spaces and line breaks.
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 50 {
		var b strings.Builder
		for b.Len() < 20000+n*3000 {
			b.WriteString(strings.Repeat("w", rng.IntN(3000)))
			b.WriteByte(" \n\t"[rng.IntN(3)])
		}
		s := b.String()
		sp := fragmentSpans(s)
		if sp[0].start != 0 || sp[len(sp)-1].end != len(s) {
			t.Fatalf("text %d: fragments %v do not cover [0, %d)", n, sp, len(s))
		}
		for i, f := range sp {
			if f.end-f.start > fragmentSize {
				t.Errorf("text %d: fragment %v longer than %d", n, f, fragmentSize)
			}
			if i > 0 && (f.start <= sp[i-1].start || sp[i-1].end-f.start < fragmentOverlap) {
				t.Errorf("text %d: fragment %v after %v: no progress or overlap under %d", n, f, sp[i-1], fragmentOverlap)
			}
		}
	}
}

// TestScanLongText checks that a long text is scanned whole: secrets
// placed every ~1000 bytes, some right across the fragment boundaries, are
// all found, once each.
func TestScanLongText(t *testing.T) {
	sc := testScanner(t)
	rng := rand.New(rand.NewPCG(3, 4))
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	pat := func() string {
		b := []byte("ghp_")
		for range 36 {
			b = append(b, alnum[rng.IntN(len(alnum))])
		}
		return string(b)
	}
	for _, filler := range []string{"lorem ipsum ", "........", "line of text\n"} {
		var b strings.Builder
		for b.Len() < 120000 {
			b.WriteString(strings.Repeat(filler, 1000/len(filler)))
			b.WriteString(pat())
		}
		// And one across the first hard cut (at fragmentSize when the
		// filler has no white space).
		s := b.String()
		p := pat()
		s = s[:fragmentSize-20] + p + s[fragmentSize-20+len(p):]
		var want []secretHit
		for _, tok := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '.' || r == '\n' }) {
			if i := strings.Index(tok, "ghp_"); i >= 0 && len(tok)-i >= 40 {
				want = append(want, secretHit{"github-pat", tok[i : i+40]})
			}
		}
		sortHits(want)
		want = slices.Compact(want)
		if len(want) < 100 {
			t.Fatalf("filler %q: only %d secrets placed", filler, len(want))
		}
		got := slices.Clone(sc.scan(s))
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(secretHit{})); diff != "" {
			t.Errorf("filler %q: scan of %d bytes mismatch (-want +got):\n%s", filler, len(s), diff)
		}
	}
}
