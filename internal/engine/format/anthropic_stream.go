package format

import (
	"strconv"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// anthropicStreamAdapter reads streamed Anthropic Messages events
// (message_start, content_block_start, content_block_delta,
// content_block_stop, message_delta, message_stop; ping and error are
// skipped), as a JSON array, JSON Lines or SSE.
//
// Each message_start begins an assistant turn. Its content is normally
// empty; when it holds blocks (events saved after the run by an SDK that
// keeps message_start's message as its snapshot, as the Anthropic
// TypeScript SDK's MessageStream does), each stands for the block of its
// index until that block's content_block_start arrives, so every block
// and its text count once. A block's input_json_delta
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
	block    jsondoc.Value // from content_block_start (or message_start)
	snapshot bool          // a finished block of message_start, not yet streamed
	partial  strings.Builder
	hasInput bool // an input_json_delta arrived
	text     strings.Builder
}

func (anthropicStreamAdapter) Parse(in *Input) (engine.Trace, error) {
	b := in.newBuilder()
	var blocks []*streamBlock
	byIndex := map[string]*streamBlock{}
	open := false
	finish := func() error {
		if !open {
			return nil
		}
		list := make([]jsondoc.Value, 0, len(blocks))
		for _, sb := range blocks {
			list = append(list, sb.complete(b))
		}
		text, made, err := anthropicBlocks("anthropic-stream", b, list, "assistant")
		b.turn(text, made)
		blocks, byIndex, open = nil, map[string]*streamBlock{}, false
		return err
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
			if err := finish(); err != nil {
				return engine.Trace{}, err
			}
			open = true
			// A message_start saved after the run may hold the finished
			// blocks (an SDK that builds its snapshot on the event's own
			// message object): each is a stand-in, at its index, for the
			// block the content_block_start of that index streams.
			content := m.Get("message").Get("content")
			if set(content) && !isArr(content) {
				return engine.Trace{}, shapeErr("anthropic-stream", content, "content must be an array of blocks, not %s", aType(content))
			}
			for _, bm := range content.Elems() {
				if isObj(bm) {
					if err := checkStreamBlock(bm); err != nil {
						return engine.Trace{}, err
					}
					blocks = append(blocks, &streamBlock{block: bm, snapshot: true})
				}
			}
		case "content_block_start":
			open = true
			bm := m.Get("content_block")
			if set(bm) && !isObj(bm) {
				return engine.Trace{}, shapeErr("anthropic-stream", bm, "content_block must be an object, not %s", aType(bm))
			}
			if !isObj(bm) {
				bm = jsondoc.Value{}
			}
			if err := checkStreamBlock(bm); err != nil {
				return engine.Trace{}, err
			}
			sb := &streamBlock{block: bm}
			idx := idString(m.Get("index"))
			if k, err := strconv.Atoi(idx); err == nil && k >= 0 && k < len(blocks) && blocks[k].snapshot {
				blocks[k] = sb
			} else {
				blocks = append(blocks, sb)
			}
			byIndex[idx] = sb
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
				pj, err := str("anthropic-stream", "partial_json", d.Get("partial_json"))
				if err != nil {
					return engine.Trace{}, err
				}
				sb.partial.WriteString(pj)
				sb.hasInput = true
			case "text_delta":
				sb.text.WriteString(d.Get("text").Text())
			}
		case "message_stop":
			if err := finish(); err != nil {
				return engine.Trace{}, err
			}
		}
	}
	if err := finish(); err != nil {
		return engine.Trace{}, err
	}
	return b.trace(), nil
}

// checkStreamBlock reports, as a *ShapeError, a streamed call block's name
// or id of the wrong type, where the stream holds it (the block read at
// the end is a copy with the streamed input).
func checkStreamBlock(bm jsondoc.Value) error {
	switch bm.Get("type").Text() {
	case "tool_use", "server_tool_use", "mcp_tool_use":
		_, _, err := anthropicCallFields("anthropic-stream", bm)
		return err
	}
	return nil
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
