package engine

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// minGlobalSecretLen is the shortest secret-named argument value that is
// also replaced wherever else it occurs (results, other calls, the final
// answer, check details). Shorter values are replaced only at their own
// argument path: replacing "abcd" everywhere would garble unrelated text.
// Secrets found by the gitleaks rules are replaced everywhere.
const minGlobalSecretLen = 6

// redactor replaces detected secrets in values a result returns. The zero
// value (no findings) replaces nothing.
type redactor struct {
	// repl replaces every secret that is replaced everywhere; nil when
	// there is none.
	repl *strings.Replacer
	// exact maps a call index to the JSON pointers of its secret-named
	// argument values, each to its marker.
	exact map[int]map[string]string
}

// newRedactor builds the redactor for a scan's findings.
func newRedactor(findings []credentialFinding) *redactor {
	r := &redactor{}
	type pair struct{ secret, marker string }
	var pairs []pair
	for _, f := range findings {
		if f.exact {
			if r.exact == nil {
				r.exact = map[int]map[string]string{}
			}
			if r.exact[f.Call] == nil {
				r.exact[f.Call] = map[string]string{}
			}
			r.exact[f.Call][f.Path] = redactionMarker(f.Rule)
			if len(f.secret) < minGlobalSecretLen {
				continue
			}
		}
		pairs = append(pairs, pair{f.secret, redactionMarker(f.Rule)})
	}
	if len(pairs) == 0 {
		return r
	}
	// Longer secrets first, so a secret that contains another is replaced
	// whole; then by text, for a deterministic marker per secret.
	slices.SortStableFunc(pairs, func(a, b pair) int {
		if c := cmp.Compare(len(b.secret), len(a.secret)); c != 0 {
			return c
		}
		return strings.Compare(a.secret, b.secret)
	})
	args := make([]string, 0, 2*len(pairs))
	for i, p := range pairs {
		if i > 0 && p.secret == pairs[i-1].secret {
			continue
		}
		args = append(args, p.secret, p.marker)
	}
	r.repl = strings.NewReplacer(args...)
	return r
}

// active reports whether the redactor replaces anything.
func (r *redactor) active() bool { return r.repl != nil || len(r.exact) > 0 }

// text returns s with every globally replaced secret replaced.
func (r *redactor) text(s string) string {
	if r.repl == nil {
		return s
	}
	return r.repl.Replace(s)
}

// call returns a copy of c with its secrets replaced in Args, Result,
// ArgsRaw and Error; maps and slices are copied only where something
// changes, so the caller's trace is never modified. i is c's trace index.
func (r *redactor) call(i int, c ToolCall) ToolCall {
	if !r.active() {
		return c
	}
	exact := r.exact[i]
	if c.Args != nil {
		var segs []string
		if v, changed := r.value(c.Args, exact, &segs); changed {
			c.Args = v.(map[string]any)
		}
	}
	if c.Result != nil {
		if v, changed := r.value(c.Result, nil, nil); changed {
			c.Result = v
		}
	}
	c.ArgsRaw = r.text(c.ArgsRaw)
	c.Error = CallError(r.text(string(c.Error)))
	return c
}

// value returns v with secrets replaced and whether anything changed.
// exact maps JSON pointers to markers for whole values to replace; segs is
// the path stack of v (nil when exact is empty).
func (r *redactor) value(v any, exact map[string]string, segs *[]string) (any, bool) {
	if len(exact) > 0 {
		if m, ok := exact[pointerOf(*segs)]; ok {
			switch v.(type) {
			case string, json.Number:
				return m, true
			}
		}
	}
	switch x := v.(type) {
	case string:
		s := r.text(x)
		return s, s != x
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if len(exact) > 0 {
				*segs = append(*segs, k)
			}
			ne, changed := r.value(e, exact, segs)
			if len(exact) > 0 {
				*segs = (*segs)[:len(*segs)-1]
			}
			if changed {
				if out == nil {
					out = make(map[string]any, len(x))
					for k2, e2 := range x {
						out[k2] = e2
					}
				}
				out[k] = ne
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	case []any:
		var out []any
		for i, e := range x {
			if len(exact) > 0 {
				*segs = append(*segs, strconv.Itoa(i))
			}
			ne, changed := r.value(e, exact, segs)
			if len(exact) > 0 {
				*segs = (*segs)[:len(*segs)-1]
			}
			if changed {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = ne
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	}
	return v, false
}

// pointerOf joins path segments into a JSON pointer.
func pointerOf(segs []string) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(escapePointer(s))
	}
	return b.String()
}
