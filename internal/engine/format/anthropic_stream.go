package format

import (
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
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
	for _, r := range recs {
		m, ok := r.(map[string]any)
		if !ok {
			return "", false
		}
		switch t := getStr(m, "type"); {
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
	block    map[string]any // from content_block_start
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
		list := make([]any, 0, len(blocks))
		for _, sb := range blocks {
			list = append(list, sb.complete())
		}
		text, made := anthropicBlocks(b, list, "assistant")
		b.turn(text, made)
		blocks, byIndex, open = nil, map[string]*streamBlock{}, false
	}
	for i, r := range in.Records() {
		m, ok := r.(map[string]any)
		if !ok {
			return engine.Trace{}, shapeErr("anthropic-stream", []any{i}, "an event must be an object, not %s", aType(r))
		}
		t, ok := m["type"].(string)
		if !ok || (!isAnthropicEvent(t) && t != "ping" && t != "error") {
			if !ok {
				return engine.Trace{}, notFit("anthropic-stream", []any{i}, m, `not an Anthropic stream event: it has no string "type"`)
			}
			return engine.Trace{}, notFit("anthropic-stream", []any{i, "type"}, t, "not an Anthropic stream event type (message_start, content_block_start, content_block_delta, content_block_stop, message_delta, message_stop, ping or error)")
		}
		switch t {
		case "message_start":
			finish()
			open = true
			msg, _ := m["message"].(map[string]any)
			for _, bl := range getArr(msg, "content") {
				if bm, ok := bl.(map[string]any); ok {
					blocks = append(blocks, &streamBlock{block: bm})
				}
			}
		case "content_block_start":
			open = true
			bm, _ := m["content_block"].(map[string]any)
			sb := &streamBlock{block: bm}
			blocks = append(blocks, sb)
			byIndex[idString(m["index"])] = sb
		case "content_block_delta":
			open = true
			sb := byIndex[idString(m["index"])]
			if sb == nil {
				// A delta whose block start was not saved.
				sb = &streamBlock{}
				blocks = append(blocks, sb)
				byIndex[idString(m["index"])] = sb
			}
			d, _ := m["delta"].(map[string]any)
			switch getStr(d, "type") {
			case "input_json_delta":
				s, _ := d["partial_json"].(string)
				sb.partial.WriteString(s)
				sb.hasInput = true
			case "text_delta":
				s, _ := d["text"].(string)
				sb.text.WriteString(s)
			}
		case "message_stop":
			finish()
		}
	}
	finish()
	return b.trace(), nil
}

// complete returns the block with its deltas applied, as a new map.
func (sb *streamBlock) complete() map[string]any {
	m := sb.block
	if m == nil {
		m = map[string]any{"type": "text"}
		if sb.hasInput {
			m = map[string]any{"type": "tool_use"}
		}
	}
	switch t := getStr(m, "type"); {
	case sb.hasInput && (t == "tool_use" || t == "server_tool_use" || t == "mcp_tool_use"):
		return with(m, "input", sb.partial.String())
	case t == "text" && sb.text.Len() > 0:
		return with(m, "text", getStr(m, "text")+sb.text.String())
	}
	return m
}
