package format

import (
	"slices"
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
// earliest waiting request first, so a reused id pairs in order; other
// methods' requests wait for their answers too, and a tools/call takes
// only an error or a CallToolResult, so the client's answer to a server's
// ping with the same id is never a call's result) gives the result:
// "result" (content, structuredContent, isError) taken whole,
// with isError true making the call an error whose text is the content's
// text; a JSON-RPC "error" makes the call an error with its message.
// A call named by notifications/cancelled keeps no result. Other
// notifications and methods are skipped. MCP logs carry no final answer. Ids 1 and "1" are distinct, as JSON-RPC says.
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
	b := in.newBuilder()
	// pending lists, by id, the requests still waiting for a response: the
	// index of a tools/call's call, or -1 for another method (a server's
	// ping, say, whose id the two sides number independently).
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
		switch method := m.Get("method").Text(); {
		case method == "tools/call":
			var c engine.ToolCall
			if c, err = mcpCall("mcp", b, m); err != nil {
				return
			}
			k := b.add(c)
			if hasID {
				pending[key] = append(pending[key], k)
			} else {
				b.done[k] = true // a notification gets no answer
			}
			return
		case method == "notifications/cancelled":
			// A cancelled call keeps no result, even if one arrives.
			if rk, ok := mcpID(m.Get("params").Get("requestId")); ok {
				for i, k := range pending[rk] {
					if k >= 0 {
						b.done[k] = true
						pending[rk] = slices.Delete(pending[rk], i, i+1)
						break
					}
				}
			}
			return
		case set(m.Get("method")):
			if hasID {
				pending[key] = append(pending[key], -1)
			}
			return
		}
		if !hasID {
			return
		}
		// The response answers the earliest waiting request with its id
		// that it fits: a tools/call takes an error or a CallToolResult
		// (content, structuredContent or isError), so a client's empty
		// answer to a server's ping never answers a call.
		q := pending[key]
		i := slices.IndexFunc(q, func(k int) bool { return k < 0 || !m.Get("result").Exists() || isCallToolResult(m.Get("result")) })
		if i < 0 {
			return
		}
		k := q[i]
		pending[key] = slices.Delete(q, i, i+1)
		if k < 0 {
			return // the answer to another method
		}
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

// mcpCall reads the call of a tools/call request m (params.name,
// params.arguments, the request's id); params that are not an object, or a
// name or id of the wrong type, are a *ShapeError of format. Absent or null
// params read as a call with no name and no arguments.
func mcpCall(format string, b *builder, m jsondoc.Value) (engine.ToolCall, error) {
	params := m.Get("params")
	if set(params) && !isObj(params) {
		return engine.ToolCall{}, shapeErr(format, params, "params must be an object, not %s", aType(params))
	}
	name, err := str(format, "name", params.Get("name"))
	if err != nil {
		return engine.ToolCall{}, err
	}
	id, err := idOf(format, "id", m.Get("id"))
	if err != nil {
		return engine.ToolCall{}, err
	}
	c := engine.ToolCall{Tool: name, ID: id}
	b.setArgs(&c, params.Get("arguments"))
	return c, nil
}

// isCallToolResult reports whether a response's result has the shape of a
// tools/call result: an object with content, structuredContent or isError.
func isCallToolResult(r jsondoc.Value) bool {
	return isObj(r) && (r.Get("content").Exists() || r.Get("structuredContent").Exists() || r.Get("isError").Exists())
}
