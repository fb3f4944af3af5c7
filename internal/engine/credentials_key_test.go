package engine

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// isSecretKeyPlain is isSecretKey written plainly: normalise the whole
// key, then compare. FuzzIsSecretKey checks one against the other.
func isSecretKeyPlain(key string) bool {
	var buf [64]byte
	b := buf[:0]
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		default:
			continue
		}
		if len(b) == cap(b) {
			return false // far longer than any secret name we know
		}
		b = append(b, c)
	}
	for _, name := range secretKeyNames {
		if string(b) == name {
			return true
		}
	}
	if len(b) == 0 {
		return false
	}
	for _, suf := range secretKeySuffixes {
		if suf[len(suf)-1] != b[len(b)-1] {
			continue
		}
		if !bytes.HasSuffix(b, []byte(suf)) {
			continue
		}
		if suf == "token" {
			prefix := b[:len(b)-len(suf)]
			for _, p := range tokenNotSecret {
				if string(prefix) == p {
					return false
				}
			}
		}
		return true
	}
	return false
}

// FuzzIsSecretKey checks isSecretKey against isSecretKeyPlain; its seeds
// are every name, suffix and token prefix in several spellings.
func FuzzIsSecretKey(f *testing.F) {
	for _, k := range secretKeyKeys() {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if got, want := isSecretKey(key), isSecretKeyPlain(key); got != want {
			t.Errorf("isSecretKey(%q) = %v, isSecretKeyPlain = %v", key, got, want)
		}
	})
}

// TestIsSecretKeyMatchesPlain compares isSecretKey with isSecretKeyPlain
// on keys built from the names, suffixes and token prefixes, with case,
// separators, noise and lengths around keyTail and maxSecretKeyLen.
func TestIsSecretKeyMatchesPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	keys := secretKeyKeys()
	parts := append(append(append([]string{"", "x", "db", "client", "my_app", "9", "ééé", "-", "__"}, secretKeyNames...), secretKeySuffixes...), tokenNotSecret...)
	for range 20000 {
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			p := parts[rng.IntN(len(parts))]
			if rng.IntN(3) == 0 {
				p = strings.ToUpper(p)
			}
			b.WriteString(p)
			b.WriteString([]string{"", "_", "-", " ", ".", "\x00"}[rng.IntN(6)])
		}
		keys = append(keys, b.String(), strings.Repeat("a", rng.IntN(70))+b.String())
	}
	secret := 0
	for _, k := range keys {
		got, want := isSecretKey(k), isSecretKeyPlain(k)
		if got != want {
			t.Errorf("isSecretKey(%q) = %v, isSecretKeyPlain = %v", k, got, want)
		}
		if want {
			secret++
		}
	}
	if secret < len(keys)/10 || secret > len(keys)*9/10 {
		t.Errorf("%d of %d keys name a secret; the test needs both kinds", secret, len(keys))
	}
}

// secretKeyKeys returns keys around every name, suffix and token prefix.
func secretKeyKeys() []string {
	var out []string
	for _, w := range append(append(append([]string{}, secretKeyNames...), secretKeySuffixes...), tokenNotSecret...) {
		out = append(out, w, strings.ToUpper(w), "x_"+w, w+"_token", w+"token", "a-"+w+"-", w[1:], w[:len(w)-1],
			strings.Repeat("y", 64-len(w))+w, strings.Repeat("y", 65-len(w))+w, strings.Repeat("_", 80)+w)
	}
	return out
}
