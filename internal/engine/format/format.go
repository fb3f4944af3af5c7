// Package format reads agent traces in every supported format (SPEC section
// 7) and normalises them to an engine.Trace.
//
// A document is decoded once (JSON, JSON Lines or Server-Sent Events; see
// Form) into an Input, and each Adapter of a Registry is asked in turn
// whether it recognises it (Detect); the first that does reads it (Parse).
// docs/formats.md lists the formats, the detection rules and how each
// format's calls, results and final answer are read.
//
// Every function here is pure and safe for concurrent use.
package format

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
)

// Parsed is a trace read from one document: the format it was read as,
// why that format was chosen, and the normalised trace.
type Parsed struct {
	// Format is the adapter's name, such as "plain", "openai", "anthropic".
	Format string `json:"format"`
	// Reason says why the format was detected (or that it was forced).
	Reason string `json:"reason"`
	// Form is how the document was written: json, jsonl or sse.
	Form Form `json:"form"`
	// Trace is the normalised trace. Trace.Calls is never nil.
	Trace engine.Trace `json:"trace"`
}

// Adapter reads one trace format. Implementations must be safe for
// concurrent use, must not modify the Input, and must not panic on any
// Input.
type Adapter interface {
	// Name is the format's name, as given to Parse to force the format:
	// lowercase letters, digits and "-".
	Name() string
	// Detect reports whether the document looks like this format, and why
	// (one short sentence naming what was seen). It must be cheap and
	// specific: a document it accepts should not fit another format.
	Detect(in *Input) (reason string, ok bool)
	// Parse reads the calls and the final answer. It checks the shape of
	// every message or record it reads, so that a document of another
	// format, forced on it, is an error and never a trace with 0 calls; a
	// document of the right shape with no tool calls reads with 0 calls.
	// An error says what does not fit the format; a *ShapeError locates it.
	Parse(in *Input) (engine.Trace, error)
}

// ShapeError is a document whose shape does not fit the format it is read
// as. It matches engine.ErrInvalidTrace with errors.Is.
type ShapeError struct {
	// Format is the adapter's name.
	Format string
	// Pointer is an RFC 6901 JSON pointer to the offending value. For JSON
	// Lines and SSE input its first token is the record's index.
	Pointer string
	// Line is the 1-based line where the offending record starts, for JSON
	// Lines and SSE input; 0 otherwise.
	Line int
	// Msg says what is wrong.
	Msg string
}

// Error formats the error as "format: /pointer: msg", or for JSON Lines
// and SSE input "format: line L: /pointer: msg" (the pointer within the
// record, left out when it is the record itself).
func (e *ShapeError) Error() string {
	var b strings.Builder
	b.WriteString(e.Format)
	b.WriteString(": ")
	switch {
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
		if e.Pointer != "" {
			b.WriteString(e.Pointer)
			b.WriteString(": ")
		}
	case e.Pointer == "":
		b.WriteString("/: ")
	default:
		b.WriteString(e.Pointer)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Is reports whether target is engine.ErrInvalidTrace.
func (e *ShapeError) Is(target error) bool { return target == engine.ErrInvalidTrace }

// loc is the place of a value as JSON pointer tokens, kept cheap because
// it is passed for every message and turned into tokens only for an error:
// the parent's tokens, then idx when idx >= 0.
type loc struct {
	parent []any
	idx    int
}

// root is the place of the document itself, or of the value the tokens
// point to.
func root(tokens ...any) loc { return loc{parent: tokens, idx: -1} }

// elem is the place of element i of the value at l.
func (l loc) elem(i int) loc {
	if l.idx < 0 {
		return loc{parent: l.parent, idx: i}
	}
	return loc{parent: l.tokens(), idx: i}
}

// tokens returns l's pointer tokens followed by k, in a new slice.
func (l loc) tokens(k ...any) []any {
	p := make([]any, 0, len(l.parent)+1+len(k))
	p = append(p, l.parent...)
	if l.idx >= 0 {
		p = append(p, l.idx)
	}
	return append(p, k...)
}

// shapeErr builds a *ShapeError; parts are the pointer's tokens (strings or
// ints).
func shapeErr(format string, parts []any, msg string, args ...any) *ShapeError {
	return &ShapeError{Format: format, Pointer: pointer(parts...), Msg: fmt.Sprintf(msg, args...)}
}

// notFit builds the *ShapeError for a value v, at the place parts, that is
// not what the format reads there: msg, then what v is ("found an object
// with keys args, tool").
func notFit(format string, parts []any, v any, msg string, args ...any) *ShapeError {
	e := shapeErr(format, parts, msg, args...)
	e.Msg += " (found " + shapeOf(v) + ")"
	return e
}

// shapeOf names a decoded value for an error: a short string is quoted, an
// object lists its keys (at most 8), anything else is its type.
func shapeOf(v any) string {
	switch t := v.(type) {
	case string:
		if len(t) <= 40 {
			return strconv.Quote(t)
		}
	case map[string]any:
		if len(t) == 0 {
			return "an empty object"
		}
		return "an object with keys " + keyList(t)
	}
	return aType(v)
}

// keyList lists an object's keys in order, at most 8 of them.
func keyList(m map[string]any) string {
	keys := slices.Sorted(maps.Keys(m))
	if len(keys) > 8 {
		keys = append(keys[:8], "...")
	}
	return strings.Join(keys, ", ")
}

// pointer builds an RFC 6901 JSON pointer from string and int tokens.
func pointer(parts ...any) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteByte('/')
		switch t := p.(type) {
		case string:
			b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
		case int:
			b.WriteString(strconv.Itoa(t))
		default:
			fmt.Fprint(&b, t)
		}
	}
	return b.String()
}

