package format

import (
	"slices"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// langchainAdapter reads LangChain and LangGraph dumps: lists of messages
// as messages_to_dict writes them ({type, data}), as model_dump writes them
// ({type, content, tool_calls, ...}), or serialised with dumpd (lc: 1
// constructor objects); a graph state {"messages": [...]}; LangGraph
// stream_mode "updates" output ({node: {"messages": [...]}} per step, also
// as (mode, chunk) or (namespace, chunk) tuples); "values" output (a state
// per step: the last one is read); a single message; a single tool call.
//
// AI messages give calls from tool_calls (name, args object, id; the
// arguments text of the same call in additional_kwargs.tool_calls when
// there is one) and invalid_tool_calls (arguments kept raw, with the
// recorded error). A call
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
func lcMessage(m jsondoc.Value) (kind string, fields jsondoc.Value, how string) {
	if idString(m.Get("lc")) == "1" && m.Get("type").Text() == "constructor" {
		if id := m.Get("id"); isArr(id) && id.Len() > 0 {
			cls := id.Index(id.Len() - 1).Text()
			if k := lcKinds[cls]; k != "" {
				kw := m.Get("kwargs")
				if !isObj(kw) {
					kw = jsondoc.Value{}
				}
				return k, kw, "serialised with dumpd (lc: 1)"
			}
		}
		return "", jsondoc.Value{}, ""
	}
	k := lcKinds[m.Get("type").Text()]
	if k == "" {
		return "", jsondoc.Value{}, ""
	}
	if data := m.Get("data"); isObj(data) {
		return k, data, "in messages_to_dict form ({type, data})"
	}
	if m.Get("content").Exists() {
		return k, m, "as message dicts ({type, content})"
	}
	return "", jsondoc.Value{}, ""
}

// roleKinds maps OpenAI-style roles, which LangChain accepts as input, to
// kinds.
var roleKinds = map[string]string{"user": "human", "assistant": "ai", "tool": "tool", "system": "system"}

// lcAnyMessage is lcMessage that also accepts {role, content} dicts (both
// keys are needed, as LangChain's convert_to_messages requires).
func lcAnyMessage(m jsondoc.Value) (string, jsondoc.Value) {
	if k, f, _ := lcMessage(m); k != "" {
		return k, f
	}
	if isRoleDict(m) {
		return roleKinds[m.Get("role").Text()], m
	}
	return "", jsondoc.Value{}
}

// isRoleDict reports whether m is a {role, content} input dict LangChain
// accepts.
func isRoleDict(m jsondoc.Value) bool {
	return roleKinds[m.Get("role").Text()] != "" && m.Get("content").Exists()
}

// lcUpdate returns the state updates of a LangGraph updates-stream chunk,
// in node-name order, or ok false when r is not one.
func lcUpdate(r jsondoc.Value) (states []jsondoc.Value, ok bool) {
	if isArr(r) && r.Len() >= 2 {
		// (mode, chunk), (namespace, chunk) or (namespace, mode, chunk).
		tup := elems(r)
		for _, e := range tup[:len(tup)-1] {
			switch e.Kind() {
			case jsondoc.String:
				if e.Text() != "updates" {
					return nil, true // another stream mode: nothing to read
				}
			case jsondoc.Array:
			default:
				return nil, false
			}
		}
		r = tup[len(tup)-1]
	}
	if !isObj(r) || r.Len() == 0 {
		return nil, false
	}
	if r.Get("messages").Exists() {
		return nil, false
	}
	type node struct {
		name string
		v    jsondoc.Value
	}
	nodes := make([]node, 0, r.Len())
	for k, v := range r.Members() {
		nodes = append(nodes, node{k, v})
	}
	slices.SortFunc(nodes, func(a, b node) int { return strings.Compare(a.name, b.name) })
	found := false
	for _, n := range nodes {
		switch n.v.Kind() {
		case jsondoc.Null:
		case jsondoc.Object:
			if n.v.Get("messages").Exists() {
				states = append(states, n.v)
				found = true
			}
		case jsondoc.Array:
			if strings.HasPrefix(n.name, "__") {
				continue // __interrupt__ and other control entries
			}
			return nil, false
		default:
			return nil, false
		}
	}
	return states, found
}

func isLCToolCall(m jsondoc.Value) bool {
	return m.Get("type").Text() == "tool_call" && m.Get("name").Kind() == jsondoc.String
}

func (langchainAdapter) Detect(in *Input) (string, bool) {
	if m, ok := in.Object(); ok {
		if k, _, how := lcMessage(m); k != "" {
			return "a single LangChain " + k + " message " + how, true
		}
		if msgs := m.Get("messages"); isArr(msgs) {
			if why, ok := lcList(elems(msgs)); ok {
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
		if msgs := r.Get("messages"); isArr(msgs) {
			if _, ok := lcList(elems(msgs)); ok || msgs.Len() == 0 {
				states++
				continue
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
func lcList(msgs []jsondoc.Value) (string, bool) {
	how := ""
	for _, m := range msgs {
		if !isObj(m) {
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
	p := lcParser{b: in.newBuilder()}
	v := in.Value()
	switch v.Kind() {
	case jsondoc.Object:
		if isLCToolCall(v) {
			if err := p.call(v); err != nil {
				return engine.Trace{}, err
			}
			break
		}
		if k, f := lcAnyMessage(v); k != "" {
			if err := p.message(k, f); err != nil {
				return engine.Trace{}, err
			}
			break
		}
		if msgs := v.Get("messages"); msgs.Exists() {
			if !isArr(msgs) {
				return engine.Trace{}, shapeErr("langchain", msgs, "messages must be an array, not %s", aType(msgs))
			}
			if err := p.messages(elems(msgs)); err != nil {
				return engine.Trace{}, err
			}
			break
		}
		states, ok := lcUpdate(v)
		if !ok {
			return engine.Trace{}, notFit("langchain", v, "expected messages, a graph state, an updates-stream chunk or a tool call")
		}
		if err := p.states(states); err != nil {
			return engine.Trace{}, err
		}
	case jsondoc.Array:
		if err := p.records(elems(v)); err != nil {
			return engine.Trace{}, err
		}
	default:
		return engine.Trace{}, shapeErr("langchain", v, "expected a JSON object or array, not %s", aType(v))
	}
	return p.b.trace(), nil
}

type lcParser struct {
	b *builder
}

// records reads a list of messages, of updates-stream chunks, or of states
// (a values stream, of which only the last state counts).
func (p *lcParser) records(recs []jsondoc.Value) error {
	if _, ok := lcList(recs); ok {
		return p.messages(recs)
	}
	last := -1
	for i, r := range recs {
		if isArr(r.Get("messages")) {
			last = i
		}
	}
	if last >= 0 {
		// A values stream: every record is a state.
		for _, r := range recs {
			if !isArr(r.Get("messages")) {
				return notFit("langchain", r, `not a LangGraph state: it has no "messages" array (other records are states)`)
			}
		}
		return p.messages(elems(recs[last].Get("messages")))
	}
	for _, r := range recs {
		states, ok := lcUpdate(r)
		if !ok {
			if isObj(r) {
				if k, f := lcAnyMessage(r); k != "" {
					if err := p.message(k, f); err != nil {
						return err
					}
					continue
				}
			}
			return notFit("langchain", r, "not a LangChain message or a LangGraph updates-stream chunk")
		}
		if err := p.states(states); err != nil {
			return err
		}
	}
	return nil
}

func (p *lcParser) states(states []jsondoc.Value) error {
	for _, s := range states {
		switch msgs := s.Get("messages"); msgs.Kind() {
		case jsondoc.Array:
			if err := p.messages(elems(msgs)); err != nil {
				return err
			}
		case jsondoc.Object:
			if err := p.messages([]jsondoc.Value{msgs}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *lcParser) messages(list []jsondoc.Value) error {
	for _, m := range list {
		if !isObj(m) {
			return shapeErr("langchain", m, "a message must be an object, not %s", aType(m))
		}
		k, f := lcAnyMessage(m)
		if k == "" {
			return notFit("langchain", m, "not a LangChain message")
		}
		if err := p.message(k, f); err != nil {
			return err
		}
	}
	return nil
}

// message reads a message of the kind whose fields are f; a call list,
// name or id of the wrong type is a *ShapeError.
func (p *lcParser) message(kind string, f jsondoc.Value) error {
	switch kind {
	case "ai":
		made, err := p.aiCalls(f)
		if err != nil {
			return err
		}
		p.b.turn(lcText(f.Get("content")), made)
	case "tool":
		errText := ""
		if f.Get("status").Text() == "error" {
			if errText = strings.TrimSpace(lcText(f.Get("content"))); errText == "" {
				errText = "true"
			}
		}
		id, err := idOf("langchain", "tool_call_id", f.Get("tool_call_id"))
		if err != nil {
			return err
		}
		p.b.result(id, "", f.Get("content"), errText)
	case "function":
		name, err := str("langchain", "name", f.Get("name"))
		if err != nil {
			return err
		}
		p.b.result("", name, f.Get("content"), "")
	}
	return nil
}

// aiCalls adds the calls of an AI message and reports whether it made any.
func (p *lcParser) aiCalls(f jsondoc.Value) (bool, error) {
	for _, k := range [...]string{"tool_calls", "invalid_tool_calls"} {
		if l := f.Get(k); set(l) && !isArr(l) {
			return false, shapeErr("langchain", l, "%s must be an array, not %s", k, aType(l))
		}
	}
	tcs := elems(f.Get("tool_calls"))
	invalid := elems(f.Get("invalid_tool_calls"))
	if len(tcs) == 0 && len(invalid) == 0 {
		return p.fallbackCalls(f)
	}
	// The provider's raw calls keep the model's argument text (LangChain
	// JS and Python keep OpenAI's in additional_kwargs.tool_calls), which
	// tool_calls hold parsed: big integers rounded, 1.10 written 1.1.
	rawArgs := map[string]string{}
	for _, tm := range f.Get("additional_kwargs").Get("tool_calls").Elems() {
		if a := tm.Get("function").Get("arguments"); a.Kind() == jsondoc.String && idString(tm.Get("id")) != "" {
			rawArgs[idString(tm.Get("id"))+"\x00"+tm.Get("function").Get("name").Text()] = a.Text()
		}
	}
	var calls []engine.ToolCall
	for _, tm := range tcs {
		if tm.Get("function").Exists() {
			// An OpenAI-style call in a {role, content} dict, which
			// LangChain converts.
			op := openAIParser{b: p.b, format: "langchain"}
			c, err := op.toolCall(tm)
			if err != nil {
				return false, err
			}
			calls = append(calls, c)
			continue
		}
		c, err := lcCall(tm)
		if err != nil {
			return false, err
		}
		if text, ok := rawArgs[c.ID+"\x00"+c.Tool]; ok && c.ID != "" {
			p.b.setArgsText(&c, text)
		} else {
			p.b.setArgs(&c, tm.Get("args"))
		}
		calls = append(calls, c)
	}
	for _, tm := range invalid {
		c, err := lcCall(tm)
		if err != nil {
			return false, err
		}
		c.ArgsRaw = tm.Get("args").Text()
		if c.ArgsError = tm.Get("error").Text(); c.ArgsError == "" {
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
	return len(calls) > 0, nil
}

// lcCall reads the name and id of a LangChain ToolCall dict; either of the
// wrong type is a *ShapeError.
func lcCall(tm jsondoc.Value) (engine.ToolCall, error) {
	name, err := str("langchain", "name", tm.Get("name"))
	if err != nil {
		return engine.ToolCall{}, err
	}
	id, err := idOf("langchain", "id", tm.Get("id"))
	if err != nil {
		return engine.ToolCall{}, err
	}
	return engine.ToolCall{Tool: name, ID: id}, nil
}

// lcProviderOrder maps call ids to their 1-based position in the
// provider's raw calls (additional_kwargs.tool_calls or tool_use content
// blocks); ids not found map to 0.
func lcProviderOrder(f jsondoc.Value) map[string]int {
	order := map[string]int{}
	for i, tm := range f.Get("additional_kwargs").Get("tool_calls").Elems() {
		if id := idString(tm.Get("id")); id != "" {
			order[id] = i + 1
		}
	}
	if len(order) > 0 {
		return order
	}
	for i, bm := range f.Get("content").Elems() {
		if t := bm.Get("type").Text(); t == "tool_use" || t == "tool_call" {
			if id := idString(bm.Get("id")); id != "" {
				order[id] = i + 1
			}
		}
	}
	return order
}

// fallbackCalls reads calls an older dump keeps only in
// additional_kwargs (OpenAI tool_calls or function_call) or as content
// blocks (Anthropic tool_use, LangChain tool_call).
func (p *lcParser) fallbackCalls(f jsondoc.Value) (bool, error) {
	made := false
	kw := f.Get("additional_kwargs")
	if tcs := kw.Get("tool_calls"); isArr(tcs) && tcs.Len() > 0 {
		op := openAIParser{b: p.b, format: "langchain"}
		for _, tm := range tcs.Elems() {
			c, err := op.toolCall(tm)
			if err != nil {
				return false, err
			}
			p.b.add(c)
		}
		return true, nil
	}
	if fc := kw.Get("function_call"); isObj(fc) {
		name, err := str("langchain", "name", fc.Get("name"))
		if err != nil {
			return false, err
		}
		c := engine.ToolCall{Tool: name}
		p.b.setArgs(&c, fc.Get("arguments"))
		p.b.add(c)
		return true, nil
	}
	for _, bm := range f.Get("content").Elems() {
		switch bm.Get("type").Text() {
		case "tool_use":
			c, err := lcCall(bm)
			if err != nil {
				return false, err
			}
			p.b.setArgs(&c, bm.Get("input"))
			p.b.add(c)
			made = true
		case "tool_call":
			if err := p.call(bm); err != nil {
				return false, err
			}
			made = true
		}
	}
	return made, nil
}

// call adds a LangChain ToolCall dict {name, args, id}.
func (p *lcParser) call(tm jsondoc.Value) error {
	c, err := lcCall(tm)
	if err != nil {
		return err
	}
	p.b.setArgs(&c, tm.Get("args"))
	p.b.add(c)
	return nil
}

// lcText is the visible text of a message's content: a string, or the
// text of its text blocks (reasoning, thinking and tool blocks left out).
func lcText(content jsondoc.Value) string {
	return partsText(content, "text", "output_text")
}
