package format

import (
	"errors"
	"strconv"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// builder collects the calls of one trace, joins tool results to them and
// keeps the final answer. Adapters fill a call's arguments and result only
// through it (setArgs, setArgsText, setRaw, setResult, result), never by
// assigning engine.ToolCall's Args or Result, so that the representation
// of values can change under them. Joining costs O(1) amortised per result, so a
// trace with many calls never costs quadratic time.
type builder struct {
	calls []engine.ToolCall
	done  []bool // done[i]: calls[i] has its result
	// byID maps an id to the earliest call with that id still waiting,
	// dupIDs to the later ones, in order; both are filled only once
	// indexed is set (popID), before which the few waiting calls a
	// result can be for are looked at instead.
	byID    map[string]int
	dupIDs  map[string][]int
	indexed bool
	noScan  bool // tests: index the ids from the first result on
	anyID   bool
	byName  map[string][]int // built on first use: few formats join by name
	head    int              // calls before head all have their result
	final   *string          // set by formats that give the answer directly
	answer  string           // the latest turn's text, when turned is true
	turned  bool
	// dec reads the argument texts of the trace: own, or the parser of
	// the Reader that read the document.
	dec *jsondoc.Parser
	own jsondoc.Parser
}

func newBuilder() *builder {
	b := &builder{}
	b.dec = &b.own
	return b
}

// newBuilder returns the builder of a Parse of in: the scratch builder of
// the Reader that read in (its buffers reused, its argument texts read
// with the Reader's parser) the first time, else a new one.
func (in *Input) newBuilder() *builder {
	b := in.scratch
	if b == nil {
		return newBuilder()
	}
	in.scratch = nil
	byID, dupIDs := b.byID, b.dupIDs
	clear(byID)
	clear(dupIDs)
	clear(b.calls[:cap(b.calls)]) // no earlier trace is kept alive by it
	*b = builder{calls: b.calls[:0], done: b.done[:0], byID: byID, dupIDs: dupIDs, dec: b.dec}
	return b
}

// add appends a call and returns its index.
func (b *builder) add(c engine.ToolCall) int {
	i := len(b.calls)
	if cap(b.calls) == 0 {
		b.calls = make([]engine.ToolCall, 0, firstCalls)
		b.done = make([]bool, 0, firstCalls)
	}
	b.calls = append(b.calls, c)
	b.done = append(b.done, false)
	if c.ID != "" {
		b.anyID = true
		if b.indexed {
			b.index(i)
		}
	}
	if b.byName != nil {
		b.byName[c.Tool] = append(b.byName[c.Tool], i)
	}
	return i
}

// firstCalls is the room a builder's first call makes for calls.
const firstCalls = 8

// scanIDs is how many calls from the earliest one still waiting popID
// looks at for the id of a result before it indexes the ids: results
// usually come soon after their calls.
const scanIDs = 8

// index adds call i, which has an id, to byID or dupIDs.
func (b *builder) index(i int) {
	id := b.calls[i].ID
	if _, dup := b.byID[id]; dup {
		if b.dupIDs == nil {
			b.dupIDs = map[string][]int{}
		}
		b.dupIDs[id] = append(b.dupIDs[id], i)
		return
	}
	if b.byID == nil {
		b.byID = map[string]int{}
	}
	b.byID[id] = i
}

// popID returns the earliest call with the id that has no result yet, or
// -1: one of the scanIDs calls from the earliest waiting one, else from
// the index of ids, made from the waiting calls the first time a result
// needs it (so that joining costs O(1) amortised per result).
func (b *builder) popID(id string) int {
	if !b.indexed {
		for b.head < len(b.calls) && b.done[b.head] {
			b.head++
		}
		end := len(b.calls)
		if !b.noScan {
			end = min(end, b.head+scanIDs)
			for i := b.head; i < end; i++ {
				if !b.done[i] && b.calls[i].ID == id {
					return i
				}
			}
		}
		if end == len(b.calls) && !b.noScan {
			return -1
		}
		b.indexed = true
		for i := b.head; i < len(b.calls); i++ {
			if !b.done[i] && b.calls[i].ID != "" {
				b.index(i)
			}
		}
	}
	for {
		i, ok := b.byID[id]
		if !ok {
			return -1
		}
		if more := b.dupIDs[id]; len(more) > 0 {
			b.byID[id] = more[0]
			b.dupIDs[id] = more[1:]
		} else {
			delete(b.byID, id)
		}
		if !b.done[i] {
			return i
		}
	}
}

// popName returns the earliest call of the tool that has no result yet,
// or -1.
func (b *builder) popName(name string) int {
	if b.byName == nil {
		b.byName = map[string][]int{}
		for i := b.head; i < len(b.calls); i++ {
			if !b.done[i] {
				b.byName[b.calls[i].Tool] = append(b.byName[b.calls[i].Tool], i)
			}
		}
	}
	l := b.byName[name]
	for len(l) > 0 && b.done[l[0]] {
		l = l[1:]
	}
	if len(l) == 0 {
		delete(b.byName, name)
		return -1
	}
	b.byName[name] = l[1:]
	return l[0]
}

// popFirst returns the earliest call with no result yet, or -1.
func (b *builder) popFirst() int {
	for b.head < len(b.calls) && b.done[b.head] {
		b.head++
	}
	if b.head == len(b.calls) {
		return -1
	}
	return b.head
}

// result joins a tool result to a call: with an id, to the earliest call of
// that id still waiting for its result (so duplicate ids pair in order);
// without one, to the earliest waiting call of that tool name, or when name
// is "" the earliest waiting call. errText is "" for success. It reports
// whether a call took the result; a result no call is waiting for is
// dropped.
func (b *builder) result(id, name string, result jsondoc.Value, errText string) bool {
	var i int
	switch {
	case id != "":
		i = b.popID(id)
	case name != "":
		i = b.popName(name)
	default:
		i = b.popFirst()
	}
	if i < 0 {
		return false
	}
	b.done[i] = true
	setResult(&b.calls[i], result)
	b.calls[i].Error = engine.CallError(errText)
	return true
}

// turn records the agent's latest turn: the final answer is its visible
// text when it made no tool calls, else none.
func (b *builder) turn(text string, madeCalls bool) {
	b.turned = true
	b.answer = text
	if madeCalls {
		b.answer = ""
	}
}

func (b *builder) trace() engine.Trace {
	calls := b.calls
	if calls == nil {
		calls = []engine.ToolCall{}
	}
	final := b.final
	if b.turned {
		final = visible(b.answer)
	}
	return engine.Trace{Calls: calls, FinalAnswer: final}
}

// visible returns &s, or nil when s is empty or only white space.
func visible(s string) *string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return &s
}

