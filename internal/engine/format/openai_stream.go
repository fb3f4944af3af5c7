package format

import (
	"strconv"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// openAIStreamAdapter reads streamed OpenAI Chat Completions: a sequence
// of chat.completion.chunk objects (a JSON array, JSON Lines or SSE).
//
// Each completion (a run of chunks with one id, ended by a finish_reason)
// is one assistant turn. Only choice 0 counts. Tool-call deltas are
// assembled by their index within the turn; a delta carrying a call id
// other than the one at its index starts a new call. Argument fragments are
// joined as text and decoded once, so an escape split across chunks decodes
// correctly.
type openAIStreamAdapter struct{}

func (openAIStreamAdapter) Name() string { return "openai-stream" }

func (openAIStreamAdapter) Detect(in *Input) (string, bool) {
	recs := in.Records()
	if len(recs) == 0 {
		return "", false
	}
	for _, m := range recs {
		if !isObj(m) || (m.Get("object").Text() != "chat.completion.chunk" && !isChunk(m)) {
			return "", false
		}
	}
	return streamReason(in, len(recs), "OpenAI chat.completion.chunk object"), true
}

// isChunk reports whether m has choices carrying a delta.
func isChunk(m jsondoc.Value) bool {
	ch := m.Get("choices")
	if !isArr(ch) || ch.Len() == 0 {
		return false
	}
	return isObj(ch.Index(0).Get("delta"))
}

// streamReason words the detection reason of a stream of n records, each
// one a what.
func streamReason(in *Input, n int, what string) string {
	if in.Form == FormJSON && !isArr(in.Value()) {
		return "a single " + what
	}
	s := plural(n, what)
	switch in.Form {
	case FormSSE:
		return s + " (Server-Sent Events)"
	case FormJSONLines:
		return s + " (JSON Lines)"
	}
	return s + " (JSON array)"
}

// chunkTurn is one streamed assistant turn being assembled.
type chunkTurn struct {
	id      string
	text    strings.Builder
	calls   []*chunkCall
	atIndex map[string]*chunkCall
}

type chunkCall struct {
	id, typ, name string
	args          strings.Builder
	argsObj       jsondoc.Value // arguments given as an object instead of text
}

func (openAIStreamAdapter) Parse(in *Input) (engine.Trace, error) {
	p := openAIParser{b: in.newBuilder(), format: "openai-stream"}
	var t *chunkTurn
	finish := func() {
		if t == nil {
			return
		}
		p.message(p.b.synth(t.message()))
		t = nil
	}
	for _, m := range in.Records() {
		if !isObj(m) {
			return engine.Trace{}, shapeErr("openai-stream", m, "a chunk must be an object, not %s", aType(m))
		}
		if err := checkChunk(m); err != nil {
			return engine.Trace{}, err
		}
		if id := m.Get("id").Text(); t != nil && id != "" && t.id != "" && id != t.id {
			finish()
		}
		for _, cm := range m.Get("choices").Elems() {
			if idx := cm.Get("index"); idx.Exists() && idString(idx) != "0" {
				continue
			}
			if t == nil {
				t = &chunkTurn{id: m.Get("id").Text(), atIndex: map[string]*chunkCall{}}
			}
			delta := cm.Get("delta")
			if s, ok := delta.Get("content").Str(); ok {
				t.text.WriteString(s)
			}
			if s, ok := delta.Get("refusal").Str(); ok {
				t.text.WriteString(s)
			}
			if tcs := delta.Get("tool_calls"); set(tcs) && !isArr(tcs) {
				return engine.Trace{}, shapeErr("openai-stream", tcs, "tool_calls must be an array, not %s", aType(tcs))
			}
			for j, tm := range delta.Get("tool_calls").Elems() {
				if err := t.delta(tm, idString(tm.Get("index")), j); err != nil {
					return engine.Trace{}, err
				}
			}
			if fc := delta.Get("function_call"); isObj(fc) {
				if err := t.deltaFunction("function_call", "", "", fc); err != nil {
					return engine.Trace{}, err
				}
			}
			if fr, ok := cm.Get("finish_reason").Str(); ok && fr != "" {
				finish()
			}
		}
	}
	finish()
	return p.b.trace(), nil
}

// checkChunk reports, as a *ShapeError, what keeps a record from being a
// chat.completion.chunk: its "object" is "chat.completion.chunk", or it has
// none and its "choices" is an array of choices with a "delta" object (the
// last chunk of a stream with usage has no choices).
func checkChunk(m jsondoc.Value) error {
	if o := m.Get("object"); o.Exists() {
		if o.Text() != "chat.completion.chunk" || o.Kind() != jsondoc.String {
			return notFit("openai-stream", o, `not a chat.completion.chunk: "object" must be "chat.completion.chunk"`)
		}
		return nil
	}
	choices := m.Get("choices")
	if !isArr(choices) {
		return notFit("openai-stream", m, `not a chat.completion.chunk: it has no "object" and no "choices" array`)
	}
	for _, c := range choices.Elems() {
		if !isObj(c.Get("delta")) {
			return notFit("openai-stream", c, `not a chat.completion.chunk choice: it has no "delta" object`)
		}
	}
	return nil
}

// delta applies one tool_calls delta; index is its index ("" for none)
// and j its position, used when it has no index. An id, name or argument
// text of the wrong type is a *ShapeError.
func (t *chunkTurn) delta(tm jsondoc.Value, index string, j int) error {
	fn := tm.Get("function")
	typ := tm.Get("type").Text()
	if cu := tm.Get("custom"); isObj(cu) {
		typ, fn = "custom", cu
	}
	id, err := idOf("openai-stream", "id", tm.Get("id"))
	if err != nil {
		return err
	}
	if err := t.deltaFunction(index, "#"+strconv.Itoa(j), id, fn); err != nil {
		return err
	}
	if typ != "" {
		t.atIndex[t.key(index, "#"+strconv.Itoa(j))].typ = typ
	}
	return nil
}

// key is the index of a delta, or its position when it has none.
func (t *chunkTurn) key(index, pos string) string {
	if index == "" {
		return pos
	}
	return index
}

// deltaFunction applies the function (or custom) part of a delta.
func (t *chunkTurn) deltaFunction(index, pos, id string, fn jsondoc.Value) error {
	name, err := str("openai-stream", "name", fn.Get("name"))
	if err != nil {
		return err
	}
	key := t.key(index, pos)
	c := t.atIndex[key]
	if c == nil || (id != "" && c.id != "" && id != c.id) {
		c = &chunkCall{id: id}
		t.atIndex[key] = c
		t.calls = append(t.calls, c)
	}
	if c.id == "" {
		c.id = id
	}
	if name != "" && name != c.name {
		// Names normally come whole in the first delta; some servers
		// repeat them in every delta, a few split them.
		c.name += name
	}
	switch a := fn.Get("arguments"); a.Kind() {
	case jsondoc.String:
		c.args.WriteString(a.Text())
	case jsondoc.Object:
		c.argsObj = a
	case jsondoc.Invalid, jsondoc.Null:
	default:
		return shapeErr("openai-stream", a, "arguments must be a string or an object, not %s", aType(a))
	}
	input, err := str("openai-stream", "input", fn.Get("input"))
	c.args.WriteString(input)
	return err
}

// message rebuilds the turn as the JSON text of a complete assistant
// message.
func (t *chunkTurn) message() []byte {
	b := []byte(`{"role":"assistant","content":`)
	b = jsondoc.AppendString(b, t.text.String())
	if len(t.calls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, c := range t.calls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = jsondoc.AppendString(b, c.id)
			if c.typ == "custom" {
				b = append(b, `,"type":"custom","custom":{"name":`...)
				b = jsondoc.AppendString(b, c.name)
				b = append(b, `,"input":`...)
				b = jsondoc.AppendString(b, c.args.String())
				b = append(b, "}}"...)
				continue
			}
			b = append(b, `,"type":"function","function":{"name":`...)
			b = jsondoc.AppendString(b, c.name)
			b = append(b, `,"arguments":`...)
			if c.argsObj.Exists() && c.args.Len() == 0 {
				b = append(b, c.argsObj.Raw()...)
			} else {
				b = jsondoc.AppendString(b, c.args.String())
			}
			b = append(b, "}}"...)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}
