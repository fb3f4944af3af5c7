package format

import (
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
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
	eachMCP(in.Records(), func(m map[string]any, _, _ int) {
		if !ok || m == nil || getStr(m, "jsonrpc") != "2.0" {
			ok = false
			return
		}
		n++
	})
	if !ok || n == 0 {
		return "", false
	}
	if in.Form == FormJSON {
		if m, isObj := in.Value.(map[string]any); isObj {
			return "a single MCP JSON-RPC 2.0 " + mcpKind(m), true
		}
	}
	return plural(n, "MCP JSON-RPC 2.0 message") + formSuffix(in.Form), true
}

func mcpKind(m map[string]any) string {
	if s := getStr(m, "method"); s != "" {
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

// eachMCP calls fn for every message with its record index i and, inside
// a batch, its index j (else -1), flattening batches one level; fn gets nil
// for an element that is neither an object nor an array of objects.
func eachMCP(recs []any, fn func(m map[string]any, i, j int)) {
	for i, r := range recs {
		switch t := r.(type) {
		case map[string]any:
			fn(t, i, -1)
		case []any:
			for j, e := range t {
				m, _ := e.(map[string]any)
				fn(m, i, j)
			}
		default:
			fn(nil, i, -1)
		}
	}
}

// mcpID keys a JSON-RPC id by type and text, so 1 and "1" differ.
func mcpID(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return "s" + t, true
	case nil:
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
	eachMCP(in.Records(), func(m map[string]any, i, j int) {
		if err != nil {
			return
		}
		if m == nil {
			at := []any{i}
			if j >= 0 {
				at = append(at, j)
			}
			err = shapeErr("mcp", at, "a JSON-RPC message must be an object")
			return
		}
		if v, ok := m["jsonrpc"]; v != "2.0" {
			at := []any{i}
			if j >= 0 {
				at = append(at, j)
			}
			if !ok {
				err = notFit("mcp", at, m, `not a JSON-RPC 2.0 message: it has no "jsonrpc"`)
			} else {
				err = notFit("mcp", append(at, "jsonrpc"), v, `not a JSON-RPC 2.0 message: "jsonrpc" must be "2.0"`)
			}
			return
		}
		key, hasID := mcpID(m["id"])
		if getStr(m, "method") == "tools/call" {
			params, _ := m["params"].(map[string]any)
			c := engine.ToolCall{Tool: getStr(params, "name"), ID: idString(m["id"])}
			b.setArgs(&c, params["arguments"])
			k := b.add(c)
			if hasID {
				pending[key] = append(pending[key], k)
			} else {
				b.done[k] = true // a notification gets no answer
			}
			return
		}
		if !hasID || m["method"] != nil {
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
		if res, ok := m["result"]; ok {
			c.Result = res
			if rm, ok := res.(map[string]any); ok {
				if isErr, _ := rm["isError"].(bool); isErr {
					c.Error = "true"
					if s := strings.TrimSpace(partsText(rm["content"], "text")); s != "" {
						c.Error = engine.CallError(s)
					}
				}
			}
			return
		}
		if e, ok := m["error"]; ok {
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