// setArgs fills c's arguments from a value (SPEC section 7): an object is
// taken as it is; null or absent means {}; a string is argument text,
// decoded strictly (setArgsText); anything else is kept as raw text with
// an error.
func (b *builder) setArgs(c *engine.ToolCall, v jsondoc.Value) {
	switch v.Kind() {
	case jsondoc.Invalid, jsondoc.Null:
		c.Args = emptyObject
	case jsondoc.Object:
		c.Args = v
	case jsondoc.String:
		b.setArgsText(c, v.Text())
	default:
		c.Args, c.ArgsRaw = jsondoc.Value{}, string(v.AppendJSON(nil))
		c.ArgsError = "arguments are " + aType(v) + ", not a JSON object"
	}
}

// emptyObject is the arguments of a call that has none: {}.
var emptyObject = jsondoc.MustFromAny(map[string]any{})

// setArgsText decodes argument text once, strictly, as one JSON object with
// numbers kept exactly. "" and white space mean {}. Invalid JSON, or JSON
// that is not an object, leaves Args nil with ArgsRaw the text and
// ArgsError the reason.
func (b *builder) setArgsText(c *engine.ToolCall, s string) {
	if strings.TrimSpace(s) == "" {
		c.Args = emptyObject
		return
	}
	v, err := b.dec.Parse(s)
	if err != nil {
		c.Args, c.ArgsRaw = jsondoc.Value{}, s
		var se *jsondoc.SyntaxError
		if errors.As(err, &se) {
			c.ArgsError = "invalid JSON at " + strconv.Itoa(se.Line) + ":" + strconv.Itoa(se.Column) + ": " + se.Msg
		} else {
			c.ArgsError = "invalid JSON: " + err.Error()
		}
		return
	}
	if v.Kind() != jsondoc.Object {
		c.Args, c.ArgsRaw = jsondoc.Value{}, s
		c.ArgsError = "arguments are " + aType(v) + ", not a JSON object"
		return
	}
	c.Args = v
}

// setResult sets c's result to v; JSON null and the zero Value mean none.
func setResult(c *engine.ToolCall, v jsondoc.Value) {
	if v.IsNull() {
		v = jsondoc.Value{}
	}
	c.Result = v
}

// setRaw keeps free-text input (OpenAI custom tools) as the call's raw
// arguments: such a call never satisfies an expected call's arguments.
func setRaw(c *engine.ToolCall, input string) {
	c.Args, c.ArgsRaw = jsondoc.Value{}, input
	c.ArgsError = "custom tool input is free text, not JSON arguments"
}

