package jsondoc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestAppendString(t *testing.T) {
	for _, s := range []string{
		"", "plain", `quote " and \ backslash`, "<a href='x'>&amp;</a>", "\b\f\n\r\t\x00\x01\x1f\x7f",
		"é ü 中文 🙂", "\u2028 and \u2029", "bad \xff\xfe utf-8", "\xed\xa0\x80 surrogate bytes", "tail \xe2\x82",
	} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("AppendString(%q) = %s, want x%s", s, got, want)
		}
		if got, want := AppendStringNoHTML([]byte("x"), s), "x"+encodeNoHTML(t, s); string(got) != want {
			t.Errorf("AppendStringNoHTML(%q) = %s, want %s", s, got, want)
		}
	}
	if got := string(AppendStringNoHTML(nil, "<a&b>\u2028")); got != `"<a&b>\u2028"` {
		t.Errorf("AppendStringNoHTML = %s", got)
	}
}

// encodeNoHTML returns what an Encoder with SetEscapeHTML(false) writes
// for s, without the newline.
func encodeNoHTML(t *testing.T, s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a<b>&c", "\u2028", "\xff", "\"\\\n",
		"0123456789abcdef0123456789", "01234567<9abcdef&", "0123456\"89abcdef\\0123", "abcdefg\x1fhijklmnop\x7f~",
		"abcdefgh\u00e9ijklmnop\u2029qrstuvwx", "abcdefghijklmno>", "abcdefgh\xffijklmnop", "!#$%'()*+,-./:;=?@[]^_`{|}~ \x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
		if got, want := AppendStringNoHTML(nil, s), encodeNoHTML(t, s); string(got) != want {
			t.Fatalf("AppendStringNoHTML(%q) = %s, want %s", s, got, want)
		}
	})
}

// BenchmarkAppendString appends typical argument text: mostly plain ASCII
// with a few escapes.
func BenchmarkAppendString(b *testing.B) {
	s := `{"query": "flights from Paris to New York on 2026-12-01", "note": "<b>fast</b> & cheap", "n": 3}` + "\n"
	buf := make([]byte, 0, 256)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = AppendString(buf[:0], s)
	}
}

func TestAppendFloat(t *testing.T) {
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1.5, 100, 1e6, 1e20, 1e21, 1.2345e21, 123456789012345680000,
		1e-6, 9.99999e-7, 1e-7, 1.5e-7, 5e-324, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64,
		0.30000000000000004, 2.5e-10, -3.75e-100, 1e100, 1 << 53, (1 << 53) + 2, 2.0 / 3}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		f := math.Float64frombits(r.Uint64())
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			floats = append(floats, f)
		}
		floats = append(floats, r.NormFloat64()*math.Pow(10, float64(r.IntN(60)-30)))
		// Short decimals (appendShortFloat's), their neighbours, and
		// ratios such as scores.
		d := float64(r.Int64N(1_000_000_000)) / math.Pow(10, float64(r.IntN(12)))
		floats = append(floats, d, -d, math.Nextafter(d, 0), math.Nextafter(d, 2e15), float64(r.IntN(50))/float64(1+r.IntN(50)))
	}
	for n := range 2001 {
		floats = append(floats, float64(n)/1000, float64(n)/8, float64(n)/3, float64(n)*1e11, 1e-6*float64(n), 1e15-float64(n), 1e7-float64(n)/1e8, float64(n)/1e8, float64(n)/1e9)
	}
	for _, f := range floats {
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendFloat([]byte("x"), f); string(got) != "x"+string(want) {
			t.Fatalf("AppendFloat(%v) = %s, want x%s", f, got, want)
		}
	}
}

func FuzzAppendFloat(f *testing.F) {
	for _, bits := range []uint64{0, 1 << 63, math.Float64bits(1e-7), math.Float64bits(1e21), math.Float64bits(0.1),
		math.Float64bits(0.75), math.Float64bits(-0.675), math.Float64bits(12345678.5), math.Float64bits(1e-6), math.Float64bits(999999999999999.9),
		math.Float64bits(0.8381578947368422), math.Float64bits(1e15), math.Float64bits(0.00000123)} {
		f.Add(bits)
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		v := math.Float64frombits(bits)
		want, err := json.Marshal(v)
		if err != nil {
			return // NaN and infinities: json.Marshal refuses them
		}
		if got := AppendFloat(nil, v); string(got) != string(want) {
			t.Fatalf("AppendFloat(%v) = %s, want %s", v, got, want)
		}
	})
}

