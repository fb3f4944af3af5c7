package format

import (
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
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
func mcpSender(m jsondoc.Value) string {
	for _, k := range [...]string{"direction", "dir"} {
		s := m.Get(k).Text()
		switch strings.ToLower(strings.NewReplacer("-", "_", ">", "", " ", "").Replace(s)) {
		case "client_to_server", "client_server", "clienttoserver", "c2s", "to_server", "toserver":
			return "client"
		case "server_to_client", "server_client", "servertoclient", "s2c", "to_client", "toclient":
			return "server"
		}
	}
	for _, k := range [...]string{"origin", "from", "sender", "source"} {
		if s := m.Get(k).Text(); s == "client" || s == "server" {
			return s
		}
	}
	return ""
}

func isMCPMessage(v jsondoc.Value) bool { return v.Get("jsonrpc").Text() == "2.0" }

// isInspectorEntry reports whether m is an MCP Inspector MessageEntry.
func isInspectorEntry(m jsondoc.Value) bool {
	switch m.Get("direction").Text() {
	case "request", "response", "notification":
		return isMCPMessage(m.Get("message"))
	}
	return false
}

func (mcpLogAdapter) Detect(in *Input) (string, bool) {
	recs := in.Records()
	if len(recs) == 0 {
		return "", false
	}
	inspector := 0
	for _, m := range recs {
		if !isMCPMessage(m.Get("message")) {
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
	b := in.newBuilder()
	pending := map[string][]int{}
	for _, m := range in.Records() {
		if !isObj(m) {
			return engine.Trace{}, shapeErr("mcp-log", m, "a log record must be an object, not %s", aType(m))
		}
		msg := m.Get("message")
		if !isObj(msg) || !isMCPMessage(msg) {
			return engine.Trace{}, notFit("mcp-log", m, `not an MCP log record: it needs a JSON-RPC 2.0 "message"`)
		}
		sender := mcpSender(m)
		inspector := isInspectorEntry(m)
		if sender == "" {
			if !inspector {
				return engine.Trace{}, notFit("mcp-log", m, `an MCP log record must say who sent the message ("direction": "client_to_server" or "server_to_client", or "origin": "client" or "server")`)
			}
			// Inspector entries before "origin" existed: requests and
			// notifications were the client's, responses the server's.
			sender = "client"
			if m.Get("direction").Text() == "response" {
				sender = "server"
			}
		}
		method := msg.Get("method")
		switch {
		case sender == "client" && method.Text() == "tools/call":
			c, err := mcpCall("mcp-log", b, msg)
			if err != nil {
				return engine.Trace{}, err
			}
			k := b.add(c)
			key, hasID := mcpID(msg.Get("id"))
			switch resp := m.Get("response"); {
			case !hasID:
				b.done[k] = true // a notification gets no answer
			case inspector && isObj(resp):
				mcpAnswer(b, k, resp)
			default:
				pending[key] = append(pending[key], k)
			}
		case sender == "client" && method.Text() == "notifications/cancelled":
			key, ok := mcpID(msg.Get("params").Get("requestId"))
			if q := pending[key]; ok && len(q) > 0 {
				b.done[q[0]] = true // kept without a result
				pending[key] = q[1:]
			}
		case sender == "server" && !method.Exists():
			key, ok := mcpID(msg.Get("id"))
			if q := pending[key]; ok && len(q) > 0 {
				pending[key] = q[1:]
				mcpAnswer(b, q[0], msg)
			}
		}
	}
	return b.trace(), nil
}

// mcpAnswer gives call k the result or error of a JSON-RPC response, as
// the mcp format reads it.
func mcpAnswer(b *builder, k int, msg jsondoc.Value) {
	b.done[k] = true
	c := &b.calls[k]
	if res := msg.Get("result"); res.Exists() {
		setResult(c, res)
		if isErr, _ := res.Get("isError").Bool(); isErr {
			c.Error = "true"
			if s := strings.TrimSpace(partsText(res.Get("content"), "text")); s != "" {
				c.Error = engine.CallError(s)
			}
		}
		return
	}
	if e := msg.Get("error"); e.Exists() {
		if c.Error = engine.CallError(errorText(e)); c.Error == "" {
			c.Error = "true"
		}
	}
}