// Registry is an ordered set of adapters. Detection asks them in order and
// the first that recognises a document reads it. A Registry is immutable
// and safe for concurrent use.
type Registry struct {
	adapters []Adapter
	byName   map[string]Adapter
}

// NewRegistry returns a registry of the adapters in detection order. Names
// must be non-empty, unique and not "auto".
func NewRegistry(adapters ...Adapter) (*Registry, error) {
	r := &Registry{byName: make(map[string]Adapter, len(adapters))}
	for _, a := range adapters {
		n := a.Name()
		if n == "" || n == "auto" {
			return nil, fmt.Errorf("format: adapter name %q is reserved", n)
		}
		if _, dup := r.byName[n]; dup {
			return nil, fmt.Errorf("format: two adapters are named %q", n)
		}
		r.byName[n] = a
		r.adapters = append(r.adapters, a)
	}
	return r, nil
}

// Builtin returns the built-in adapters in their detection order: the most
// specific first, the OpenAI Chat messages (the most generic shape) last.
// Callers may add their own adapters to this list and build a Registry.
func Builtin() []Adapter {
	return []Adapter{
		plainAdapter{},
		mcpAdapter{},
		otelAdapter{},
		openAIStreamAdapter{},
		responsesStreamAdapter{},
		anthropicStreamAdapter{},
		geminiStreamAdapter{},
		langchainAdapter{},
		geminiAdapter{},
		responsesAdapter{},
		anthropicAdapter{},
		openAIAdapter{},
	}
}

var builtin = func() *Registry {
	r, err := NewRegistry(Builtin()...)
	if err != nil {
		panic(err) // A programmer error in Builtin, caught by every test.
	}
	return r
}()

// Names lists the format names Parse accepts besides "auto", in detection
// order.
func Names() []string { return builtin.Names() }

// Parse reads a trace from data with the built-in adapters; see
// Registry.Parse.
func Parse(data []byte, name string) (*Parsed, error) { return builtin.Parse(data, name) }

// Names lists the registry's format names in detection order.
func (r *Registry) Names() []string {
	names := make([]string, len(r.adapters))
	for i, a := range r.adapters {
		names[i] = a.Name()
	}
	return names
}

