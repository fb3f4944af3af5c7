package format

import (
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// anthropicStreamAdapter reads streamed Anthropic Messages events
// (message_start, content_block_start, content_block_delta,
// content_block_stop, message_delta, message_stop; ping and error are
// skipped), as a JSON array, JSON Lines or SSE.
//
// Each message_start begins an assistant turn. A block's input_json_delta
// fragments are joined as text and decoded once; the empty "input" of
// content_block_start is a placeholder used only when no fragment arrives.
// text_delta fragments make the visible text; thinking deltas are left out.
// The assembled blocks are then read as by the anthropic adapter.
type anthropicStreamAdapter struct{}

func (anthropicStreamAdapter) Name() string { return "anthropic-stream" }

func isAnthropicEvent(t string) bool {
	switch t {
	case "message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop":
		return true
	}
	return false
}

func (anthropicStreamAdapter) Detect(in *Input) (string, bool) {
	recs := in.Records()
	seen := false
	for _, m := range recs {
		if !isObj(m) {
			return "", false
		}
		switch t := m.Get("type").Text(); {
		case isAnthropicEvent(t):
			seen = true
		case t == "ping" || t == "error":
		default:
			return "", false
		}
	}
	if !seen {
		return "", false
	}
	return streamReason(in, len(recs), "Anthropic Messages stream event"), true
}

// streamBlock is one content block being assembled.
type streamBlock struct {
	block    jsondoc.Value // from content_block_start
	partial  strings.Builder
	hasInput bool // an input_json_delta arrived
	text     strings.Builder
}

func (anthropicStreamAdapter) Parse(in *Input) (engine.Trace, error) {
	b := newBuilder()
	var blocks []*streamBlock
	byIndex := map[string]*streamBlock{}
	open := false
	finish := func() {
		if !open {
			return
		}
		list := make([]jsondoc.Value, 0, len(blocks))
		for _, sb := range blocks {
			list = append(list, sb.complete(b))
		}
		text, made := anthropicBlocks(b, list, "assistant")
		b.turn(text, made)
		blocks, byIndex, open = nil, map[string]*streamBlock{}, false
	}
	for _, m := range in.Records() {
		if !isObj(m) {
			return engine.Trace{}, shapeErr("anthropic-stream", m, "an event must be an object, not %s", aType(m))
		}
		tv := m.Get("type")
		t, ok := tv.Str()
		if !ok || (!isAnthropicEvent(t) && t != "ping" && t != "error") {
			if !ok {
				return engine.Trace{}, notFit("anthropic-stream", m, `not an Anthropic stream event: it has no string "type"`)
			}
			return engine.Trace{}, notFit("anthropic-stream", tv, "not an Anthropic stream event type (message_start, content_block_start, content_block_delta, content_block_stop, message_delta, message_stop, ping or error)")
		}
		switch t {
		case "message_start":
			finish()
			open = true
			for _, bm := range m.Get("message").Get("content").Elems() {
				if isObj(bm) {
					blocks = append(blocks, &streamBlock{block: bm})
				}
			}
		case "content_block_start":
			open = true
			bm := m.Get("content_block")
			if !isObj(bm) {
				bm = jsondoc.Value{}
			}
			sb := &streamBlock{block: bm}
			blocks = append(blocks, sb)
			byIndex[idString(m.Get("index"))] = sb
		case "content_block_delta":
			open = true
			sb := byIndex[idString(m.Get("index"))]
			if sb == nil {
				// A delta whose block start was not saved.
				sb = &streamBlock{}
				blocks = append(blocks, sb)
				byIndex[idString(m.Get("index"))] = sb
			}
			d := m.Get("delta")
			switch d.Get("type").Text() {
			case "input_json_delta":
				sb.partial.WriteString(d.Get("partial_json").Text())
				sb.hasInput = true
			case "text_delta":
				sb.text.WriteString(d.Get("text").Text())
			}
		case "message_stop":
			finish()
		}
	}
	finish()
	return b.trace(), nil
}

// complete returns the block with its deltas applied, as a new value.
func (sb *streamBlock) complete(b *builder) jsondoc.Value {
	m := sb.block
	if !m.Exists() {
		typ := `{"type":"text"}`
		if sb.hasInput {
			typ = `{"type":"tool_use"}`
		}
		m = b.synth([]byte(typ))
	}
	switch t := m.Get("type").Text(); {
	case sb.hasInput && (t == "tool_use" || t == "server_tool_use" || t == "mcp_tool_use"):
		return b.synth(with(m, "input", string(jsondoc.AppendString(nil, sb.partial.String()))))
	case t == "text" && sb.text.Len() > 0:
		return b.synth(with(m, "text", string(jsondoc.AppendString(nil, m.Get("text").Text()+sb.text.String()))))
	}
	return m
}
