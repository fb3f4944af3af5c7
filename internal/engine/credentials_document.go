package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolscore/toolscore/internal/engine/secretscan"
)

// RedactDocument returns the JSON document doc (a contract, a gold file,
// a grading rule) with the secrets written in it hidden as a result
// shows a contract's expected arguments (docs/checks.md "Secrets written
// in the contract"): every secret s finds in a string value or an object
// key replaced by "[REDACTED:<rule>]", and the literal value of a
// secret-named key (see the credentials check's secret-named rule; the
// elements of an array under it, and the values of the matchers $regex,
// $one_of and $contains under it, too) by "[REDACTED:secret-named-argument]". All
// strings are scanned in one call to s (nil: secret-named keys only).
//
// It returns doc itself when nothing is hidden; otherwise the document
// re-encoded (object keys sorted, no HTML escaping, no white space),
// which no longer has doc's hash. doc is never modified. Time is linear
// in its size plus what s takes.
//
// Errors: doc is not one JSON value; the scan is incomplete (ctx ended),
// with what was found hidden in the document returned.
func RedactDocument(ctx context.Context, doc []byte, s SecretScanner) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return doc, fmt.Errorf("redact document: %w", err)
	}
	var texts []string
	var collect func(v any)
	collect = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				texts = append(texts, k)
				collect(e)
			}
		case []any:
			for _, e := range x {
				collect(e)
			}
		case string:
			if x != "" {
				texts = append(texts, x)
			}
		}
	}
	collect(v)
	// shownAs maps each text holding a secret to its redacted form.
	shownAs := map[string]string{}
	var scanErr error
	if s != nil && len(texts) > 0 {
		var red []string
		red, scanErr = secretscan.Redact(ctx, s, texts)
		for i, t := range texts {
			if red[i] != t {
				shownAs[t] = red[i]
			}
		}
	}
	changed := false
	var hide func(v any, secretKey bool) any
	hide = func(v any, secretKey bool) any {
		switch x := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				under := isSecretKey(k) || secretKey && (k == "$regex" || k == "$one_of" || k == "$contains")
				nk, ok := shownAs[k]
				if !ok {
					nk = k
				}
				for _, taken := out[nk]; taken; _, taken = out[nk] {
					nk += "'" // two keys that redact alike stay apart
				}
				changed = changed || nk != k
				out[nk] = hide(e, under)
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = hide(e, secretKey)
			}
			return out
		case string, json.Number:
			if secretKey {
				if _, ok := literalSecret(x); ok {
					changed = true
					return redactionMarker(RuleSecretNamedArgument)
				}
			}
			if str, ok := x.(string); ok {
				if r, ok := shownAs[str]; ok {
					changed = true
					return r
				}
			}
		}
		return v
	}
	shown := hide(v, false)
	if !changed {
		return doc, scanErr
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(shown); err != nil {
		return doc, fmt.Errorf("redact document: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), scanErr
}
