package format

import (
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// mcpAdapter reads Model Context Protocol logs: JSON-RPC 2.0 messages as
// a JSON array, JSON Lines or SSE, where an element may itself be a batch
// (an array of messages), or a single message.
//
// Each "tools/call" request (params.name, params.arguments) is a call, in
// log order, with its id as the call id. Its response (same id, the
// earliest unanswered request first, so a reused id pairs in order) gives
// the result: "result" (content, structuredContent, isError) taken whole,
// with isError true making the call an error whose text is the content's
// text; a JSON-RPC "error" makes the call an error with its message.
// Notifications and other methods are skipped. MCP logs carry no final
// answer. Ids 1 and "1" are distinct, as JSON-RPC says.
type mcpAdapter struct{}

func (mcpAdapter) Name() string { return "mcp" }

func (mcpAdapter) Detect(in *Input) (string, bool) {
	n := 0
	ok := true
	eachMCP(in.Records(), func(m jsondoc.Value) {
		if !ok || !isObj(m) || m.Get("jsonrpc").Text() != "2.0" {
			ok = false
			return
		}
		n++
	})
	if !ok || n == 0 {
		return "", false
	}
	if m, isObj := in.Object(); isObj {
		return "a single MCP JSON-RPC 2.0 " + mcpKind(m), true
	}
	return plural(n, "MCP JSON-RPC 2.0 message") + formSuffix(in.Form), true
}

func mcpKind(m jsondoc.Value) string {
	if s := m.Get("method").Text(); s != "" {
		return s + " message"
	}
	return "message"
}

func formSuffix(f Form) string {
	switch f {
	case FormSSE:
		return " (Server-Sent Events)"
	case FormJSONLines:
		return " (JSON Lines)"
	}
	return ""
}

// eachMCP calls fn for every message, flattening batches (arrays of
// messages) one level; an element that is neither an object nor an array
// is passed as it is.
func eachMCP(recs []jsondoc.Value, fn func(m jsondoc.Value)) {
	for _, r := range recs {
		if isArr(r) {
			for _, e := range r.Elems() {
				fn(e)
			}
			continue
		}
		fn(r)
	}
}

// mcpID keys a JSON-RPC id by type and text, so 1 and "1" differ.
func mcpID(v jsondoc.Value) (string, bool) {
	switch v.Kind() {
	case jsondoc.String:
		return "s" + v.Text(), true
	case jsondoc.Invalid, jsondoc.Null:
		return "", false
	}
	if s := idString(v); s != "" {
		return "n" + s, true
	}
	return "", false
}

func (mcpAdapter) Parse(in *Input) (engine.Trace, error) {
	b := newBuilder()
	pending := map[string][]int{}
	var err error
	eachMCP(in.Records(), func(m jsondoc.Value) {
		if err != nil {
			return
		}
		if !isObj(m) {
			err = shapeErr("mcp", m, "a JSON-RPC message must be an object")
			return
		}
		if v := m.Get("jsonrpc"); v.Kind() != jsondoc.String || v.Text() != "2.0" {
			if !v.Exists() {
				err = notFit("mcp", m, `not a JSON-RPC 2.0 message: it has no "jsonrpc"`)
			} else {
				err = notFit("mcp", v, `not a JSON-RPC 2.0 message: "jsonrpc" must be "2.0"`)
			}
			return
		}
		key, hasID := mcpID(m.Get("id"))
		if m.Get("method").Text() == "tools/call" {
			params := m.Get("params")
			c := engine.ToolCall{Tool: params.Get("name").Text(), ID: idString(m.Get("id"))}
			b.setArgs(&c, params.Get("arguments"))
			k := b.add(c)
			if hasID {
				pending[key] = append(pending[key], k)
			} else {
				b.done[k] = true // a notification gets no answer
			}
			return
		}
		if !hasID || set(m.Get("method")) {
			return
		}
		q := pending[key]
		if len(q) == 0 {
			return // the answer to another method
		}
		k := q[0]
		pending[key] = q[1:]
		b.done[k] = true
		c := &b.calls[k]
		if res := m.Get("result"); res.Exists() {
			setResult(c, res)
			if isErr, _ := res.Get("isError").Bool(); isErr {
				c.Error = "true"
				if s := strings.TrimSpace(partsText(res.Get("content"), "text")); s != "" {
					c.Error = engine.CallError(s)
				}
			}
			return
		}
		if e := m.Get("error"); e.Exists() {
			if c.Error = engine.CallError(errorText(e)); c.Error == "" {
				c.Error = "true"
			}
		}
	})
	if err != nil {
		return engine.Trace{}, err
	}
	return b.trace(), nil
}
