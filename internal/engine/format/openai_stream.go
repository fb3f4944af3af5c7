package format

import (
	"strconv"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
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
	for _, r := range recs {
		m, ok := r.(map[string]any)
		if !ok || (getStr(m, "object") != "chat.completion.chunk" && !isChunk(m)) {
			return "", false
		}
	}
	return streamReason(in, len(recs), "OpenAI chat.completion.chunk object"), true
}

// isChunk reports whether m has choices carrying a delta.
func isChunk(m map[string]any) bool {
	ch := getArr(m, "choices")
	if len(ch) == 0 {
		return false
	}
	c, _ := ch[0].(map[string]any)
	_, ok := c["delta"].(map[string]any)
	return ok
}

// streamReason words the detection reason of a stream of n records, each
// one a what.
func streamReason(in *Input, n int, what string) string {
	if _, isArr := in.Value.([]any); in.Form == FormJSON && !isArr {
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
	argsObj       any // arguments given as an object instead of text
}

func (openAIStreamAdapter) Parse(in *Input) (engine.Trace, error) {
	p := openAIParser{b: newBuilder()}
	var t *chunkTurn
	finish := func() {
		if t == nil {
			return
		}
		p.message(t.message(), root())
		t = nil
	}
	for i, r := range in.Records() {
		m, ok := r.(map[string]any)
		if !ok {
			return engine.Trace{}, shapeErr("openai-stream", []any{i}, "a chunk must be an object, not %s", aType(r))
		}
		if err := checkChunk(m, i); err != nil {
			return engine.Trace{}, err
		}
		choices, _ := m["choices"].([]any)
		if id := getStr(m, "id"); t != nil && id != "" && t.id != "" && id != t.id {
			finish()
		}
		for _, c := range choices {
			cm, _ := c.(map[string]any)
			if idx, ok := cm["index"]; ok && idString(idx) != "0" {
				continue
			}
			if t == nil {
				t = &chunkTurn{id: getStr(m, "id"), atIndex: map[string]*chunkCall{}}
			}
			delta, _ := cm["delta"].(map[string]any)
			if s, ok := delta["content"].(string); ok {
				t.text.WriteString(s)
			}
			if s, ok := delta["refusal"].(string); ok {
				t.text.WriteString(s)
			}
			tcs, _ := delta["tool_calls"].([]any)
			for j, tc := range tcs {
				tm, _ := tc.(map[string]any)
				t.delta(tm, j)
			}
			if fc, ok := delta["function_call"].(map[string]any); ok {
				t.delta(map[string]any{"index": "function_call", "function": fc}, 0)
			}
			if fr, ok := cm["finish_reason"].(string); ok && fr != "" {
				finish()
			}
		}
	}
	finish()
	return p.b.trace(), nil
}

// checkChunk reports, as a *ShapeError, what keeps record i from being a
// chat.completion.chunk: its "object" is "chat.completion.chunk", or it has
// none and its "choices" is an array of choices with a "delta" object (the
// last chunk of a stream with usage has no choices).
func checkChunk(m map[string]any, i int) error {
	if o, ok := m["object"]; ok {
		if o != "chat.completion.chunk" {
			return notFit("openai-stream", []any{i, "object"}, o, `not a chat.completion.chunk: "object" must be "chat.completion.chunk"`)
		}
		return nil
	}
	choices, ok := m["choices"].([]any)
	if !ok {
		return notFit("openai-stream", []any{i}, m, `not a chat.completion.chunk: it has no "object" and no "choices" array`)
	}
	for j, c := range choices {
		cm, _ := c.(map[string]any)
		if _, ok := cm["delta"].(map[string]any); !ok {
			return notFit("openai-stream", []any{i, "choices", j}, c, `not a chat.completion.chunk choice: it has no "delta" object`)
		}
	}
	return nil
}

// delta applies one tool_calls delta; j is its position, used when it has
// no index.
func (t *chunkTurn) delta(tm map[string]any, j int) {
	key := idString(tm["index"])
	if key == "" {
		key = "#" + strconv.Itoa(j)
	}
	id := idString(tm["id"])
	c := t.atIndex[key]
	if c == nil || (id != "" && c.id != "" && id != c.id) {
		c = &chunkCall{id: id}
		t.atIndex[key] = c
		t.calls = append(t.calls, c)
	}
	if c.id == "" {
		c.id = id
	}
	if typ := getStr(tm, "type"); typ != "" {
		c.typ = typ
	}
	fn, _ := tm["function"].(map[string]any)
	if cu, ok := tm["custom"].(map[string]any); ok {
		c.typ, fn = "custom", cu
	}
	if name := getStr(fn, "name"); name != "" && name != c.name {
		// Names normally come whole in the first delta; some servers
		// repeat them in every delta, a few split them.
		c.name += name
	}
	switch a := fn["arguments"].(type) {
	case string:
		c.args.WriteString(a)
	case map[string]any:
		c.argsObj = a
	}
	if s, ok := fn["input"].(string); ok {
		c.args.WriteString(s)
	}
}

// message rebuilds the turn as a complete assistant message.
func (t *chunkTurn) message() map[string]any {
	msg := map[string]any{"role": "assistant", "content": t.text.String()}
	var tcs []any
	for _, c := range t.calls {
		if c.typ == "custom" {
			tcs = append(tcs, map[string]any{"id": c.id, "type": "custom", "custom": map[string]any{"name": c.name, "input": c.args.String()}})
			continue
		}
		var args any = c.args.String()
		if c.argsObj != nil && c.args.Len() == 0 {
			args = c.argsObj
		}
		tcs = append(tcs, map[string]any{"id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": args}})
	}
	if tcs != nil {
		msg["tool_calls"] = tcs
	}
	return msg
}
