package format

import (
	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// plainAdapter reads toolscore's own shape (SPEC section 1): a JSON array
// of {tool, args, id?, result?, error?, args_raw?, args_error?}, an object
// {"calls": [...], "final_answer"?}, or one call object alone. It also reads
// back what json.Marshal writes for an engine.Trace.
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
		if m.Get("calls").Exists() {
			return `a JSON object with "calls"`, true
		}
		if isPlainCall(m) {
			return `a single {"tool", "args"} call object`, true
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
	for _, e := range v.Elems() {
		if !isPlainCall(e) {
			return "", false
		}
	}
	if v.Len() > 0 {
		return `a list of {"tool", "args"} call objects`, true
	}
	return "", false
}

func isPlainCall(m jsondoc.Value) bool {
	return m.Get("tool").Kind() == jsondoc.String
}

func (plainAdapter) Parse(in *Input) (engine.Trace, error) {
	b := newBuilder()
	var list jsondoc.Value
	v := in.Value()
	switch v.Kind() {
	case jsondoc.Object:
		if c := v.Get("calls"); c.Exists() {
			if !isArr(c) && !c.IsNull() {
				return engine.Trace{}, shapeErr("plain", c, "calls must be an array, not %s", aType(c))
			}
			list = c
			switch fa := v.Get("final_answer"); fa.Kind() {
			case jsondoc.Invalid, jsondoc.Null:
			case jsondoc.String:
				s := fa.Text()
				b.final = &s
			default:
				return engine.Trace{}, shapeErr("plain", fa, "final_answer must be a string or null, not %s", aType(fa))
			}
		} else if v.Get("tool").Exists() {
			return b.plainCalls([]jsondoc.Value{v})
		} else {
			return engine.Trace{}, notFit("plain", v, `expected an array of calls, an object with "calls", or one call object with "tool"`)
		}
	case jsondoc.Array:
		list = v
	default:
		return engine.Trace{}, shapeErr("plain", v, "expected an array of calls or an object, not %s", aType(v))
	}
	calls := make([]jsondoc.Value, 0, list.Len())
	for _, e := range list.Elems() {
		calls = append(calls, e)
	}
	return b.plainCalls(calls)
}

// plainCalls reads the call objects of a plain trace.
func (b *builder) plainCalls(list []jsondoc.Value) (engine.Trace, error) {
	if len(list) > 0 {
		b.calls = make([]engine.ToolCall, 0, len(list))
	}
	for _, m := range list {
		if !isObj(m) {
			return engine.Trace{}, shapeErr("plain", m, "a call must be an object, not %s", aType(m))
		}
		var c engine.ToolCall
		tool := m.Get("tool")
		switch {
		case tool.Kind() == jsondoc.String:
			c.Tool = tool.Text()
		case !set(tool):
			return engine.Trace{}, shapeErr("plain", m, `the call has no "tool"`)
		default:
			return engine.Trace{}, shapeErr("plain", tool, "tool must be a string, not %s", aType(tool))
		}
		switch id := m.Get("id"); id.Kind() {
		case jsondoc.Invalid, jsondoc.Null:
		case jsondoc.String:
			c.ID = id.Text()
		default:
			if c.ID = idString(id); c.ID == "" {
				return engine.Trace{}, shapeErr("plain", id, "id must be a string, not %s", aType(id))
			}
		}
		args := m.Get("args")
		if ae := m.Get("args_error").Text(); ae != "" && !set(args) {
			// A call whose arguments could not be read, as toolscore
			// writes it: keep it that way.
			c.ArgsRaw = m.Get("args_raw").Text()
			c.ArgsError = ae
		} else {
			b.setArgs(&c, args)
		}
		setResult(&c, m.Get("result"))
		switch ev := m.Get("error"); ev.Kind() {
		case jsondoc.Invalid, jsondoc.Null, jsondoc.Bool:
			c.Error = engine.CallError(errorText(ev))
		case jsondoc.String:
			c.Error = engine.CallError(ev.Text())
		default:
			return engine.Trace{}, shapeErr("plain", ev, "error must be a boolean or a string, not %s", aType(ev))
		}
		b.calls = append(b.calls, c)
	}
	return b.trace(), nil
}
