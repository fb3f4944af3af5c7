package jsondoc

import (
	"math"
	"strings"
	"testing"
)

// checkWriteCache writes each of texts through c, in both escapings and
// twice in a row, and compares the bytes with AppendString's and
// AppendStringNoHTML's.
func checkWriteCache(t *testing.T, c *WriteCache, texts ...string) {
	t.Helper()
	for range 2 {
		for _, s := range texts {
			if got, want := c.AppendString([]byte("x"), s), AppendString([]byte("x"), s); string(got) != string(want) {
				t.Fatalf("WriteCache.AppendString(%q) = %s, want %s", s, got, want)
			}
			if got, want := c.AppendStringNoHTML([]byte("x"), s), AppendStringNoHTML([]byte("x"), s); string(got) != string(want) {
				t.Fatalf("WriteCache.AppendStringNoHTML(%q) = %s, want %s", s, got, want)
			}
		}
	}
}

func TestWriteCache(t *testing.T) {
	long := strings.Repeat("0123456789", 26) // over maxCachedString
	texts := []string{"", "a", "pass", "1234567", "12345678", "123456789", "1234567812345678", "12345678x12345678",
		"12345678y12345678", "12345678xy12345678", "123456781234567", "`calc` (#4) was called before `read_file` (#5)",
		`Call ` + "`write_file`" + ` with {"city":0.25,"limit":{"filter":{"lang":"fr"}}}`, "<a href=\"x\">&amp;</a> in a text",
		"tail \xe2\x82 cut", "\u2028 and \u2029 line separators", long, long[:maxCachedString], long[:maxCachedString+1]}
	var c WriteCache
	checkWriteCache(t, &c, texts...)
	// The same texts again, in another order and with copies of their
	// bytes (the cache compares contents, not addresses).
	copies := make([]string, len(texts))
	for i, s := range texts {
		copies[len(texts)-1-i] = string([]byte(s))
	}
	checkWriteCache(t, &c, copies...)
	// Strings that share their slot push each other out.
	var one WriteCache
	for i := range 3 * stringSlots {
		s := strings.Repeat(string(rune('a'+i%26)), 8+i%40) + strings.Repeat("\"", i%3)
		checkWriteCache(t, &one, s)
	}
	var none *WriteCache
	checkWriteCache(t, none, texts...)
}

func TestWriteCacheFloats(t *testing.T) {
	floats := []float64{0, math.Copysign(0, -1), 1, 0.75, 0.8333333333333334, 0.8302631578947368, -1.2345678901234567e-6,
		1e-7, 1e21, -math.MaxFloat64, math.SmallestNonzeroFloat64, 123456789012345680000, 2.0 / 3}
	var c WriteCache
	for range 2 {
		for _, f := range floats {
			if got, want := c.AppendFloat([]byte("x"), f), AppendFloat([]byte("x"), f); string(got) != string(want) {
				t.Fatalf("WriteCache.AppendFloat(%v) = %s, want %s", f, got, want)
			}
		}
	}
	// Floats that share their slot push each other out.
	for i := range 4 * floatSlots {
		f := float64(i) / 7
		for range 2 {
			if got, want := c.AppendFloat(nil, f), AppendFloat(nil, f); string(got) != string(want) {
				t.Fatalf("WriteCache.AppendFloat(%v) = %s, want %s", f, got, want)
			}
		}
	}
	if got := string(AppendFloat(nil, -1.2345678901234567e-6)); len(got) != 25 {
		t.Errorf("AppendFloat(-1.2345678901234567e-6) = %s, %d bytes; want 25", got, len(got))
	}
}

// FuzzWriteCacheFloat writes two floats, then each again, through one
// cache and compares every write with AppendFloat's.
func FuzzWriteCacheFloat(f *testing.F) {
	f.Add(0.75, 0.8333333333333334)
	f.Add(-1.2345678901234567e-6, 1e300)
	f.Fuzz(func(t *testing.T, a, b float64) {
		var c WriteCache
		for _, x := range []float64{a, b, a, b} {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return
			}
			if got, want := c.AppendFloat(nil, x), AppendFloat(nil, x); string(got) != string(want) {
				t.Fatalf("WriteCache.AppendFloat(%v) = %s, want %s", x, got, want)
			}
		}
	})
}

// FuzzWriteCache writes two strings, then each again, through one cache
// and compares every write with the plain writers'.
func FuzzWriteCache(f *testing.F) {
	for _, s := range []string{"12345678", "12345678x12345678", "<b>&amp;</b> and \"quotes\"", "é ü 中文 🙂 text", "\xff\xfe bad utf-8 !"} {
		f.Add(s, s[:len(s)-1]+"z")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		var c WriteCache
		checkWriteCache(t, &c, a, b, a)
	})
}

// BenchmarkWriteCache writes texts that repeat, as a batch's results'
// do, through a cache.
func BenchmarkWriteCache(b *testing.B) {
	texts := []string{"required-calls", "1 of 10 expected calls not satisfied: write_file (not called)", "fail",
		"`calc` (#4) was called before `read_file` (#5), against the expected order", "Call `read_file` before `calc`",
		"list_dir", "search", "send_email", "no secret in the arguments of 12 calls", "the trace carries no tool results"}
	var c WriteCache
	buf := make([]byte, 0, 4096)
	for b.Loop() {
		buf = buf[:0]
		for _, s := range texts {
			buf = c.AppendStringNoHTML(buf, s)
		}
	}
}