// FuzzAppendShortFloat checks AppendFloat against json.Marshal on
// decimals n/10^k and their neighbours, the floats appendShortFloat
// writes (random bits seldom are one).
func FuzzAppendShortFloat(f *testing.F) {
	for _, seed := range [][2]int64{{75, 2}, {1, 0}, {675, 3}, {-5, 1}, {999999999999999, 0}, {1, 6}, {123456789, 8}, {30, 1}, {4503599627370497, 3}, {99999995, 1}, {999999999999999, 8}, {1, 9}} {
		f.Add(seed[0], uint8(seed[1]))
	}
	f.Fuzz(func(t *testing.T, n int64, k uint8) {
		d := float64(n) / math.Pow(10, float64(k%24))
		for _, v := range []float64{d, math.Nextafter(d, math.Inf(1)), math.Nextafter(d, math.Inf(-1))} {
			want, err := json.Marshal(v)
			if err != nil {
				return
			}
			if got := AppendFloat(nil, v); string(got) != string(want) {
				t.Fatalf("AppendFloat(%v) = %s, want %s", v, got, want)
			}
		}
	})
}

// TestAppendShortFloat checks that appendShortFloat writes the decimals of
// scores and rates itself, as json.Marshal writes them, instead of leaving
// them to strconv.
func TestAppendShortFloat(t *testing.T) {
	for _, v := range []float64{0.75, 1, 0.25, 0.9, 0.675, 3, 0.4, 0.3, 0.2, 0.1, 48.5, -2.5} {
		want, _ := json.Marshal(v)
		if got, ok := appendShortFloat(nil, v); !ok || string(got) != string(want) {
			t.Errorf("appendShortFloat(%v) = %q, %v; want %s, true", v, got, ok, want)
		}
	}
}

// TestAppendStringEveryByte checks every byte value at every place of
// strings of 1 to 19 bytes (shorter than a block, whole blocks, and the
// bytes after the last whole block, which are read in an overlapping
// block) against encoding/json, in both modes.
func TestAppendStringEveryByte(t *testing.T) {
	for c := range 256 {
		for n := 1; n <= 19; n++ {
			for at := range n {
				s := []byte(strings.Repeat("a", n))
				s[at] = byte(c)
				checkAppendString(t, string(s))
				if at > 0 { // after an escape or a multi-byte sequence
					s[0] = '"'
					checkAppendString(t, string(s))
					s[0] = 0xc3
					if at > 1 {
						s[1] = 0xa9
					}
					checkAppendString(t, string(s))
				}
			}
		}
	}
}

// checkAppendString compares AppendString and AppendStringNoHTML of s
// with encoding/json.
func checkAppendString(t *testing.T, s string) {
	t.Helper()
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
		t.Fatalf("AppendString(%q) = %s, want x%s", s, got, want)
	}
	if got, want := AppendStringNoHTML([]byte("x"), s), "x"+encodeNoHTML(t, s); string(got) != want {
		t.Fatalf("AppendStringNoHTML(%q) = %s, want %s", s, got, want)
	}
}

// TestLoad8 checks that load8 reads the eight bytes at i and panics,
// rather than reading outside the string, for every i that leaves fewer
// than eight bytes (the end of a string of any length, a substring that
// its backing memory outlasts, a negative i).
func TestLoad8(t *testing.T) {
	backing := "0123456789abcdefXXXXXXXX"
	for n := 0; n <= 16; n++ {
		s := backing[:n]
		for i := -1; i <= n; i++ {
			got, panicked := func() (w uint64, panicked bool) {
				defer func() { panicked = recover() != nil }()
				return load8(s, i), false
			}()
			if ok := i >= 0 && i+8 <= n; panicked == ok {
				t.Fatalf("load8(%q, %d): panicked %v", s, i, panicked)
			} else if ok {
				if want := binary.LittleEndian.Uint64([]byte(s[i : i+8])); got != want {
					t.Fatalf("load8(%q, %d) = %#x, want %#x", s, i, got, want)
				}
			}
		}
	}
}
