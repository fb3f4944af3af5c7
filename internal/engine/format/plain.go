package format

import (
	"slices"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// plainAdapter reads toolscore's own shape (SPEC section 1): a JSON array
// of {tool, args, id?, result?, error?, args_raw?, args_error?}, an object
// {"calls": [...], "final_answer"?}, or one call object alone. It also reads
// back what json.Marshal writes for an engine.Trace, and Python
// Toolscore's "custom" shapes: calls written {name, arguments} (arguments
// an object or JSON text; also "input"), a {"tool_calls": [...]} wrapper,
// LangChain AgentAction lists ({tool, tool_input, log}) and
// intermediate_steps ([[action, observation], ...], alone or as
// {"intermediate_steps": [...], "output"}).
//
// It is the simplest adapter and the one to copy: Detect looks at the
// shape cheaply (Input.Object, Input.Records, Value.Get), Parse walks the
// values, builds each engine.ToolCall with a builder (setArgs, setResult)
// and reports a value of the wrong shape with shapeErr or notFit at that
// value.
type plainAdapter struct{}

func (plainAdapter) Name() string { return "plain" }

func (plainAdapter) Detect(in *Input) (string, bool) {
	if m, ok := in.Object(); ok {
		switch {
		case m.Get("calls").Exists():
			return `a JSON object with "calls"`, true
		case isPlainCall(m):
			return `a single {"tool", "args"} call object`, true
		case isArr(m.Get("intermediate_steps")) && isSteps(m.Get("intermediate_steps")):
			return `a LangChain agent output with "intermediate_steps"`, true
		case !m.Get("role").Exists() && isArr(m.Get("tool_calls")) && m.Get("tool_calls").Len() > 0 && allPlainCalls(m.Get("tool_calls")):
			return `a JSON object with "tool_calls" of {"name", "arguments"} or {"tool", "args"} calls`, true
		}
		return "", false
	}
	v := in.Value()
	if !isArr(v) {
		return "", false
	}
	if v.Len() == 0 && in.Form == FormJSON {
		return "an empty JSON array (a trace with no calls)", true
	}
	if v.Len() == 0 {
		return "", false
	}
	if isSteps(v) {
		return "LangChain intermediate_steps ([action, observation] pairs)", true
	}
	named := false
	for _, e := range v.Elems() {
		if isPlainCall(e) {
			continue
		}
		if !isNamedCall(e) {
			return "", false
		}
		named = true
	}
	if named {
		return `a list of {"name", "arguments"} call objects`, true
	}
	return `a list of {"tool", "args"} call objects`, true
}

func isPlainCall(m jsondoc.Value) bool {
	if m.Kind() != jsondoc.Object {
		return false
	}
	// m.Get("tool").Kind() == jsondoc.String, in one pass over the keys
	// compared with a constant.
	ns := m.Nodes()
	last := !ns.RepeatsKey(0) // the first "tool" is the last
	str := false
	for j, n := 1, ns.Count(0); n > 0; n-- {
		if ns.Text(j) == "tool" {
			if str = ns.Kind(j+1) == jsondoc.String; last {
				return str
			}
		}
		j = ns.Skip(j + 1)
	}
	return str
}

// isNamedCall reports whether m is a call written {name, arguments} (or
// args, input), as Python Toolscore's custom format allows: a string name,
// one of the argument keys, and no role (a chat message) or function (an
// OpenAI tool call).
func isNamedCall(m jsondoc.Value) bool {
	if m.Get("name").Kind() != jsondoc.String || m.Get("role").Exists() || m.Get("function").Exists() {
		return false
	}
	_, ok := first(m, "arguments", "args", "input")
	return ok
}

// allPlainCalls reports whether every element of list is a plain or named
// call.
func allPlainCalls(list jsondoc.Value) bool {
	for _, e := range list.Elems() {
		if !isPlainCall(e) && !isNamedCall(e) {
			return false
		}
	}
	return true
}

// isSteps reports whether list is LangChain intermediate_steps: a
// non-empty array of [action, observation] pairs whose action has a
// string "tool".
func isSteps(list jsondoc.Value) bool {
	if list.Len() == 0 {
		return false
	}
	for _, e := range list.Elems() {
		if !isArr(e) || e.Len() != 2 || !isPlainCall(e.Index(0)) {
			return false
		}
	}
	return true
}

func (plainAdapter) Parse(in *Input) (engine.Trace, error) {
	b := in.newBuilder()
	var list jsondoc.Value
	v := in.Value()
	switch v.Kind() {
	case jsondoc.Object:
		switch {
		case v.Get("calls").Exists():
			c := v.Get("calls")
			if !isArr(c) && set(c) {
				return engine.Trace{}, shapeErr("plain", c, "calls must be an array, not %s", aType(c))
			}
			list = c
			if err := b.plainAnswer(v.Get("final_answer")); err != nil {
				return engine.Trace{}, err
			}
		case v.Get("tool").Exists() || isNamedCall(v):
			return b.plainCalls([]jsondoc.Value{v})
		case isArr(v.Get("intermediate_steps")):
			steps := v.Get("intermediate_steps")
			if !isSteps(steps) {
				return engine.Trace{}, shapeErr("plain", steps, "intermediate_steps must be [action, observation] pairs whose action has a string \"tool\"")
			}
			if out := v.Get("output"); out.Kind() == jsondoc.String {
				b.final = visible(out.Text())
			}
			return b.plainSteps(steps)
		case isArr(v.Get("tool_calls")):
			list = v.Get("tool_calls")
		default:
			return engine.Trace{}, notFit("plain", v, `expected an array of calls, an object with "calls", or one call object with "tool"`)
		}
	case jsondoc.Array:
		if isSteps(v) {
			return b.plainSteps(v)
		}
		if in.Form == FormJSON {
			// The document is the list of calls: its records are its
			// elements.
			return b.plainCalls(in.Records())
		}
		list = v
	default:
		return engine.Trace{}, shapeErr("plain", v, "expected an array of calls or an object, not %s", aType(v))
	}
	return b.plainCalls(elems(list))
}

// plainAnswer reads a plain trace's final_answer: a string or null.
func (b *builder) plainAnswer(fa jsondoc.Value) error {
	switch fa.Kind() {
	case jsondoc.Invalid, jsondoc.Null:
	case jsondoc.String:
		s := fa.Text()
		b.final = &s
	default:
		return shapeErr("plain", fa, "final_answer must be a string or null, not %s", aType(fa))
	}
	return nil
}

// plainSteps reads LangChain intermediate_steps: each pair's action is a
// call, its observation the result.
func (b *builder) plainSteps(steps jsondoc.Value) (engine.Trace, error) {
	calls := make([]jsondoc.Value, 0, steps.Len())
	results := make([]jsondoc.Value, 0, steps.Len())
	for _, p := range steps.Elems() {
		calls = append(calls, p.Index(0))
		results = append(results, p.Index(1))
	}
	t, err := b.plainCalls(calls)
	if err != nil {
		return engine.Trace{}, err
	}
	for i := range t.Calls {
		setResult(&t.Calls[i], results[i])
	}
	return t, nil
}

// plainCalls reads the call objects of a plain trace.
func (b *builder) plainCalls(list []jsondoc.Value) (engine.Trace, error) {
	if len(list) > 0 {
		b.calls = slices.Grow(b.calls[:0], len(list))
	}
	for _, m := range list {
		if !isObj(m) {
			return engine.Trace{}, shapeErr("plain", m, "a call must be an object, not %s", aType(m))
		}
		var f callFields
		f.read(m)
		b.calls = append(b.calls, engine.ToolCall{})
		c := &b.calls[len(b.calls)-1]
		tool := f.tool
		if !tool.Exists() && f.named() {
			tool = f.name
		}
		switch {
		case tool.Kind() == jsondoc.String:
			c.Tool = tool.Text()
		case !set(tool):
			return engine.Trace{}, shapeErr("plain", m, `the call has no "tool"`)
		default:
			return engine.Trace{}, shapeErr("plain", tool, "tool must be a string, not %s", aType(tool))
		}
		id := f.id
		if !id.Exists() {
			id = f.toolCallID
		}
		switch id.Kind() {
		case jsondoc.Invalid, jsondoc.Null:
		case jsondoc.String:
			c.ID = id.Text()
		default:
			if c.ID = idString(id); c.ID == "" {
				return engine.Trace{}, shapeErr("plain", id, "id must be a string, not %s", aType(id))
			}
		}
		args := f.anyArgs()
		switch {
		case f.argsError.Text() != "" && !set(args):
			// A call whose arguments could not be read, as toolscore
			// writes it: keep it that way.
			c.ArgsRaw = f.argsRaw.Text()
			c.ArgsError = f.argsError.Text()
		case !args.Exists() && f.toolInput.Exists():
			b.setToolInput(c, f.toolInput)
		default:
			b.setArgs(c, args)
		}
		result := f.result
		if !result.Exists() {
			result = f.output
		}
		setResult(c, result)
		switch ev := f.err; ev.Kind() {
		case jsondoc.Invalid, jsondoc.Null, jsondoc.Bool:
			c.Error = engine.CallError(errorText(ev))
		case jsondoc.String:
			c.Error = engine.CallError(ev.Text())
		default:
			return engine.Trace{}, shapeErr("plain", ev, "error must be a boolean or a string, not %s", aType(ev))
		}
	}
	return b.trace(), nil
}

// callFields are the members of a call object plainCalls reads, each the
// value Get gives (the last of a repeated key; the zero Value when
// absent), found in one walk over the members rather than one per key.
type callFields struct {
	tool, name, role, function    jsondoc.Value
	id, toolCallID                jsondoc.Value
	args, arguments, input        jsondoc.Value
	toolInput, argsError, argsRaw jsondoc.Value
	result, output, err           jsondoc.Value
}

// read sets f from the members of the call object m (f is zero). It
// steps through every member in document order, a repeated key's last
// value set last.
func (f *callFields) read(m jsondoc.Value) {
	if m.Kind() != jsondoc.Object {
		return
	}
	ns := m.Nodes()
	for j, n := 1, ns.Count(0); n > 0; n-- {
		k, v := ns.Text(j), ns.Value(j+1)
		j = ns.Skip(j + 1)
		switch k {
		case "tool":
			f.tool = v
		case "name":
			f.name = v
		case "role":
			f.role = v
		case "function":
			f.function = v
		case "id":
			f.id = v
		case "tool_call_id":
			f.toolCallID = v
		case "args":
			f.args = v
		case "arguments":
			f.arguments = v
		case "input":
			f.input = v
		case "tool_input":
			f.toolInput = v
		case "args_error":
			f.argsError = v
		case "args_raw":
			f.argsRaw = v
		case "result":
			f.result = v
		case "output":
			f.output = v
		case "error":
			f.err = v
		}
	}
}

// named is isNamedCall of the call object.
func (f *callFields) named() bool {
	return f.name.Kind() == jsondoc.String && !f.role.Exists() && !f.function.Exists() &&
		(f.arguments.Exists() || f.args.Exists() || f.input.Exists())
}

// anyArgs is the first of args, arguments and input present (first(m,
// "args", "arguments", "input")), or the zero Value.
func (f *callFields) anyArgs() jsondoc.Value {
	switch {
	case f.args.Exists():
		return f.args
	case f.arguments.Exists():
		return f.arguments
	}
	return f.input
}

// setToolInput reads a LangChain AgentAction's tool_input: an object, or
// text holding one, is the arguments; any other text is a single-input
// tool's input, {"input": text}, as LangChain and Python Toolscore read it.
func (b *builder) setToolInput(c *engine.ToolCall, ti jsondoc.Value) {
	s, ok := ti.Str()
	if !ok {
		b.setArgs(c, ti)
		return
	}
	if v, err := b.dec.Parse(s); err == nil && isObj(v) {
		b.setArgs(c, v)
		return
	}
	b.setArgs(c, b.synth(append(jsondoc.AppendString([]byte(`{"input":`), s), '}')))
}
