package format

import (
	"cmp"
	"slices"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// langSmithAdapter reads LangSmith runs: a run tree as the API and
// Client.readRun(id, {loadChildRuns: true}) return it (a run with
// "run_type" and nested "child_runs"), a list of runs (an export, or
// {"runs": [...]} as /runs/query answers), and the batches the client
// posts to /runs/batch ({"post": [...], "patch": [...]}, patches merged
// into their runs by id), as JSON or JSON Lines.
//
// Runs with run_type "tool" are calls, in dotted_order (else start_time,
// else document order): the tool is the run's name, the arguments its
// inputs (LangChain's {"input": "<JSON text>"} is decoded), the result its
// outputs ({"output": x} gives x; a LangChain ToolMessage gives its
// content), and a run error makes an error. LangChain's tool runs carry
// their call id (extra.tool_call_id), and then take the model's argument
// text from the llm run that requested them. The final answer is the root run's output: the
// last message of outputs.messages (OpenAI or LangChain style) or a string
// outputs.output / outputs.answer; else the last llm run's completion.
type langSmithAdapter struct{}

func (langSmithAdapter) Name() string { return "langsmith" }

func isLangSmithRun(m jsondoc.Value) bool {
	if m.Get("run_type").Kind() != jsondoc.String {
		return false
	}
	return m.Get("inputs").Exists() || m.Get("child_runs").Exists() || m.Get("trace_id").Exists()
}

func isLangSmithBatch(m jsondoc.Value) bool {
	post, patch := m.Get("post"), m.Get("patch")
	if !isArr(post) && !isArr(patch) {
		return false
	}
	for _, l := range [...]jsondoc.Value{post, patch} {
		for _, r := range l.Elems() {
			if !isObj(r) || !set(r.Get("id")) {
				return false
			}
		}
	}
	return true
}

// langSmithDoc classifies a record: "run", "batch", "runs" ({"runs": [...]}) or "".
func langSmithDoc(m jsondoc.Value) string {
	switch {
	case isLangSmithRun(m):
		return "run"
	case isLangSmithBatch(m):
		return "batch"
	}
	if runs := m.Get("runs"); isArr(runs) && runs.Len() > 0 && isLangSmithRun(runs.Index(0)) {
		return "runs"
	}
	return ""
}

// lsRun is one run: as posted (or listed), with the patches posted for it
// later, the latest of which wins for each field.
type lsRun struct {
	v       jsondoc.Value
	patches []jsondoc.Value
}

func (r *lsRun) get(k string) jsondoc.Value {
	for i := len(r.patches) - 1; i >= 0; i-- {
		if v := r.patches[i].Get(k); v.Exists() {
			return v
		}
	}
	return r.v.Get(k)
}

func (langSmithAdapter) Detect(in *Input) (string, bool) {
	recs := in.Records()
	if len(recs) == 0 {
		return "", false
	}
	kind := ""
	for _, r := range recs {
		if kind = langSmithDoc(r); kind == "" {
			return "", false
		}
	}
	runs, err := langSmithRuns(in)
	if err != nil {
		return "", false
	}
	tools := 0
	for _, r := range runs {
		if r.get("run_type").Text() == "tool" {
			tools++
		}
	}
	what := "a LangSmith run tree"
	switch {
	case kind == "batch":
		what = "LangSmith run batches (" + plural(len(recs), "/runs/batch request") + ")"
	case len(recs) > 1 || kind == "runs":
		what = "a LangSmith run list"
	}
	return what + " (" + plural(len(runs), "run") + ", " + plural(tools, "tool run") + ")", true
}

// noCalls says why a run tree read with no calls: its llm runs asked for
// tool calls, but no tool run was recorded (tools that were not traced).
func (langSmithAdapter) noCalls(in *Input) string {
	runs, err := langSmithRuns(in)
	if err != nil {
		return ""
	}
	llmCalls := 0
	for _, r := range runs {
		if r.get("run_type").Text() == "llm" {
			llmCalls += langSmithLLMToolCalls(r)
		}
	}
	if llmCalls == 0 {
		return ""
	}
	return "the llm runs request " + plural(llmCalls, "tool call") + " but no tool run was recorded, so the trace has no calls"
}

// langSmithRuns flattens the document's runs: trees (child_runs), lists,
// {"runs": [...]} and batches (patches joined to their runs by id), in
// document order.
func langSmithRuns(in *Input) ([]*lsRun, error) {
	var out []*lsRun
	byID := map[string]*lsRun{}
	var walk func(m jsondoc.Value) error
	walk = func(m jsondoc.Value) error {
		if !isObj(m) {
			return shapeErr("langsmith", m, "a run must be an object, not %s", aType(m))
		}
		if !isLangSmithRun(m) {
			return notFit("langsmith", m, `not a LangSmith run: it needs "run_type" and "inputs", "child_runs" or "trace_id"`)
		}
		id := idString(m.Get("id"))
		if _, dup := byID[id]; !dup || id == "" {
			r := &lsRun{v: m}
			out = append(out, r)
			if id != "" {
				byID[id] = r
			}
		}
		kids := m.Get("child_runs")
		if !set(kids) {
			return nil
		}
		if !isArr(kids) {
			return shapeErr("langsmith", kids, "child_runs must be an array, not %s", aType(kids))
		}
		for _, k := range kids.Elems() {
			if err := walk(k); err != nil {
				return err
			}
		}
		return nil
	}
	for _, m := range in.Records() {
		switch langSmithDoc(m) {
		case "run":
			if err := walk(m); err != nil {
				return nil, err
			}
		case "runs":
			for _, r := range m.Get("runs").Elems() {
				if err := walk(r); err != nil {
					return nil, err
				}
			}
		case "batch":
			for _, r := range m.Get("post").Elems() {
				if err := walk(r); err != nil {
					return nil, err
				}
			}
			for _, p := range m.Get("patch").Elems() {
				if r := byID[idString(p.Get("id"))]; r != nil {
					r.patches = append(r.patches, p)
				}
			}
		default:
			if !isObj(m) {
				return nil, shapeErr("langsmith", m, "a record must be an object, not %s", aType(m))
			}
			return nil, notFit("langsmith", m, `not a LangSmith run, run list or /runs/batch request body`)
		}
	}
	return out, nil
}

func (langSmithAdapter) Parse(in *Input) (engine.Trace, error) {
	runs, err := langSmithRuns(in)
	if err != nil {
		return engine.Trace{}, err
	}
	ordered := slices.Clone(runs)
	allDotted := true
	for _, r := range runs {
		if r.get("dotted_order").Text() == "" {
			allDotted = false
		}
	}
	key := "start_time"
	if allDotted {
		key = "dotted_order"
	}
	slices.SortStableFunc(ordered, func(a, c *lsRun) int {
		return strings.Compare(a.get(key).Text(), c.get(key).Text())
	})
	requested := langSmithRequestedArgs(runs)
	b := in.newBuilder()
	var lastLLM *lsRun
	for _, r := range ordered {
		switch r.get("run_type").Text() {
		case "tool":
			name, err := str("langsmith", "name", r.get("name"))
			if err != nil {
				return engine.Trace{}, err
			}
			id, err := idOf("langsmith", "tool_call_id", r.get("extra").Get("tool_call_id"))
			if err != nil {
				return engine.Trace{}, err
			}
			c := engine.ToolCall{Tool: name, ID: id}
			var msg jsondoc.Value // the LangChain ToolMessage the tool returned
			if out := r.get("outputs"); isObj(out) {
				o := out
				if x := out.Get("output"); out.Len() == 1 && set(x) {
					o = x
				}
				if m, ok := langChainToolMessage(o); ok {
					msg = m
					o = m.Get("content")
					if c.ID == "" {
						c.ID = idString(m.Get("tool_call_id"))
					}
				}
				setResult(&c, o)
			}
			inputs := r.get("inputs")
			if s := inputs.Get("input"); s.Kind() == jsondoc.String && inputs.Len() == 1 {
				inputs = s // LangChain: the tool input as JSON text
			}
			if text, ok := requested[c.ID]; ok && c.ID != "" {
				b.setArgsText(&c, text) // the model's exact argument text
			} else {
				b.setArgs(&c, inputs)
			}
			if e := r.get("error"); set(e) {
				if c.Error = engine.CallError(langSmithError(errorText(e))); c.Error == "" {
					c.Error = "true"
				}
			} else if msg.Get("status").Text() == "error" {
				c.Error = engine.CallError(cmp.Or(msg.Get("content").Text(), "true"))
			}
			k := b.add(c)
			b.done[k] = true
		case "llm":
			lastLLM = r
		}
	}
	t := b.trace()
	t.FinalAnswer = langSmithFinal(runs, lastLLM)
	return t, nil
}

// langSmithFinal is the final answer: the root run's output, else the
// last llm run's completion.
func langSmithFinal(runs []*lsRun, lastLLM *lsRun) *string {
	for _, r := range runs {
		if set(r.get("parent_run_id")) {
			continue
		}
		out := r.get("outputs")
		if msgs := out.Get("messages"); isArr(msgs) && msgs.Len() > 0 {
			return langSmithMessageText(msgs.Index(msgs.Len() - 1))
		}
		for _, k := range [...]string{"output", "answer"} {
			if s, ok := out.Get(k).Str(); ok {
				return visible(s)
			}
		}
		break
	}
	if lastLLM == nil {
		return nil
	}
	out := lastLLM.get("outputs")
	if ch := out.Get("choices"); isArr(ch) && ch.Len() > 0 {
		return langSmithMessageText(ch.Index(0).Get("message"))
	}
	if gens := out.Get("generations"); isArr(gens) && gens.Len() > 0 {
		g := gens.Index(gens.Len() - 1)
		if isArr(g) && g.Len() > 0 {
			g = g.Index(0)
		}
		if msg := g.Get("message"); msg.Exists() {
			return langSmithMessageText(msg)
		}
		return visible(g.Get("text").Text())
	}
	return nil
}

// langSmithMessageText is an assistant message's visible text when it
// requests no tool call: OpenAI style ({role, content, tool_calls}),
// LangChain ({type: "ai", content, tool_calls}) or LangChain serialised
// ({lc: 1, kwargs: {...}}).
func langSmithMessageText(m jsondoc.Value) *string {
	if !isObj(m) {
		return nil
	}
	if kw := m.Get("kwargs"); isObj(kw) && m.Get("lc").Exists() {
		m = kw
	}
	if d := m.Get("data"); isObj(d) && m.Get("type").Exists() && !m.Get("content").Exists() {
		m = d
	}
	switch cmp.Or(m.Get("role").Text(), m.Get("type").Text()) {
	case "assistant", "ai", "AIMessage", "AIMessageChunk":
	default:
		return nil
	}
	if tc := m.Get("tool_calls"); isArr(tc) && tc.Len() > 0 {
		return nil
	}
	return visible(partsText(m.Get("content"), "text", "output_text"))
}

// langSmithError is a run's error text without the stack trace the
// LangChain tracers append after a blank line (JS: "message\n\nError:
// message\n    at ..."; Python: "...\n\nTraceback (most recent call
// last): ...").
func langSmithError(s string) string {
	head, rest, ok := strings.Cut(s, "\n\n")
	if ok && head != "" && (strings.Contains(rest, "\n    at ") || strings.HasPrefix(rest, "Traceback (most recent call last):")) {
		return head
	}
	return s
}

// langSmithLLMToolCalls counts the tool calls an llm run's completion
// requests (OpenAI choices, or LangChain generations).
func langSmithLLMToolCalls(r *lsRun) int {
	n := 0
	langSmithRequests(r, func(string, jsondoc.Value) { n++ })
	return n
}

// langSmithRequests calls f with the id and the function of every tool call
// an llm run's completion requests: OpenAI choices[0].message.tool_calls,
// or in LangChain generations the message's additional_kwargs.tool_calls
// (the provider's calls, with the argument text), else its tool_calls
// ({name, args, id}: f gets the call itself).
func langSmithRequests(r *lsRun, f func(id string, fn jsondoc.Value)) {
	out := r.get("outputs")
	var msgs []jsondoc.Value
	if ch := out.Get("choices"); isArr(ch) && ch.Len() > 0 {
		msgs = append(msgs, ch.Index(0).Get("message"))
	}
	for _, g := range out.Get("generations").Elems() {
		if isObj(g) {
			msgs = append(msgs, g.Get("message"))
		}
		for _, x := range g.Elems() { // [[generation, ...], ...]
			msgs = append(msgs, x.Get("message"))
		}
	}
	for _, m := range msgs {
		if kw := m.Get("kwargs"); isObj(kw) && m.Get("lc").Exists() {
			m = kw
		}
		if tc := m.Get("additional_kwargs").Get("tool_calls"); isArr(tc) && tc.Len() > 0 {
			for _, c := range tc.Elems() {
				f(idString(c.Get("id")), c.Get("function"))
			}
			continue
		}
		for _, c := range m.Get("tool_calls").Elems() {
			f(idString(c.Get("id")), c)
		}
	}
}

// langSmithRequestedArgs maps call ids to the argument text the model sent
// (the "arguments" text of the llm runs' requested calls).
func langSmithRequestedArgs(runs []*lsRun) map[string]string {
	out := map[string]string{}
	for _, r := range runs {
		if r.get("run_type").Text() != "llm" {
			continue
		}
		langSmithRequests(r, func(id string, fn jsondoc.Value) {
			if a := fn.Get("arguments"); id != "" && a.Kind() == jsondoc.String {
				out[id] = a.Text()
			}
		})
	}
	return out
}

// langChainToolMessage reports whether v is a LangChain ToolMessage, as a
// serialised constructor ({lc: 1, id: [..., "ToolMessage"], kwargs}) or a
// message dict ({type: "tool", content, tool_call_id}), and gives its
// fields.
func langChainToolMessage(v jsondoc.Value) (jsondoc.Value, bool) {
	if !isObj(v) {
		return jsondoc.Value{}, false
	}
	if kw := v.Get("kwargs"); isObj(kw) && v.Get("lc").Exists() {
		id := v.Get("id")
		if isArr(id) && id.Len() > 0 && id.Index(id.Len()-1).Text() == "ToolMessage" {
			return kw, true
		}
		return jsondoc.Value{}, false
	}
	if v.Get("type").Text() == "tool" && v.Get("content").Exists() && v.Get("tool_call_id").Exists() {
		return v, true
	}
	return jsondoc.Value{}, false
}
