// Package format reads agent traces in every supported format (SPEC section
// 7) and normalises them to an engine.Trace.
//
// A document is read once (JSON, JSON Lines or Server-Sent Events; see
// Form) into an Input of jsondoc.Values, and each Adapter of a Registry is
// asked in turn whether it recognises it (Detect); the first that does
// reads it (Parse). A built-in adapter is not asked when the keys of the
// document's records rule it out (its screen, shape.go), which picks the
// same adapter as asking every one. docs/formats.md lists the formats, the detection rules
// and how each format's calls, results and final answer are read.
//
// # Writing an adapter
//
// An adapter is a type with Name, Detect and Parse (plain.go is the one to
// copy), added to Builtin in detection order.
//
//   - Detect looks at Input.Object or Input.Records (jsondoc.Values:
//     Get, Elems, Members, Text, Str, Num, Bool, Kind) and answers cheaply
//     and specifically, with a reason naming what it saw.
//   - Parse walks the values and builds the trace with a builder
//     (in.newBuilder): add for each call, setArgs / setArgsText / setRaw for
//     its arguments, setResult or result (joined by id or name) for its
//     result, turn or final for the answer, then trace(). Arguments and
//     results are set only through the builder, never by assigning
//     engine.ToolCall's Args or Result.
//   - A value of the wrong shape is shapeErr(name, value, msg...) or
//     notFit(name, value, msg...) at that value (under(...) for a missing
//     member); the pointer and, for JSON Lines and SSE, the line are
//     worked out when the error is reported. Values an adapter assembles
//     itself (a streamed message put back together) are read with
//     builder.synth.
//   - A built-in adapter also has a screen (mayDetect, shape.go): a
//     necessary condition of its Detect on the keys of the records, which
//     FuzzScreen checks against Detect itself.
//
// Every function here is pure and safe for concurrent use.
package format

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
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
	// Warning is set when the trace has no calls although the document
	// holds what looks like tool calls or results (or, for LangSmith, llm
	// runs that asked for tools no run recorded): it says so and names the
	// first places. Reason ends with it too. "" otherwise.
	Warning string `json:"warning,omitempty"`
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
	// Pointer is an RFC 6901 JSON pointer to the offending value, within
	// the record for JSON Lines and SSE input.
	Pointer string
	// Line is the 1-based line where the offending record starts, for JSON
	// Lines and SSE input; 0 otherwise.
	Line int
	// Msg says what is wrong.
	Msg string

	// at is the offending value and below the pointer tokens under it
	// (for a member that is missing); Registry.Parse turns them into
	// Pointer and Line.
	at    jsondoc.Value
	below []any
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

// shapeErr builds the *ShapeError of an adapter (format is its name) for
// the value at; its pointer is worked out only when the error is reported.
func shapeErr(format string, at jsondoc.Value, msg string, args ...any) *ShapeError {
	return &ShapeError{Format: format, Msg: fmt.Sprintf(msg, args...), at: at}
}

// under makes the error point below its value, at the tokens (strings and
// ints): a member or element that is missing or of the wrong kind.
func (e *ShapeError) under(tokens ...any) *ShapeError {
	e.below = append(e.below, tokens...)
	return e
}

// notFit builds the *ShapeError for a value v that is not what the format
// reads there: msg, then what v is ("found an object with keys args,
// tool").
func notFit(format string, v jsondoc.Value, msg string, args ...any) *ShapeError {
	e := shapeErr(format, v, msg, args...)
	e.Msg += " (found " + shapeOf(v) + ")"
	return e
}

// shapeOf names a value for an error: a short string is quoted, an object
// lists its keys (at most 8), anything else is its type.
func shapeOf(v jsondoc.Value) string {
	switch v.Kind() {
	case jsondoc.String:
		if t := v.Text(); len(t) <= 40 {
			return strconv.Quote(t)
		}
	case jsondoc.Object:
		if v.Len() == 0 {
			return "an empty object"
		}
		return "an object with keys " + keyList(v)
	}
	return aType(v)
}