// Parse reads a trace from data: one JSON value, JSON Lines or SSE text
// (see Form). name is "auto" (or "") to detect the format, or one of
// Names() to force it.
//
// data is copied once and not kept, so the caller may reuse it; strings in
// the returned trace may share memory with that copy, which therefore lives
// as long as the trace.
//
// Every error wraps engine.ErrInvalidTrace. Malformed JSON gives an
// *engine.SyntaxError (line:column in data); a document no adapter
// recognises gives an error listing the formats tried; a document that does
// not fit the chosen format (detected or forced) gives a *ShapeError naming
// the format and the place (docs/formats.md section 2 gives each format's
// rule).
func (r *Registry) Parse(data []byte, name string) (*Parsed, error) {
	var a Adapter
	if name != "" && name != "auto" {
		var ok bool
		if a, ok = r.byName[name]; !ok {
			return nil, fmt.Errorf("%w: unknown format %q (known: auto, %s)", engine.ErrInvalidTrace, name, strings.Join(r.Names(), ", "))
		}
	}
	in, err := readInput(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", engine.ErrInvalidTrace, err)
	}
	var reason string
	if a != nil {
		reason = "format " + name + " was requested"
	} else {
		for _, c := range r.adapters {
			if why, ok := c.Detect(in); ok {
				a, reason = c, why
				break
			}
		}
		if a == nil {
			return nil, fmt.Errorf("%w: no known format fits %s (tried %s)", engine.ErrInvalidTrace, describe(in), strings.Join(r.Names(), ", "))
		}
	}
	t, err := a.Parse(in)
	if err != nil {
		var se *ShapeError
		if errors.As(err, &se) {
			locateRecord(in, se)
			return nil, fmt.Errorf("%w: %w", engine.ErrInvalidTrace, se)
		}
		return nil, fmt.Errorf("%w: %s: %w", engine.ErrInvalidTrace, a.Name(), err)
	}
	if t.Calls == nil {
		t.Calls = []engine.ToolCall{}
	}
	return &Parsed{Format: a.Name(), Reason: reason, Form: in.Form, Trace: t}, nil
}

// locateRecord turns the leading record index of a JSON Lines or SSE
// error's pointer into a line number.
//
// A lone JSON value that is not an array is read by the list formats as a
// list of one record (Input.Records); the leading "/0" of its pointers is
// dropped, so they point into the document.
func locateRecord(in *Input, se *ShapeError) {
	if in.Form == FormJSON {
		if _, isArr := in.Value.([]any); !isArr && se.Pointer != "" {
			if rest, ok := strings.CutPrefix(se.Pointer, "/0"); ok && (rest == "" || rest[0] == '/') {
				se.Pointer = rest
			}
		}
		return
	}
	if se.Line != 0 {
		return
	}
	tok, rest, _ := strings.Cut(strings.TrimPrefix(se.Pointer, "/"), "/")
	i, err := strconv.Atoi(tok)
	if err != nil {
		return
	}
	if line := in.recordLine(i); line > 0 {
		se.Line = line
		se.Pointer = ""
		if rest != "" {
			se.Pointer = "/" + rest
		}
	}
}

// describe names the shape of a document for the "no format fits" error.
func describe(in *Input) string {
	where := "the document"
	switch in.Form {
	case FormJSONLines:
		where = "the JSON Lines document"
	case FormSSE:
		where = "the SSE stream"
	}
	v := in.Value
	if in.Form != FormJSON {
		recs := in.Records()
		if len(recs) == 0 {
			return where + " (no records)"
		}
		where += "'s first record"
		v = recs[0]
	}
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			return where + " (an empty JSON object)"
		}
		return where + " (a JSON object with keys " + keyList(t) + ")"
	case []any:
		if len(t) == 0 {
			return where + " (an empty JSON array)"
		}
		if m, ok := t[0].(map[string]any); ok {
			return where + " (a JSON array whose first element has keys " + keyList(m) + ")"
		}
		return where + " (a JSON array whose first element is " + aType(t[0]) + ")"
	}
	return where + " (" + aType(v) + ")"
}

// aType names the JSON type of a decoded value with its article: "a
// string", "an object", "null".
func aType(v any) string {
	switch t := jsonType(v); t {
	case "null":
		return t
	case "object", "array":
		return "an " + t
	default:
		return "a " + t
	}
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return "number"
}
