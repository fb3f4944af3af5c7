package engine

import (
	"cmp"
	"encoding/json"
	"maps"
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
	// exact lists, per call index, its secret-named argument values to
	// replace whole.
	exact map[int][]exactRedaction
}

// exactRedaction is an argument value to replace whole: its path segments
// and its marker.
type exactRedaction struct {
	segs   []string
	marker string
}

// newRedactor builds the redactor for a scan's findings.
func newRedactor(findings []credentialFinding) *redactor {
	r := &redactor{}
	type pair struct{ secret, marker string }
	var pairs []pair
	for _, f := range findings {
		if f.exact {
			if r.exact == nil {
				r.exact = map[int][]exactRedaction{}
			}
			r.exact[f.Call] = append(r.exact[f.Call], exactRedaction{segs: f.segs, marker: redactionMarker(f.Rule)})
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
	if c.Args != nil {
		if v, changed := r.value(c.Args); changed {
			c.Args = v.(map[string]any)
		}
		for _, e := range r.exact[i] {
			if v, changed := replaceAt(c.Args, e.segs, e.marker); changed {
				c.Args = v.(map[string]any)
			}
		}
	}
	if c.Result != nil {
		if v, changed := r.value(c.Result); changed {
			c.Result = v
		}
	}
	c.ArgsRaw = r.text(c.ArgsRaw)
	c.Error = CallError(r.text(string(c.Error)))
	return c
}

// value returns v with every globally replaced secret replaced, and
// whether anything changed; maps and slices are copied only where
// something changes.
func (r *redactor) value(v any) (any, bool) {
	if r.repl == nil {
		return v, false
	}
	switch x := v.(type) {
	case string:
		s := r.text(x)
		return s, s != x
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			ne, changed := r.value(e)
			if changed {
				if out == nil {
					out = maps.Clone(x)
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
			ne, changed := r.value(e)
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

// replaceAt returns v with the string or number at the path segs replaced
// by marker, copying the maps and slices along the path, and whether
// anything changed (false when the path does not lead to a string or a
// number).
func replaceAt(v any, segs []string, marker string) (any, bool) {
	if len(segs) == 0 {
		switch v.(type) {
		case string, json.Number:
			return marker, true
		}
		return v, false
	}
	switch x := v.(type) {
	case map[string]any:
		e, ok := x[segs[0]]
		if !ok {
			return v, false
		}
		ne, changed := replaceAt(e, segs[1:], marker)
		if !changed {
			return v, false
		}
		out := maps.Clone(x)
		out[segs[0]] = ne
		return out, true
	case []any:
		i, err := strconv.Atoi(segs[0])
		if err != nil || i < 0 || i >= len(x) {
			return v, false
		}
		ne, changed := replaceAt(x[i], segs[1:], marker)
		if !changed {
			return v, false
		}
		out := slices.Clone(x)
		out[i] = ne
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
