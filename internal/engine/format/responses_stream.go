package format

import (
	"strconv"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// responsesStreamAdapter reads streamed OpenAI Responses events
// (response.created, response.output_item.added, ...
// response.function_call_arguments.delta, ... response.completed), as a
// JSON array, JSON Lines or SSE.
//
// Items are keyed by item id (else by response and output_index) and kept
// in order of first appearance, so a call that reappears in done and
// completed events counts once. The latest complete copy of an item wins;
// argument and text deltas fill in what no complete copy carries. Each
// response is one agent turn; items are then read as by openai-responses.
type responsesStreamAdapter struct{}

func (responsesStreamAdapter) Name() string { return "openai-responses-stream" }

func (responsesStreamAdapter) Detect(in *Input) (string, bool) {
	recs := in.Records()
	seen := false
	for _, m := range recs {
		if !isObj(m) {
			return "", false
		}
		switch t := m.Get("type").Text(); {
		case strings.HasPrefix(t, "response."):
			seen = true
		case t == "error":
		default:
			return "", false
		}
	}
	if !seen {
		return "", false
	}
	return streamReason(in, len(recs), "OpenAI Responses stream event"), true
}

// streamItem is one output item being assembled from events.
type streamItem struct {
	resp     int           // which response of the stream it belongs to
	item     jsondoc.Value // latest complete copy
	args     strings.Builder
	argsDone *string
	text     strings.Builder
	textDone *string
}

func (responsesStreamAdapter) Parse(in *Input) (engine.Trace, error) {
	var items []*streamItem
	byKey := map[string]*streamItem{}
	resp := 0
	key := func(m jsondoc.Value) string {
		if id := m.Get("item_id").Text(); id != "" {
			return "id:" + id
		}
		return "r" + strconv.Itoa(resp) + ":" + idString(m.Get("output_index"))
	}
	get := func(k string) *streamItem {
		it := byKey[k]
		if it == nil {
			it = &streamItem{resp: resp}
			byKey[k] = it
			items = append(items, it)
		}
		return it
	}
	put := func(item jsondoc.Value, outputIndex string) error {
		if t := item.Get("type").Text(); responsesCallTypes[t] {
			if _, _, _, err := responsesCallFields("openai-responses-stream", item, t); err != nil {
				return err
			}
		}
		k := "r" + strconv.Itoa(resp) + ":" + outputIndex
		if id := item.Get("id").Text(); id != "" {
			if old, ok := byKey[k]; ok && byKey["id:"+id] == nil {
				byKey["id:"+id] = old // deltas came before the item's id was known
			}
			k = "id:" + id
		}
		it := get(k)
		it.item = item
		byKey["r"+strconv.Itoa(resp)+":"+outputIndex] = it
		return nil
	}
	for _, m := range in.Records() {
		if !isObj(m) {
			return engine.Trace{}, shapeErr("openai-responses-stream", m, "an event must be an object, not %s", aType(m))
		}
		tv := m.Get("type")
		t, ok := tv.Str()
		if !ok || (!strings.HasPrefix(t, "response.") && t != "error") {
			if !ok {
				return engine.Trace{}, notFit("openai-responses-stream", m, `not an OpenAI Responses stream event: it has no string "type"`)
			}
			return engine.Trace{}, notFit("openai-responses-stream", tv, `not an OpenAI Responses stream event: "type" must start with "response." (or be "error")`)
		}
		switch t {
		case "response.created":
			resp++
		case "response.output_item.added", "response.output_item.done":
			item := m.Get("item")
			if set(item) && !isObj(item) {
				return engine.Trace{}, shapeErr("openai-responses-stream", item, "item must be an object, not %s", aType(item))
			}
			if isObj(item) {
				if err := put(item, idString(m.Get("output_index"))); err != nil {
					return engine.Trace{}, err
				}
			}
		case "response.completed", "response.incomplete", "response.failed":
			out := m.Get("response").Get("output")
			if set(out) && !isArr(out) {
				return engine.Trace{}, shapeErr("openai-responses-stream", out, "output must be an array of items, not %s", aType(out))
			}
			for j, item := range out.Elems() {
				if isObj(item) {
					if err := put(item, strconv.Itoa(j)); err != nil {
						return engine.Trace{}, err
					}
				}
			}
		case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta", "response.mcp_call_arguments.delta":
			d, err := str("openai-responses-stream", "delta", m.Get("delta"))
			if err != nil {
				return engine.Trace{}, err
			}
			get(key(m)).args.WriteString(d)
		case "response.function_call_arguments.done", "response.mcp_call_arguments.done":
			if s, ok := m.Get("arguments").Str(); ok {
				get(key(m)).argsDone = &s
			}
		case "response.custom_tool_call_input.done":
			if s, ok := m.Get("input").Str(); ok {
				get(key(m)).argsDone = &s
			}
		case "response.output_text.delta", "response.refusal.delta":
			get(key(m)).text.WriteString(m.Get("delta").Text())
		case "response.output_text.done":
			if s, ok := m.Get("text").Str(); ok {
				get(key(m)).textDone = &s
			}
		case "response.refusal.done":
			if s, ok := m.Get("refusal").Str(); ok {
				get(key(m)).textDone = &s
			}
		}
	}
	b := in.newBuilder()
	var list []responsesItem
	for i, it := range items {
		if !it.item.Exists() {
			continue
		}
		if i > 0 && it.resp != items[i-1].resp {
			list = append(list, responsesItem{brk: true})
		}
		list = append(list, responsesItem{v: it.complete(b)})
	}
	if err := responsesItems("openai-responses-stream", b, list); err != nil {
		return engine.Trace{}, err
	}
	return b.trace(), nil
}

// complete returns the item with what its deltas carried filled in. The
// Input is never modified: a changed item is a new value.
func (it *streamItem) complete(b *builder) jsondoc.Value {
	m := it.item
	switch t := m.Get("type").Text(); {
	case t == "function_call" || t == "mcp_call" || t == "custom_tool_call":
		field := "arguments"
		if t == "custom_tool_call" {
			field = "input"
		}
		if s := m.Get(field).Text(); s != "" {
			return m
		}
		val := it.args.String()
		if it.argsDone != nil {
			val = *it.argsDone
		}
		return b.synth(with(m, field, string(jsondoc.AppendString(nil, val))))
	case t == "message":
		if partsText(m.Get("content"), "output_text", "text") != "" {
			return m
		}
		val := it.text.String()
		if it.textDone != nil {
			val = *it.textDone
		}
		part := `[{"type":"output_text","text":` + string(jsondoc.AppendString(nil, val)) + `}]`
		return b.synth(with(m, "content", part))
	}
	return m
}
