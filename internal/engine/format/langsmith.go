package format

import (
	"cmp"
	"slices"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
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
// outputs ({"output": x} gives x), and a run error makes an error. Tool
// runs carry no call id. The final answer is the root run's output: the
// last message of outputs.messages (OpenAI or LangChain style) or a string
// outputs.output / outputs.answer; else the last llm run's completion.
type langSmithAdapter struct{}

func (langSmithAdapter) Name() string { return "langsmith" }

func isLangSmithRun(m map[string]any) bool {
	if _, ok := m["run_type"].(string); !ok {
		return false
	}
	_, in := m["inputs"]
	_, kids := m["child_runs"]
	_, tr := m["trace_id"]
	return in || kids || tr
}

func isLangSmithBatch(m map[string]any) bool {
	post, p := m["post"].([]any)
	patch, q := m["patch"].([]any)
	if !p && !q {
		return false
	}
	for _, r := range append(slices.Clip(post), patch...) {
		rm, ok := r.(map[string]any)
		if !ok || rm["id"] == nil {
			return false
		}
	}
	return true
}

// langSmithDoc classifies a record: "run", "batch", "runs" ({"runs": [...]}) or "".
func langSmithDoc(m map[string]any) string {
	switch {
	case isLangSmithRun(m):
		return "run"
	case isLangSmithBatch(m):
		return "batch"
	}
	if runs, ok := m["runs"].([]any); ok && len(runs) > 0 {
		if rm, ok := runs[0].(map[string]any); ok && isLangSmithRun(rm) {
			return "runs"
		}
	}
	return ""
}

func (langSmithAdapter) Detect(in *Input) (string, bool) {
	recs := in.Records()
	if len(recs) == 0 {
		return "", false
	}
	kind := ""
	for _, r := range recs {
		m, ok := r.(map[string]any)
		if !ok {
			return "", false
		}
		k := langSmithDoc(m)
		if k == "" {
			return "", false
		}
		kind = k
	}
	runs, err := langSmithRuns(in)
	if err != nil {
		return "", false
	}
	tools, llmCalls := 0, 0
	for _, r := range runs {
		switch getStr(r, "run_type") {
		case "tool":
			tools++
		case "llm":
			llmCalls += len(langSmithLLMToolCalls(r))
		}
	}
	what := "a LangSmith run tree"
	switch {
	case kind == "batch":
		what = "LangSmith run batches (" + plural(len(recs), "/runs/batch request") + ")"
	case len(recs) > 1 || kind == "runs":
		what = "a LangSmith run list"
	}
	reason := what + " (" + plural(len(runs), "run") + ", " + plural(tools, "tool run") + ")"
	if tools == 0 && llmCalls > 0 {
		reason += "; its llm runs request " + plural(llmCalls, "tool call") + " but no tool run was recorded, so the trace has no calls"
	}
	return reason, true
}

// langSmithRuns flattens the document's runs: trees (child_runs), lists,
// {"runs": [...]} and batches (patches merged by id), in document order.
func langSmithRuns(in *Input) ([]map[string]any, error) {
	var out []map[string]any
	byID := map[string]int{}
	var walk func(v any, at []any) error
	put := func(m map[string]any, at []any, merge bool) error {
		id := idString(m["id"])
		if i, ok := byID[id]; ok && id != "" {
			if merge {
				merged := make(map[string]any, len(out[i])+len(m))
				for k, v := range out[i] {
					merged[k] = v
				}
				for k, v := range m {
					merged[k] = v
				}
				out[i] = merged
			}
			return nil
		}
		if !merge && !isLangSmithRun(m) {
			return notFit("langsmith", at, m, `not a LangSmith run: it needs "run_type" and "inputs", "child_runs" or "trace_id"`)
		}
		if id != "" {
			byID[id] = len(out)
		}
		out = append(out, m)
		return nil
	}
	walk = func(v any, at []any) error {
		m, ok := v.(map[string]any)
		if !ok {
			return shapeErr("langsmith", at, "a run must be an object, not %s", aType(v))
		}
		if err := put(m, at, false); err != nil {
			return err
		}
		kids, ok := m["child_runs"]
		if !ok || kids == nil {
			return nil
		}
		list, ok := kids.([]any)
		if !ok {
			return shapeErr("langsmith", append(slices.Clip(at), "child_runs"), "child_runs must be an array, not %s", aType(kids))
		}
		for j, k := range list {
			if err := walk(k, append(slices.Clip(at), "child_runs", j)); err != nil {
				return err
			}
		}
		return nil
	}
	for i, r := range in.Records() {
		m, ok := r.(map[string]any)
		if !ok {
			return nil, shapeErr("langsmith", []any{i}, "a record must be an object, not %s", aType(r))
		}
		switch langSmithDoc(m) {
		case "run":
			if err := walk(m, []any{i}); err != nil {
				return nil, err
			}
		case "runs":
			for j, rr := range getArr(m, "runs") {
				if err := walk(rr, []any{i, "runs", j}); err != nil {
					return nil, err
				}
			}
		case "batch":
			for j, rr := range getArr(m, "post") {
				if err := walk(rr, []any{i, "post", j}); err != nil {
					return nil, err
				}
			}
			for j, rr := range getArr(m, "patch") {
				pm, _ := rr.(map[string]any)
				if err := put(pm, []any{i, "patch", j}, true); err != nil {
					return nil, err
				}
			}
		default:
			return nil, notFit("langsmith", []any{i}, m, `not a LangSmith run, run list or /runs/batch request body`)
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
		if getStr(r, "dotted_order") == "" {
			allDotted = false
		}
	}
	slices.SortStableFunc(ordered, func(a, c map[string]any) int {
		if allDotted {
			return strings.Compare(getStr(a, "dotted_order"), getStr(c, "dotted_order"))
		}
		return strings.Compare(getStr(a, "start_time"), getStr(c, "start_time"))
	})
	b := newBuilder()
	var lastLLM map[string]any
	for _, r := range ordered {
		switch getStr(r, "run_type") {
		case "tool":
			c := engine.ToolCall{Tool: getStr(r, "name")}
			inputs := r["inputs"]
			if im, ok := inputs.(map[string]any); ok && len(im) == 1 {
				if s, ok := im["input"].(string); ok {
					inputs = s
				}
			}
			b.setArgs(&c, inputs)
			if out, ok := r["outputs"].(map[string]any); ok {
				if len(out) == 1 && out["output"] != nil {
					c.Result = out["output"]
				} else {
					c.Result = out
				}
			}
			if e := r["error"]; e != nil {
				if c.Error = engine.CallError(errorText(e)); c.Error == "" {
					c.Error = "true"
				}
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
func langSmithFinal(runs []map[string]any, lastLLM map[string]any) *string {
	for _, r := range runs {
		if r["parent_run_id"] != nil {
			continue
		}
		out := getObj(r, "outputs")
		if msgs, ok := out["messages"].([]any); ok && len(msgs) > 0 {
			return langSmithMessageText(msgs[len(msgs)-1])
		}
		for _, k := range [...]string{"output", "answer"} {
			if s, ok := out[k].(string); ok {
				return visible(s)
			}
		}
		break
	}
	if lastLLM == nil {
		return nil
	}
	out := getObj(lastLLM, "outputs")
	if ch, ok := out["choices"].([]any); ok && len(ch) > 0 {
		if cm, ok := ch[0].(map[string]any); ok {
			return langSmithMessageText(cm["message"])
		}
	}
	if gens, ok := out["generations"].([]any); ok && len(gens) > 0 {
		g := gens[len(gens)-1]
		if inner, ok := g.([]any); ok && len(inner) > 0 {
			g = inner[0]
		}
		if gm, ok := g.(map[string]any); ok {
			if msg, ok := gm["message"]; ok {
				return langSmithMessageText(msg)
			}
			return visible(getStr(gm, "text"))
		}
	}
	return nil
}

// langSmithMessageText is an assistant message's visible text when it
// requests no tool call: OpenAI style ({role, content, tool_calls}),
// LangChain ({type: "ai", content, tool_calls}) or LangChain serialised
// ({lc: 1, kwargs: {...}}).
func langSmithMessageText(v any) *string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	if kw, ok := m["kwargs"].(map[string]any); ok && m["lc"] != nil {
		m = kw
	}
	if d, ok := m["data"].(map[string]any); ok && m["type"] != nil && m["content"] == nil {
		m = d
	}
	role := cmp.Or(getStr(m, "role"), getStr(m, "type"))
	if role != "assistant" && role != "ai" && role != "AIMessage" && role != "AIMessageChunk" {
		return nil
	}
	if tc, ok := m["tool_calls"].([]any); ok && len(tc) > 0 {
		return nil
	}
	return visible(partsText(m["content"], "text", "output_text"))
}

// langSmithLLMToolCalls lists the tool calls an llm run's completion
// requests (OpenAI choices or LangChain generations).
func langSmithLLMToolCalls(r map[string]any) []any {
	out := getObj(r, "outputs")
	if ch, ok := out["choices"].([]any); ok && len(ch) > 0 {
		if cm, ok := ch[0].(map[string]any); ok {
			return getArr(getObj(cm, "message"), "tool_calls")
		}
	}
	return nil
}
