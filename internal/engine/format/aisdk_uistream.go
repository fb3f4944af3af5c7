package format

import (
	"cmp"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// The Vercel AI SDK's UI message stream (ai 5 on): the chunks
// toUIMessageStream writes and useChat reads, the body of a chat route's
// response (toUIMessageStreamResponse, Server-Sent Events
// "data: {...}"), as a browser's network panel or a test saves it.

// aiSDKUIChunkTypes are the UI message stream chunk types; data-* and the
// tool-* types not listed are recognised by prefix (aiSDKUIChunk).
var aiSDKUIChunkTypes = map[string]bool{
	"start": true, "finish": true, "abort": true, "error": true, "message-metadata": true,
	"start-step": true, "finish-step": true,
	"text-start": true, "text-delta": true, "text-end": true,
	"reasoning-start": true, "reasoning-delta": true, "reasoning-end": true,
	"source-url": true, "source-document": true, "file": true,
}

// aiSDKUIChunk reports whether a record is a UI message stream chunk, and
// whether its type is the UI protocol's alone (steps, text and tool
// chunks: no other stream has them).
func aiSDKUIChunk(m jsondoc.Value) (chunk, own bool) {
	t, ok := m.Get("type").Str()
	if !ok {
		return false, false
	}
	switch {
	case strings.HasPrefix(t, "tool-"):
		return true, m.Get("toolCallId").Kind() == jsondoc.String
	case strings.HasPrefix(t, "data-"):
		return true, false
	case aiSDKUIChunkTypes[t]:
		switch t {
		case "start-step", "finish-step", "text-start", "text-delta", "text-end":
			return true, true
		}
		return true, false
	}
	return false, false
}

// aiSDKUIStreamDetect recognises a UI message stream: every record an
// object with a string type and no role, one of them a chunk of a type
// only that protocol has (so that a stream with another SDK's events in
// it gets Parse's located error). It returns the reason, or "".
func aiSDKUIStreamDetect(in *Input) string {
	if _, ok := in.Object(); ok {
		return ""
	}
	recs := in.Records()
	own := false
	for _, m := range recs {
		if m.Get("type").Kind() != jsondoc.String || m.Get("role").Exists() {
			return ""
		}
		_, o := aiSDKUIChunk(m)
		own = own || o
	}
	if !own {
		return ""
	}
	return streamReason(in, len(recs), "Vercel AI SDK UI message stream chunk")
}

// aiSDKUIStream reads a UI message stream. Each start-step begins a turn
// (finish-step ends it); tool-input-start (or the first chunk naming a
// toolCallId) begins a call, whose arguments are its tool-input-delta
// text joined (the model's exact text), else the input of
// tool-input-available / tool-input-error; tool-output-available gives
// the result, tool-output-error and tool-input-error an error with their
// errorText, tool-output-denied the error "execution denied". Text deltas
// make each step's text; the final answer is the last step's text when it
// made no call.
func aiSDKUIStream(in *Input) (engine.Trace, error) {
	type uiCall struct {
		c        engine.ToolCall
		deltas   strings.Builder
		hasDelta bool
		input    jsondoc.Value
		result   jsondoc.Value
		err      string
	}
	b := in.newBuilder()
	var calls []*uiCall
	byID := map[string]*uiCall{}
	var text strings.Builder
	made, open := false, false
	endStep := func() {
		if open {
			b.turn(text.String(), made)
		}
		text.Reset()
		made, open = false, false
	}
	callOf := func(m jsondoc.Value) *uiCall {
		id := m.Get("toolCallId").Text()
		if c := byID[id]; c != nil {
			return c
		}
		c := &uiCall{c: engine.ToolCall{Tool: m.Get("toolName").Text(), ID: id}}
		byID[id] = c
		calls = append(calls, c)
		open = true
		if exec, _ := m.Get("providerExecuted").Bool(); !exec {
			made = true
		}
		return c
	}
	for _, m := range in.Records() {
		if c, _ := aiSDKUIChunk(m); !c || !isObj(m) {
			return engine.Trace{}, notFit("ai-sdk", m, "not a Vercel AI SDK UI message stream chunk")
		}
		t := m.Get("type").Text()
		if strings.HasPrefix(t, "tool-") && t != "tool-approval-request" {
			if m.Get("toolCallId").Kind() != jsondoc.String {
				return engine.Trace{}, notFit("ai-sdk", m, `a %s chunk needs a string "toolCallId"`, t)
			}
			for _, k := range [...]string{"toolName", "inputTextDelta"} {
				if _, err := str("ai-sdk", k, m.Get(k)); err != nil {
					return engine.Trace{}, err
				}
			}
		}
		switch t {
		case "start-step":
			endStep()
			open = true
		case "finish-step":
			endStep()
		case "text-delta":
			open = true
			text.WriteString(m.Get("delta").Text())
		case "tool-input-start":
			callOf(m)
		case "tool-input-delta":
			c := callOf(m)
			c.deltas.WriteString(m.Get("inputTextDelta").Text())
			c.hasDelta = true
		case "tool-input-available":
			c := callOf(m)
			c.input = m.Get("input")
			if c.c.Tool == "" {
				c.c.Tool = m.Get("toolName").Text()
			}
		case "tool-input-error":
			c := callOf(m)
			c.input = m.Get("input")
			c.err = errorText(m.Get("errorText"))
		case "tool-output-available":
			if p, _ := m.Get("preliminary").Bool(); p {
				break
			}
			callOf(m).result = m.Get("output")
		case "tool-output-error":
			callOf(m).err = cmp.Or(errorText(m.Get("errorText")), "true")
		case "tool-output-denied":
			callOf(m).err = "execution denied"
		}
	}
	endStep()
	for _, uc := range calls {
		c := uc.c
		if uc.hasDelta {
			b.setArgsText(&c, uc.deltas.String())
		} else {
			b.setArgs(&c, uc.input)
		}
		if uc.err != "" {
			c.Error = engine.CallError(uc.err)
		} else {
			setResult(&c, uc.result)
		}
		b.add(c)
	}
	return b.trace(), nil
}
