package engine

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestExtractClaimsBoundedMemory checks that the claim scanner keeps no
// per-word state: a 1 MB answer with no sentence end allocates next to
// nothing, and its claims are still found.
func TestExtractClaimsBoundedMemory(t *testing.T) {
	s := "I booked it and " + strings.Repeat("then the rest of the words go on ", 1<<15) + "and sent it"
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	claims := extractClaims(s)
	runtime.ReadMemStats(&after)
	var got []string
	for _, c := range claims {
		got = append(got, c.word)
	}
	if fmt.Sprint(got) != "[booked sent]" {
		t.Errorf("claims = %v, want [booked sent]", got)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 16<<10 {
		t.Errorf("extractClaims of %d bytes allocated %d bytes; want at most 16 KiB", len(s), n)
	}
}