// keyList lists an object's keys in order, at most 8 of them.
func keyList(v jsondoc.Value) string {
	var keys []string
	for k := range v.Members() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > 8 {
		keys = append(keys[:8], "...")
	}
	return strings.Join(keys, ", ")
}

// locate fills se's Pointer and Line from its value: the value's pointer in
// the document followed by the tokens below it; for JSON Lines and SSE the
// line of the record and the pointer within it. A value that is not in the
// document (one an adapter read from argument text or assembled from a
// stream) gives the tokens alone.
func (in *Input) locate(se *ShapeError) {
	if se.at.Doc() == nil && se.below == nil {
		return // built by hand, already located
	}
	var b strings.Builder
	if se.at.Doc() == in.value.Doc() && se.at.Doc() != nil {
		p := se.at.Pointer()
		if in.sub {
			p = strings.TrimPrefix(p, in.value.Pointer())
		}
		b.WriteString(p)
	}
	for _, t := range se.below {
		b.WriteByte('/')
		switch t := t.(type) {
		case string:
			b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
		default:
			fmt.Fprint(&b, t)
		}
	}
	se.Pointer = b.String()
	if in.Form == FormJSON || se.at.Doc() != in.value.Doc() {
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

// Registry is an ordered set of adapters. Detection asks them in order and
// the first that recognises a document reads it. A Registry is immutable
// and safe for concurrent use.
type Registry struct {
	adapters []Adapter
	// screens holds each adapter's screener, nil for an adapter that has
	// none (every adapter not built in): see shape.go.
	screens []screener
	byName  map[string]Adapter
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
		sc, _ := a.(screener)
		r.screens = append(r.screens, sc)
	}
	return r, nil
}

// Builtin returns the built-in adapters in their detection order: the most
// specific first, the OpenAI Chat messages (the most generic shape) last.
// Callers may add their own adapters to this list and build a Registry.
func Builtin() []Adapter {
	return []Adapter{
		plainAdapter{},
		pydanticAIAdapter{},
		aiSDKAdapter{},
		openAIAgentsAdapter{},
		langSmithAdapter{},
		mcpLogAdapter{},
		googleADKAdapter{},
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

// aliases are other names Parse accepts for a format: "custom" is Python
// Toolscore's name for the plain shapes.
var aliases = map[string]string{"custom": "plain"}

// Names lists the format names Parse accepts besides "auto" (and the
// alias "custom", Python Toolscore's name for "plain"), in detection
// order.
func Names() []string { return builtin.Names() }

// Known reports whether Parse accepts name as a format: "auto", "", one
// of Names() or an alias ("custom").
func Known(name string) bool {
	if name == "" || name == "auto" || aliases[name] != "" {
		return true
	}
	return slices.Contains(builtin.Names(), name)
}

// Parse reads a trace from data with the built-in adapters; see
// Registry.Parse.
func Parse(data []byte, name string) (*Parsed, error) { return builtin.Parse(data, name) }

// ParseValue reads a trace that is already a JSON value with the built-in
// adapters; see Registry.ParseValue.
func ParseValue(v jsondoc.Value, name string) (*Parsed, error) { return builtin.ParseValue(v, name) }

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
	a, requested, err := r.adapter(name)
	if err != nil {
		return nil, err
	}
	st := newParseState()
	if err := st.in.read(string(data), nil); err != nil {
		return nil, fmt.Errorf("%w: %w", engine.ErrInvalidTrace, err)
	}
	if err := r.parse(&st.in, a, requested, &st.out); err != nil {
		return nil, err
	}
	return &st.out, nil
}

// parseState is what one Parse or ParseValue allocates at once: the
// Input, the builder its adapter gets first (in.newBuilder) and the
// result.
type parseState struct {
	in  Input
	b   builder
	out Parsed
}

func newParseState() *parseState {
	st := new(parseState)
	st.b.dec = &st.b.own
	st.in.scratch = &st.b
	return st
}

// ParseValue reads a trace that is already a JSON value, such as the
// "trace" member of an API request read once with jsondoc: it is read as a
// FormJSON document holding v, without decoding v's text again, and name
// is as for Parse. Errors are Parse's for v's text alone: a *ShapeError's
// Pointer is relative to v.
func (r *Registry) ParseValue(v jsondoc.Value, name string) (*Parsed, error) {
	a, requested, err := r.adapter(name)
	if err != nil {
		return nil, err
	}
	st := newParseState()
	st.in.setValue(v)
	if err := r.parse(&st.in, a, requested, &st.out); err != nil {
		return nil, err
	}
	return &st.out, nil
}

// adapter returns the adapter a format name forces (nil for "auto" and
// ""), and the name as requested.
func (r *Registry) adapter(name string) (Adapter, string, error) {
	requested := name
	if alias, ok := aliases[name]; ok && r.byName[name] == nil {
		name = alias
	}
	if name == "" || name == "auto" {
		return nil, requested, nil
	}
	a, ok := r.byName[name]
	if !ok {
		return nil, requested, fmt.Errorf("%w: unknown format %q (known: auto, %s)", engine.ErrInvalidTrace, requested, strings.Join(r.Names(), ", "))
	}
	return a, requested, nil
}

// parse detects the format of in (unless a is forced) and reads it into
// p.
func (r *Registry) parse(in *Input, a Adapter, requested string, p *Parsed) error {
	var reason string
	if a != nil {
		reason = "format " + requested + " was requested"
	} else {
		a, reason = r.detect(in)
		if a == nil {
			return fmt.Errorf("%w: no known format fits %s (tried %s)", engine.ErrInvalidTrace, describe(in), strings.Join(r.Names(), ", "))
		}
	}
	t, err := a.Parse(in)
	if err != nil {
		var se *ShapeError
		if errors.As(err, &se) {
			in.locate(se)
			return fmt.Errorf("%w: %w", engine.ErrInvalidTrace, se)
		}
		return fmt.Errorf("%w: %s: %w", engine.ErrInvalidTrace, a.Name(), err)
	}
	if t.Calls == nil {
		t.Calls = []engine.ToolCall{}
	}
	*p = Parsed{Format: a.Name(), Reason: reason, Form: in.Form, Trace: t}
	if len(t.Calls) == 0 {
		if n, ok := a.(noCallsNoter); ok {
			p.Warning = n.noCalls(in)
		} else {
			p.Warning = unreadToolContent(in, a.Name())
		}
		if p.Warning != "" {
			p.Reason += "; " + p.Warning
		}
	}
	return nil
}

// detect returns the first adapter whose Detect recognises in, and its
// reason (nil when none does). An adapter that a screen rules out for in's
// shape is not asked; the shape is read when the first screen needs it.
func (r *Registry) detect(in *Input) (Adapter, string) {
	var s shape
	read := false
	for i, c := range r.adapters {
		if sc := r.screens[i]; sc != nil {
			if !read {
				s, read = in.readShape(), true
			}
			if !sc.mayDetect(&s) {
				continue
			}
		}
		if why, ok := c.Detect(in); ok {
			return c, why
		}
	}
	return nil, ""
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
	v := in.value
	if in.Form != FormJSON {
		if len(in.recs) == 0 {
			return where + " (no records)"
		}
		where += "'s first record"
		v = in.recs[0]
	}
	switch v.Kind() {
	case jsondoc.Object:
		if v.Len() == 0 {
			return where + " (an empty JSON object)"
		}
		return where + " (a JSON object with keys " + keyList(v) + ")"
	case jsondoc.Array:
		if v.Len() == 0 {
			return where + " (an empty JSON array)"
		}
		if e := v.Index(0); e.Kind() == jsondoc.Object {
			return where + " (a JSON array whose first element has keys " + keyList(e) + ")"
		}
		return where + " (a JSON array whose first element is " + aType(v.Index(0)) + ")"
	}
	return where + " (" + aType(v) + ")"
}

// aType names the JSON type of a value with its article: "a string", "an
// object", "null".
func aType(v jsondoc.Value) string {
	switch t := v.Kind().String(); t {
	case "null", "invalid":
		return "null"
	case "object", "array":
		return "an " + t
	default:
		return "a " + t
	}
}
