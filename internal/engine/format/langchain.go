package format

import (
	"slices"
	"sort"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
)

// langchainAdapter reads LangChain and LangGraph dumps: lists of messages
// as messages_to_dict writes them ({type, data}), as model_dump writes them
// ({type, content, tool_calls, ...}), or serialised with dumpd (lc: 1
// constructor objects); a graph state {"messages": [...]}; LangGraph
// stream_mode "updates" output ({node: {"messages": [...]}} per step, also
// as (mode, chunk) or (namespace, chunk) tuples); "values" output (a state
// per step: the last one is read); a single message; a single tool call.
//
// AI messages give calls from tool_calls (name, args object, id) and
// invalid_tool_calls (arguments kept raw, with the recorded error). A call
// also present in additional_kwargs.tool_calls or as a content block is
// counted once: those are read only when tool_calls and invalid_tool_calls
// are both absent. Tool messages are results joined by tool_call_id, an
// error when status is "error". The text blocks of the last AI message,
// without reasoning or thinking blocks, are the final answer when it made
// no calls.
type langchainAdapter struct{}

func (langchainAdapter) Name() string { return "langchain" }

// lcKinds maps LangChain message type names and class names to a kind.
var lcKinds = map[string]string{
	"ai": "ai", "AIMessage": "ai", "AIMessageChunk": "ai",
	"human": "human", "HumanMessage": "human", "HumanMessageChunk": "human",
	"tool": "tool", "ToolMessage": "tool", "ToolMessageChunk": "tool",
	"system": "system", "SystemMessage": "system", "SystemMessageChunk": "system",
	"function": "function", "FunctionMessage": "function", "FunctionMessageChunk": "function",
	"chat": "chat", "ChatMessage": "chat", "ChatMessageChunk": "chat",
}

// lcMessage returns a message's kind and fields, and how it was written;
// kind is "" when m is not a LangChain message.
func lcMessage(m map[string]any) (kind string, fields map[string]any, how string) {
	if idString(m["lc"]) == "1" && getStr(m, "type") == "constructor" {
		id := getArr(m, "id")
		if len(id) > 0 {
			cls, _ := id[len(id)-1].(string)
			if k := lcKinds[cls]; k != "" {
				kw, _ := m["kwargs"].(map[string]any)
				return k, kw, "serialised with dumpd (lc: 1)"
			}
		}
		return "", nil, ""
	}
	t := getStr(m, "type")
	k := lcKinds[t]
	if k == "" {
		return "", nil, ""
	}
	if data, ok := m["data"].(map[string]any); ok {
		return k, data, "in messages_to_dict form ({type, data})"
	}
	if _, ok := m["content"]; ok {
		return k, m, "as message dicts ({type, content})"
	}
	return "", nil, ""
}

// roleKinds maps OpenAI-style roles, which LangChain accepts as input, to
// kinds.
var roleKinds = map[string]string{"user": "human", "assistant": "ai", "tool": "tool", "system": "system"}

// lcAnyMessage is lcMessage that also accepts {role, content} dicts (both
// keys are needed, as LangChain's convert_to_messages requires).
func lcAnyMessage(m map[string]any) (string, map[string]any) {
	if k, f, _ := lcMessage(m); k != "" {
		return k, f
	}
	if isRoleDict(m) {
		return roleKinds[getStr(m, "role")], m
	}
	return "", nil
}

// isRoleDict reports whether m is a {role, content} input dict LangChain
// accepts.
func isRoleDict(m map[string]any) bool {
	if roleKinds[getStr(m, "role")] == "" {
		return false
	}
	_, ok := m["content"]
	return ok
}

// lcUpdate returns the state updates of a LangGraph updates-stream chunk,
// in node-name order, or ok false when r is not one.
func lcUpdate(r any) (states []map[string]any, ok bool) {
	if tup, isArr := r.([]any); isArr && len(tup) >= 2 {
		// (mode, chunk), (namespace, chunk) or (namespace, mode, chunk).
		for _, e := range tup[:len(tup)-1] {
			switch t := e.(type) {
			case string:
				if t != "updates" {
					return nil, true // another stream mode: nothing to read
				}
			case []any:
			default:
				return nil, false
			}
		}
		r = tup[len(tup)-1]
	}
	m, isObj := r.(map[string]any)
	if !isObj || len(m) == 0 {
		return nil, false
	}
	if _, isMsg := m["messages"]; isMsg {
		return nil, false
	}
	nodes := make([]string, 0, len(m))
	for k := range m {
		nodes = append(nodes, k)
	}
	sort.Strings(nodes)
	found := false
	for _, k := range nodes {
		switch v := m[k].(type) {
		case nil:
		case map[string]any:
			if _, ok := v["messages"]; ok {
				states = append(states, v)
				found = true
			}
		case []any:
			if strings.HasPrefix(k, "__") {
				continue // __interrupt__ and other control entries
			}
			return nil, false
		default:
			return nil, false
		}
	}
	return states, found
}

func isLCToolCall(m map[string]any) bool {
	if getStr(m, "type") != "tool_call" {
		return false
	}
	_, ok := m["name"].(string)
	return ok
}

