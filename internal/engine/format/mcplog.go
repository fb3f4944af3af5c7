package format

import (
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
)

// mcpLogAdapter reads MCP logs that wrap each JSON-RPC message in a record
// saying who sent it, as proxies and inspectors write them:
//   - envelopes {ts, direction, message} (JSON Lines or an array), the
//     direction "client_to_server" / "server_to_client" (also spelled
//     "client->server", "clientToServer", "c2s", and the reverse), or an
//     "origin" / "from" of "client" / "server";
//   - the MCP Inspector's message log (MessageEntry[]: {id, timestamp,
//     direction: "request" | "response" | "notification", origin, message,
//     response?, duration?}), where a response is folded into its request's
//     entry or kept as an entry of its own.
//
// A client "tools/call" request is a call (params.name, params.arguments,
// the JSON-RPC id as its id); the server's response with that id is its
// result, read as by the mcp format (isError and JSON-RPC errors are
// errors). Requests the server sends the client (ping, sampling,
// elicitation) and the client's answers to them are skipped, so their ids,
// which may equal the client's, never answer a call. A call the client
// cancels (notifications/cancelled with its requestId) is kept without a
// result, and a late response to it is dropped. MCP logs carry no final
// answer.
type mcpLogAdapter struct{}

func (mcpLogAdapter) Name() string { return "mcp-log" }

// mcpSender says who sent an envelope's message: "client", "server", or
// "" when the record does not say.
func mcpSender(m map[string]any) string {
	for _, k := range [...]string{"direction", "dir"} {
		s, _ := m[k].(string)
		switch strings.ToLower(strings.NewReplacer("-", "_", ">", "", " ", "").Replace(s)) {
		case "client_to_server", "client_server", "clienttoserver", "c2s", "to_server", "toserver":
			return "client"
		case "server_to_client", "server_client", "servertoclient", "s2c", "to_client", "toclient":
			return "server"
		}
	}
	for _, k := range [...]string{"origin", "from", "sender", "source"} {
		if s := getStr(m, k); s == "client" || s == "server" {
			return s
		}
	}
	return ""
}

func isMCPMessage(v any) bool {
	m, ok := v.(map[string]any)
	return ok && getStr(m, "jsonrpc") == "2.0"
}

// isInspectorEntry reports whether m is an MCP Inspector MessageEntry.
func isInspectorEntry(m map[string]any) bool {
	switch getStr(m, "direction") {
	case "request", "response", "notification":
		return isMCPMessage(m["message"])
	}
	return false
}

func (mcpLogAdapter) Detect(in *Input) (string, bool) {
	recs := in.Records()
	if len(recs) == 0 {
		return "", false
	}
	inspector := 0
	for _, r := range recs {
		m, ok := r.(map[string]any)
		if !ok || !isMCPMessage(m["message"]) {
			return "", false
		}
		if isInspectorEntry(m) {
			inspector++
		} else if mcpSender(m) == "" {
			return "", false
		}
	}
	if inspector == len(recs) {
		return "an MCP Inspector message log (" + plural(len(recs), "MessageEntry record") + ")", true
	}
	return streamReason(in, len(recs), "MCP JSON-RPC message") + " in envelopes that say who sent each", true
}

func (mcpLogAdapter) Parse(in *Input) (engine.Trace, error) {
	b := newBuilder()
	pending := map[string][]int{}
	answer := func(msg map[string]any) {
		key, ok := mcpID(msg["id"])
		if !ok || msg["method"] != nil {
			return
		}
		q := pending[key]
		if len(q) == 0 {
			return
		}
		k := q[0]
		pending[key] = q[1:]
		mcpAnswer(b, k, msg)
	}
	cancel := func(msg map[string]any) {
		key, ok := mcpID(getObj(msg, "params")["requestId"])
		if !ok {
			return
		}
		if q := pending[key]; len(q) > 0 {
			b.done[q[0]] = true // kept without a result
			pending[key] = q[1:]
		}
	}
	for i, r := range in.Records() {
		m, ok := r.(map[string]any)
		if !ok {
			return engine.Trace{}, shapeErr("mcp-log", []any{i}, "a log record must be an object, not %s", aType(r))
		}
		msg, ok := m["message"].(map[string]any)
		if !ok || getStr(msg, "jsonrpc") != "2.0" {
			return engine.Trace{}, notFit("mcp-log", []any{i}, m, `not an MCP log record: it needs a JSON-RPC 2.0 "message"`)
		}
		sender := mcpSender(m)
		inspector := isInspectorEntry(m)
		if sender == "" {
			if !inspector {
				return engine.Trace{}, notFit("mcp-log", []any{i}, m, `an MCP log record must say who sent the message ("direction": "client_to_server" or "server_to_client", or "origin": "client" or "server")`)
			}
			// Inspector entries before "origin" existed: requests and
			// notifications were the client's, responses the server's.
			sender = "client"
			if getStr(m, "direction") == "response" {
				sender = "server"
			}
		}
		method := getStr(msg, "method")
		switch {
		case sender == "client" && method == "tools/call":
			params, _ := msg["params"].(map[string]any)
			c := engine.ToolCall{Tool: getStr(params, "name"), ID: idString(msg["id"])}
			b.setArgs(&c, params["arguments"])
			k := b.add(c)
			key, hasID := mcpID(msg["id"])
			if !hasID {
				b.done[k] = true
				continue
			}
			if resp, ok := m["response"].(map[string]any); ok && inspector {
				mcpAnswer(b, k, resp)
				continue
			}
			pending[key] = append(pending[key], k)
		case sender == "client" && method == "notifications/cancelled":
			cancel(msg)
		case sender == "server" && method == "":
			answer(msg)
		}
	}
	return b.trace(), nil
}

// mcpAnswer gives call k the result or error of a JSON-RPC response, as
// the mcp format reads it.
func mcpAnswer(b *builder, k int, msg map[string]any) {
	b.done[k] = true
	c := &b.calls[k]
	if res, ok := msg["result"]; ok {
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
	if e, ok := msg["error"]; ok {
		if c.Error = engine.CallError(errorText(e)); c.Error == "" {
			c.Error = "true"
		}
	}
}
