package format

import (
	"github.com/toolscore/toolscore/internal/engine"
)

// plainAdapter reads toolscore's own shape (SPEC section 1): a JSON array
// of {tool, args, id?, result?, error?, args_raw?, args_error?}, an object
// {"calls": [...], "final_answer"?}, or one call object alone. It also reads
// back what json.Marshal writes for an engine.Trace.
type plainAdapter struct{}

func (plainAdapter) Name() string { return "plain" }

func (plainAdapter) Detect(in *Input) (string, bool) {
	switch v := in.Value.(type) {
	case map[string]any:
		if _, ok := v["calls"]; ok && in.Form == FormJSON {
			return `a JSON object with "calls"`, true
		}
		if isPlainCall(v) && in.Form == FormJSON {
			return `a single {"tool", "args"} call object`, true
		}
	case []any:
		if len(v) == 0 && in.Form == FormJSON {
			return "an empty JSON array (a trace with no calls)", true
		}
		for _, e := range v {
			m, ok := e.(map[string]any)
			if !ok || !isPlainCall(m) {
				return "", false
			}
		}
		if len(v) > 0 {
			return `a list of {"tool", "args"} call objects`, true
		}
	}
	return "", false
}

func isPlainCall(m map[string]any) bool {
	_, ok := m["tool"].(string)
	return ok
}

func (plainAdapter) Parse(in *Input) (engine.Trace, error) {
	b := newBuilder()
	var list []any
	var base []any
	single := false
	switch v := in.Value.(type) {
	case map[string]any:
		if c, ok := v["calls"]; ok {
			l, ok := c.([]any)
			if !ok && c != nil {
				return engine.Trace{}, shapeErr("plain", []any{"calls"}, "calls must be an array, not %s", aType(c))
			}
			list, base = l, []any{"calls"}
			switch fa := v["final_answer"].(type) {
			case nil:
			case string:
				b.final = &fa
			default:
				return engine.Trace{}, shapeErr("plain", []any{"final_answer"}, "final_answer must be a string or null, not %s", aType(fa))
			}
		} else if _, ok := v["tool"]; ok {
			list, single = []any{v}, true
		} else {
			return engine.Trace{}, notFit("plain", nil, v, `expected an array of calls, an object with "calls", or one call object with "tool"`)
		}
	case []any:
		list = v
	default:
		return engine.Trace{}, shapeErr("plain", nil, "expected an array of calls or an object, not %s", aType(v))
	}
	at := func(i int, k ...any) []any {
		p := append(append(append([]any{}, base...), i), k...)
		if single {
			p = k
		}
		return p
	}
	if len(list) > 0 {
		b.calls = make([]engine.ToolCall, 0, len(list))
	}
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return engine.Trace{}, shapeErr("plain", at(i), "a call must be an object, not %s", aType(e))
		}
		var c engine.ToolCall
		tool, ok := m["tool"].(string)
		if !ok {
			if m["tool"] == nil {
				return engine.Trace{}, shapeErr("plain", at(i), `the call has no "tool"`)
			}
			return engine.Trace{}, shapeErr("plain", at(i, "tool"), "tool must be a string, not %s", aType(m["tool"]))
		}
		c.Tool = tool
		switch id := m["id"].(type) {
		case nil:
		case string:
			c.ID = id
		default:
			if c.ID = idString(id); c.ID == "" {
				return engine.Trace{}, shapeErr("plain", at(i, "id"), "id must be a string, not %s", aType(id))
			}
		}
		args := m["args"]
		if ae, ok := m["args_error"].(string); ok && ae != "" && args == nil {
			// A call whose arguments could not be read, as toolscore
			// writes it: keep it that way.
			c.ArgsRaw, _ = m["args_raw"].(string)
			c.ArgsError = ae
		} else {
			b.setArgs(&c, args)
		}
		c.Result = m["result"]
		switch ev := m["error"].(type) {
		case nil, bool:
			c.Error = engine.CallError(errorText(ev))
		case string:
			c.Error = engine.CallError(ev)
		default:
			return engine.Trace{}, shapeErr("plain", at(i, "error"), "error must be a boolean or a string, not %s", aType(ev))
		}
		b.calls = append(b.calls, c)
	}
	return b.trace(), nil
}