func (langchainAdapter) Detect(in *Input) (string, bool) {
	if m, ok := in.Value.(map[string]any); ok && in.Form == FormJSON {
		if k, _, how := lcMessage(m); k != "" {
			return "a single LangChain " + k + " message " + how, true
		}
		if msgs, ok := m["messages"].([]any); ok {
			if why, ok := lcList(msgs); ok {
				return `a LangGraph state whose "messages" are ` + why, true
			}
			return "", false
		}
		if _, ok := lcUpdate(m); ok {
			return "a LangGraph updates-stream chunk", true
		}
		if isLCToolCall(m) {
			return "a single LangChain tool call", true
		}
		return "", false
	}
	recs := in.Records()
	if why, ok := lcList(recs); ok {
		return "a list of " + why, true
	}
	if len(recs) == 0 {
		return "", false
	}
	updates, states := 0, 0
	for _, r := range recs {
		if _, ok := lcUpdate(r); ok {
			updates++
			continue
		}
		if m, ok := r.(map[string]any); ok {
			if msgs, ok := m["messages"].([]any); ok {
				if _, ok := lcList(msgs); ok || len(msgs) == 0 {
					states++
					continue
				}
			}
		}
		return "", false
	}
	if states > 0 && updates == 0 {
		return "a LangGraph values stream of " + plural(states, "state"), true
	}
	if states == 0 {
		return "a LangGraph updates stream of " + plural(updates, "chunk"), true
	}
	return "", false
}

// lcList reports whether msgs are LangChain messages: each a LangChain
// message or a {role, content} dict, at least one of them LangChain's.
func lcList(msgs []any) (string, bool) {
	how := ""
	for _, e := range msgs {
		m, ok := e.(map[string]any)
		if !ok {
			return "", false
		}
		if k, _, h := lcMessage(m); k != "" {
			if how == "" {
				how = h
			}
			continue
		}
		if !isRoleDict(m) {
			return "", false
		}
	}
	if how == "" {
		return "", false
	}
	return plural(len(msgs), "LangChain message") + " " + how, true
}

func (langchainAdapter) Parse(in *Input) (engine.Trace, error) {
	p := lcParser{b: newBuilder()}
	switch v := in.Value.(type) {
	case map[string]any:
		if isLCToolCall(v) {
			p.call(v)
			break
		}
		if k, f := lcAnyMessage(v); k != "" {
			p.message(k, f)
			break
		}
		if msgs, ok := v["messages"]; ok {
			list, ok := msgs.([]any)
			if !ok {
				return engine.Trace{}, shapeErr("langchain", []any{"messages"}, "messages must be an array, not %s", aType(msgs))
			}
			if err := p.messages(list, []any{"messages"}); err != nil {
				return engine.Trace{}, err
			}
			break
		}
		states, ok := lcUpdate(v)
		if !ok {
			return engine.Trace{}, notFit("langchain", nil, v, "expected messages, a graph state, an updates-stream chunk or a tool call")
		}
		if err := p.states(states, nil); err != nil {
			return engine.Trace{}, err
		}
	case []any:
		if err := p.records(v); err != nil {
			return engine.Trace{}, err
		}
	default:
		return engine.Trace{}, shapeErr("langchain", nil, "expected a JSON object or array, not %s", aType(v))
	}
	return p.b.trace(), nil
}

type lcParser struct {
	b *builder
}

// records reads a list of messages, of updates-stream chunks, or of states
// (a values stream, of which only the last state counts).
func (p *lcParser) records(recs []any) error {
	if _, ok := lcList(recs); ok {
		return p.messages(recs, nil)
	}
	last := -1
	for i, r := range recs {
		if m, ok := r.(map[string]any); ok {
			if _, ok := m["messages"].([]any); ok {
				last = i
			}
		}
	}
	if last >= 0 {
		// A values stream: every record is a state.
		for i, r := range recs {
			m, _ := r.(map[string]any)
			if _, ok := m["messages"].([]any); !ok {
				return notFit("langchain", []any{i}, r, `not a LangGraph state: it has no "messages" array (other records are states)`)
			}
		}
		m := recs[last].(map[string]any)
		return p.messages(m["messages"].([]any), []any{last, "messages"})
	}
	for i, r := range recs {
		states, ok := lcUpdate(r)
		if !ok {
			if m, isObj := r.(map[string]any); isObj {
				if k, f := lcAnyMessage(m); k != "" {
					p.message(k, f)
					continue
				}
			}
			return notFit("langchain", []any{i}, r, "not a LangChain message or a LangGraph updates-stream chunk")
		}
		if err := p.states(states, []any{i}); err != nil {
			return err
		}
	}
	return nil
}

func (p *lcParser) states(states []map[string]any, at []any) error {
	for _, s := range states {
		switch msgs := s["messages"].(type) {
		case []any:
			if err := p.messages(msgs, at); err != nil {
				return err
			}
		case map[string]any:
			if err := p.messages([]any{msgs}, at); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *lcParser) messages(list []any, at []any) error {
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return shapeErr("langchain", append(at, i), "a message must be an object, not %s", aType(e))
		}
		k, f := lcAnyMessage(m)
		if k == "" {
			return notFit("langchain", append(at, i), m, "not a LangChain message")
		}
		p.message(k, f)
	}
	return nil
}

