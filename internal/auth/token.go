package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"strings"
)

// TokenPrefix starts every key NewToken makes, so that a leaked key is
// recognisable (by people and by secret scanners).
const TokenPrefix = "tsk_"

// tokenEncoding is lowercase base32 without padding: URL- and
// shell-safe, no look-alike case pairs.
var tokenEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// MinTokenLength is the shortest token Authenticate and a bootstrap key
// accept. NewToken's are 56 characters.
const MinTokenLength = 32

// NewToken returns a new random key: TokenPrefix and 52 base32 characters
// (32 bytes from crypto/rand).
//
// Errors: only if the system's random source fails.
func NewToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("new token: %w", err)
	}
	return TokenPrefix + tokenEncoding.EncodeToString(b[:]), nil
}

// Hash returns the SHA-256 of a token, the only form in which keys are
// stored.
//
// A plain SHA-256 is enough here, where a password would need a slow,
// salted hash (bcrypt, argon2): a key is 256 random bits, not something a
// person chose, so there is no dictionary to try and no feasible brute
// force against even a leaked hash, and salting guards only against
// precomputed tables of likely inputs, which do not exist for random
// tokens. A fast hash also keeps checking a key on a cache miss to
// microseconds.
func Hash(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// Lookup returns the first 8 bytes of a key's hash: the indexed column
// that finds the candidate rows of a token, whose whole hash is then
// compared in constant time. Lookups may collide; hashes do not.
func Lookup(hash [32]byte) []byte { return hash[:8:8] }

// DisplayPrefix returns the part of a token that may be shown and logged
// to tell keys apart: TokenPrefix and the next 8 characters (40 of the
// token's 260 bits, leaving 220 secret) for tokens NewToken made, "" for
// any other (a bootstrap key chosen by an operator, whose characters are
// all secret).
func DisplayPrefix(token string) string {
	if strings.HasPrefix(token, TokenPrefix) && len(token) >= len(TokenPrefix)+52 {
		return token[:len(TokenPrefix)+8]
	}
	return ""
}

// CheckToken reports why a token cannot be a key: shorter than
// MinTokenLength, longer than 512 bytes, or holding anything but printable
// ASCII without spaces; nil when it can.
func CheckToken(token string) error {
	if len(token) < MinTokenLength || len(token) > 512 {
		return fmt.Errorf("a key is %d to 512 characters, got %d", MinTokenLength, len(token))
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; c <= ' ' || c > '~' {
			return fmt.Errorf("a key holds only printable ASCII without spaces")
		}
	}
	return nil
}
