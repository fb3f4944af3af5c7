package format

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/internal/jsonvalue"
)

// builder collects the calls of one trace, joins tool results to them and
// keeps the final answer. Joining costs O(1) amortised per result, so a
// trace with many calls never costs quadratic time.
type builder struct {
	calls  []engine.ToolCall
	done   []bool         // done[i]: calls[i] has its result
	byID   map[string]int // id -> earliest call with that id still waiting; nil until the first id
	dupIDs map[string][]int
	anyID  bool
	byName map[string][]int // built on first use: few formats join by name
	head   int              // calls before head all have their result
	final  *string          // set by formats that give the answer directly
	answer string           // the latest turn's text, when turned is true
	turned bool
	dec    jsonvalue.Decoder // reused for argument text
}

func newBuilder() *builder {
	return &builder{}
}

// add appends a call and returns its index.
func (b *builder) add(c engine.ToolCall) int {
	i := len(b.calls)
	b.calls = append(b.calls, c)
	b.done = append(b.done, false)
	if c.ID != "" {
		b.anyID = true
		if _, dup := b.byID[c.ID]; dup {
			if b.dupIDs == nil {
				b.dupIDs = map[string][]int{}
			}
			b.dupIDs[c.ID] = append(b.dupIDs[c.ID], i)
		} else {
			if b.byID == nil {
				b.byID = map[string]int{}
			}
			b.byID[c.ID] = i
		}
	}
	if b.byName != nil {
		b.byName[c.Tool] = append(b.byName[c.Tool], i)
	}
	return i
}

// popID returns the earliest call with the id that has no result yet, or
// -1.
func (b *builder) popID(id string) int {
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
func (b *builder) result(id, name string, result any, errText string) bool {
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
	b.calls[i].Result = result
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

// setArgs fills c's arguments from a decoded value (SPEC section 7): an
// object is taken as it is; null or absent means {}; a string is argument
// text, decoded strictly (setArgsText); anything else is kept as raw text
// with an error.
func (b *builder) setArgs(c *engine.ToolCall, v any) {
	switch t := v.(type) {
	case nil:
		c.Args = map[string]any{}
	case map[string]any:
		c.Args = t
	case string:
		b.setArgsText(c, t)
	default:
		raw, _ := json.Marshal(t)
		c.Args, c.ArgsRaw = nil, string(raw)
		c.ArgsError = "arguments are " + aType(t) + ", not a JSON object"
	}
}

// setArgsText decodes argument text once, strictly, as one JSON object with
// numbers kept exactly. "" and white space mean {}. Invalid JSON, or JSON
// that is not an object, leaves Args nil with ArgsRaw the text and
// ArgsError the reason.
func (b *builder) setArgsText(c *engine.ToolCall, s string) {
	if strings.TrimSpace(s) == "" {
		c.Args = map[string]any{}
		return
	}
	d := &b.dec
	d.Reset(s, 0)
	v, err := d.Document()
	if err != nil {
		c.Args, c.ArgsRaw = nil, s
		if je, ok := err.(*jsonvalue.SyntaxError); ok {
			line, col := jsonvalue.LineCol(s, je.Offset)
			c.ArgsError = "invalid JSON at " + strconv.Itoa(line) + ":" + strconv.Itoa(col) + ": " + je.Msg
		} else {
			c.ArgsError = "invalid JSON: " + err.Error()
		}
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		c.Args, c.ArgsRaw = nil, s
		c.ArgsError = "arguments are " + aType(v) + ", not a JSON object"
		return
	}
	c.Args = m
}

// setRaw keeps free-text input (OpenAI custom tools) as the call's raw
// arguments: such a call never satisfies an expected call's arguments.
func setRaw(c *engine.ToolCall, input string) {
	c.Args, c.ArgsRaw = nil, input
	c.ArgsError = "custom tool input is free text, not JSON arguments"
}

// errorText turns an error value of a trace into CallError text: a string
// as it is (or "true" when empty), true as "true", false and null as "",
// anything else as its JSON text.
func errorText(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case bool:
		if t {
			return "true"
		}
		return ""
	case string:
		if t == "" {
			return "true"
		}
		return t
	case map[string]any:
		if msg, ok := t["message"].(string); ok && msg != "" {
			return msg
		}
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}

// idString reads an id that may be a string or a number; "" otherwise.
func idString(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case json.Number:
		return string(t)
	}
	return ""
}

// Small accessors over decoded JSON. They never panic on a wrong type.

func getStr(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func getObj(m map[string]any, k string) map[string]any {
	o, _ := m[k].(map[string]any)
	return o
}

func getArr(m map[string]any, k string) []any {
	a, _ := m[k].([]any)
	return a
}

// first returns the value of the first of keys present in m (for fields
// spelled in camelCase by one client and snake_case by another).
func first(m map[string]any, keys ...string) (any, bool) {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v, true
		}
	}
	return nil, false
}

// partsText concatenates the visible text of content given as a string or
// as a list of parts: parts whose type is one of textTypes contribute their
// "text" field, parts of type "refusal" their "refusal" field. Other parts
// (images, reasoning, thinking, tool calls) contribute nothing.
func partsText(content any, textTypes ...string) string {
	switch t := content.(type) {
	case string:
		return t
	case []any:
		var b strings.Builder
		for _, p := range t {
			m, ok := p.(map[string]any)
			if !ok {
				continue
			}
			typ := getStr(m, "type")
			if typ == "refusal" {
				b.WriteString(getStr(m, "refusal"))
				continue
			}
			for _, tt := range textTypes {
				if typ == tt {
					b.WriteString(getStr(m, "text"))
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
func allObjects(recs []any) bool {
	if len(recs) == 0 {
		return false
	}
	for _, r := range recs {
		if _, ok := r.(map[string]any); !ok {
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