func (p *lcParser) message(kind string, f map[string]any) {
	switch kind {
	case "ai":
		made := p.aiCalls(f)
		p.b.turn(lcText(f["content"]), made)
	case "tool":
		errText := ""
		if getStr(f, "status") == "error" {
			if errText = strings.TrimSpace(lcText(f["content"])); errText == "" {
				errText = "true"
			}
		}
		p.b.result(idString(f["tool_call_id"]), "", f["content"], errText)
	case "function":
		p.b.result("", getStr(f, "name"), f["content"], "")
	}
}

// aiCalls adds the calls of an AI message and reports whether it made any.
func (p *lcParser) aiCalls(f map[string]any) bool {
	tcs := getArr(f, "tool_calls")
	invalid := getArr(f, "invalid_tool_calls")
	if len(tcs) == 0 && len(invalid) == 0 {
		return p.fallbackCalls(f)
	}
	var calls []engine.ToolCall
	for _, tc := range tcs {
		tm, _ := tc.(map[string]any)
		if _, ok := tm["function"]; ok {
			// An OpenAI-style call in a {role, content} dict, which
			// LangChain converts.
			op := openAIParser{b: p.b}
			calls = append(calls, op.toolCall(tm))
			continue
		}
		c := engine.ToolCall{Tool: getStr(tm, "name"), ID: idString(tm["id"])}
		p.b.setArgs(&c, tm["args"])
		calls = append(calls, c)
	}
	for _, tc := range invalid {
		tm, _ := tc.(map[string]any)
		c := engine.ToolCall{Tool: getStr(tm, "name"), ID: idString(tm["id"])}
		c.ArgsRaw, _ = tm["args"].(string)
		if c.ArgsError = getStr(tm, "error"); c.ArgsError == "" {
			c.ArgsError = "listed in invalid_tool_calls"
		}
		calls = append(calls, c)
	}
	// Keep the order the provider gave when it is known.
	if order := lcProviderOrder(f); len(order) > 0 {
		slices.SortStableFunc(calls, func(a, b engine.ToolCall) int {
			return order[a.ID] - order[b.ID]
		})
	}
	for _, c := range calls {
		p.b.add(c)
	}
	return len(calls) > 0
}

// lcProviderOrder maps call ids to their 1-based position in the
// provider's raw calls (additional_kwargs.tool_calls or tool_use content
// blocks); ids not found map to 0.
func lcProviderOrder(f map[string]any) map[string]int {
	order := map[string]int{}
	kw, _ := f["additional_kwargs"].(map[string]any)
	for i, tc := range getArr(kw, "tool_calls") {
		tm, _ := tc.(map[string]any)
		if id := idString(tm["id"]); id != "" {
			order[id] = i + 1
		}
	}
	if len(order) > 0 {
		return order
	}
	for i, bl := range getArr(f, "content") {
		bm, _ := bl.(map[string]any)
		if t := getStr(bm, "type"); t == "tool_use" || t == "tool_call" {
			if id := idString(bm["id"]); id != "" {
				order[id] = i + 1
			}
		}
	}
	return order
}

// fallbackCalls reads calls an older dump keeps only in
// additional_kwargs (OpenAI tool_calls or function_call) or as content
// blocks (Anthropic tool_use, LangChain tool_call).
func (p *lcParser) fallbackCalls(f map[string]any) bool {
	made := false
	kw, _ := f["additional_kwargs"].(map[string]any)
	if tcs := getArr(kw, "tool_calls"); len(tcs) > 0 {
		op := openAIParser{b: p.b}
		for _, tc := range tcs {
			tm, _ := tc.(map[string]any)
			p.b.add(op.toolCall(tm))
		}
		return true
	}
	if fc, ok := kw["function_call"].(map[string]any); ok {
		c := engine.ToolCall{Tool: getStr(fc, "name")}
		p.b.setArgs(&c, fc["arguments"])
		p.b.add(c)
		return true
	}
	for _, bl := range getArr(f, "content") {
		bm, _ := bl.(map[string]any)
		switch getStr(bm, "type") {
		case "tool_use":
			c := engine.ToolCall{Tool: getStr(bm, "name"), ID: idString(bm["id"])}
			p.b.setArgs(&c, bm["input"])
			p.b.add(c)
			made = true
		case "tool_call":
			p.call(bm)
			made = true
		}
	}
	return made
}

// call adds a LangChain ToolCall dict {name, args, id}.
func (p *lcParser) call(tm map[string]any) {
	c := engine.ToolCall{Tool: getStr(tm, "name"), ID: idString(tm["id"])}
	p.b.setArgs(&c, tm["args"])
	p.b.add(c)
}

// lcText is the visible text of a message's content: a string, or the
// text of its text blocks (reasoning, thinking and tool blocks left out).
func lcText(content any) string {
	return partsText(content, "text", "output_text")
}