// errorText turns an error value of a trace into CallError text: a string
// as it is (or "true" when empty), true as "true", false, null and absent
// as "", an object with a non-empty string "message" as that message,
// anything else as its JSON text.
func errorText(v jsondoc.Value) string {
	switch v.Kind() {
	case jsondoc.Invalid, jsondoc.Null:
		return ""
	case jsondoc.Bool:
		if t, _ := v.Bool(); t {
			return "true"
		}
		return ""
	case jsondoc.String:
		if t := v.Text(); t != "" {
			return t
		}
		return "true"
	case jsondoc.Object:
		if msg := v.Get("message").Text(); msg != "" {
			return msg
		}
	}
	return string(v.AppendJSON(nil))
}

// idString reads an id that may be a string or a number; "" otherwise.
func idString(v jsondoc.Value) string {
	if s, ok := v.Str(); ok {
		return s
	}
	n, _ := v.Num()
	return n
}

// set reports whether v is present and not null (a member a Go map of the
// decoded document would hold as non-nil).
func set(v jsondoc.Value) bool { return v.Exists() && !v.IsNull() }

// isObj and isArr report v's kind.
func isObj(v jsondoc.Value) bool { return v.Kind() == jsondoc.Object }
func isArr(v jsondoc.Value) bool { return v.Kind() == jsondoc.Array }

// first returns the value of the first of keys present in m (for fields
// spelled in camelCase by one client and snake_case by another).
func first(m jsondoc.Value, keys ...string) (jsondoc.Value, bool) {
	for _, k := range keys {
		if v := m.Get(k); v.Exists() {
			return v, true
		}
	}
	return jsondoc.Value{}, false
}

// firstKey is first, also returning which of keys it found.
func firstKey(m jsondoc.Value, keys ...string) (jsondoc.Value, string, bool) {
	for _, k := range keys {
		if v := m.Get(k); v.Exists() {
			return v, k, true
		}
	}
	return jsondoc.Value{}, "", false
}

// partsText concatenates the visible text of content given as a string or
// as a list of parts: parts whose type is one of textTypes contribute their
// "text" field, parts of type "refusal" their "refusal" field. Other parts
// (images, reasoning, thinking, tool calls) contribute nothing.
func partsText(content jsondoc.Value, textTypes ...string) string {
	switch content.Kind() {
	case jsondoc.String:
		return content.Text()
	case jsondoc.Array:
		var b strings.Builder
		for _, p := range content.Elems() {
			if !isObj(p) {
				continue
			}
			typ := p.Get("type").Text()
			if typ == "refusal" {
				b.WriteString(p.Get("refusal").Text())
				continue
			}
			for _, tt := range textTypes {
				if typ == tt {
					b.WriteString(p.Get("text").Text())
					break
				}
			}
		}
		return b.String()
	}
	return ""
}

// allObjects reports whether every element of recs is a JSON object and
// there is at least one.
func allObjects(recs []jsondoc.Value) bool {
	if len(recs) == 0 {
		return false
	}
	for _, r := range recs {
		if !isObj(r) {
			return false
		}
	}
	return true
}

// plural formats "1 message" / "3 messages".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// synth reads a JSON text an adapter assembled (a streamed message put
// back together) with the trace's parser; the text is valid by
// construction, so an error (which cannot happen) gives the zero Value.
func (b *builder) synth(text []byte) jsondoc.Value {
	v, err := b.dec.Parse(string(text))
	if err != nil {
		return jsondoc.Value{}
	}
	return v
}

// with returns the JSON text of object m with member k set to the JSON
// text raw (replacing it where it is, else added last).
func with(m jsondoc.Value, k, raw string) []byte {
	out := []byte{'{'}
	done := false
	for key, v := range m.Members() {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = jsondoc.AppendString(out, key)
		out = append(out, ':')
		if key == k {
			out = append(out, raw...)
			done = true
		} else {
			out = append(out, v.Raw()...)
		}
	}
	if !done {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = jsondoc.AppendString(out, k)
		out = append(out, ':')
		out = append(out, raw...)
	}
	return append(out, '}')
}

// str reads a member that names a tool, a call id or argument text: its
// text when it is a string, "" when it is absent or null, and otherwise a
// *ShapeError of format at v ("name must be a string, not a number"), so
// a wrong-typed member is never read as an empty one.
func str(format, name string, v jsondoc.Value) (string, error) {
	if s, ok := v.Str(); ok {
		return s, nil
	}
	if set(v) {
		return "", shapeErr(format, v, "%s must be a string, not %s", name, aType(v))
	}
	return "", nil
}

// idOf reads a call id that may be a string or a number (idString): "" when
// it is absent or null, and otherwise a *ShapeError of format at v ("id
// must be a string or a number, not an object").
func idOf(format, name string, v jsondoc.Value) (string, error) {
	switch v.Kind() {
	case jsondoc.String, jsondoc.Number:
		return idString(v), nil
	}
	if set(v) {
		return "", shapeErr(format, v, "%s must be a string or a number, not %s", name, aType(v))
	}
	return "", nil
}
