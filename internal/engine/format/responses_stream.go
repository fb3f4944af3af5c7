package format

import (
	"strconv"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
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
	for _, r := range recs {
		m, ok := r.(map[string]any)
		if !ok {
			return "", false
		}
		switch t := getStr(m, "type"); {
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
	resp     int            // which response of the stream it belongs to
	item     map[string]any // latest complete copy
	args     strings.Builder
	argsDone *string
	text     strings.Builder
	textDone *string
}

func (responsesStreamAdapter) Parse(in *Input) (engine.Trace, error) {
	var items []*streamItem
	byKey := map[string]*streamItem{}
	resp := 0
	key := func(m map[string]any) string {
		if id := getStr(m, "item_id"); id != "" {
			return "id:" + id
		}
		return "r" + strconv.Itoa(resp) + ":" + idString(m["output_index"])
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
	put := func(item map[string]any, outputIndex any) {
		k := "r" + strconv.Itoa(resp) + ":" + idString(outputIndex)
		if id := getStr(item, "id"); id != "" {
			if old, ok := byKey[k]; ok && byKey["id:"+id] == nil {
				byKey["id:"+id] = old // deltas came before the item's id was known
			}
			k = "id:" + id
		}
		it := get(k)
		it.item = item
		byKey["r"+strconv.Itoa(resp)+":"+idString(outputIndex)] = it
	}
	for i, r := range in.Records() {
		m, ok := r.(map[string]any)
		if !ok {
			return engine.Trace{}, shapeErr("openai-responses-stream", []any{i}, "an event must be an object, not %s", aType(r))
		}
		t, ok := m["type"].(string)
		if !ok || (!strings.HasPrefix(t, "response.") && t != "error") {
			if !ok {
				return engine.Trace{}, notFit("openai-responses-stream", []any{i}, m, `not an OpenAI Responses stream event: it has no string "type"`)
			}
			return engine.Trace{}, notFit("openai-responses-stream", []any{i, "type"}, t, `not an OpenAI Responses stream event: "type" must start with "response." (or be "error")`)
		}
		switch t {
		case "response.created":
			resp++
		case "response.output_item.added", "response.output_item.done":
			if item, ok := m["item"].(map[string]any); ok {
				put(item, m["output_index"])
			}
		case "response.completed", "response.incomplete", "response.failed":
			rm, _ := m["response"].(map[string]any)
			for j, o := range getArr(rm, "output") {
				if item, ok := o.(map[string]any); ok {
					put(item, strconv.Itoa(j))
				}
			}
		case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta", "response.mcp_call_arguments.delta":
			d, _ := m["delta"].(string)
			get(key(m)).args.WriteString(d)
		case "response.function_call_arguments.done", "response.mcp_call_arguments.done":
			if s, ok := m["arguments"].(string); ok {
				get(key(m)).argsDone = &s
			}
		case "response.custom_tool_call_input.done":
			if s, ok := m["input"].(string); ok {
				get(key(m)).argsDone = &s
			}
		case "response.output_text.delta", "response.refusal.delta":
			d, _ := m["delta"].(string)
			get(key(m)).text.WriteString(d)
		case "response.output_text.done":
			if s, ok := m["text"].(string); ok {
				get(key(m)).textDone = &s
			}
		case "response.refusal.done":
			if s, ok := m["refusal"].(string); ok {
				get(key(m)).textDone = &s
			}
		}
	}
	var list []any
	for i, it := range items {
		if it.item == nil {
			continue
		}
		if i > 0 && it.resp != items[i-1].resp {
			list = append(list, turnBreak{})
		}
		list = append(list, it.complete())
	}
	b := newBuilder()
	responsesItems(b, list)
	return b.trace(), nil
}

// complete returns the item with what its deltas carried filled in. The
// Input is never modified: a changed item is a copy.
func (it *streamItem) complete() map[string]any {
	m := it.item
	switch t := getStr(m, "type"); {
	case t == "function_call" || t == "mcp_call" || t == "custom_tool_call":
		field := "arguments"
		if t == "custom_tool_call" {
			field = "input"
		}
		if s, _ := m[field].(string); s != "" {
			return m
		}
		val := it.args.String()
		if it.argsDone != nil {
			val = *it.argsDone
		}
		return with(m, field, val)
	case t == "message":
		if partsText(m["content"], "output_text", "text") != "" {
			return m
		}
		val := it.text.String()
		if it.textDone != nil {
			val = *it.textDone
		}
		return with(m, "content", []any{map[string]any{"type": "output_text", "text": val}})
	}
	return m
}

// with returns a copy of m with k set to v.
func with(m map[string]any, k string, v any) map[string]any {
	c := make(map[string]any, len(m)+1)
	for key, val := range m {
		c[key] = val
	}
	c[k] = v
	return c
}
