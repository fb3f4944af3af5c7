package format

import (
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
)

// geminiAdapter reads Google Gemini traces: a GenerateContentResponse
// (candidates[0].content), a request or saved conversation with "contents"
// (plus the response's "candidates" when saved together), a list of Content
// objects, a single Content, or a single functionCall part. Both the REST
// spelling (functionCall) and the Python SDK's (function_call) are read.
//
// functionCall parts are calls (args an object); functionResponse parts are
// results, joined by id when the calls carry ids, else by name in order. A
// response holding an "error" key is an error result (the Gemini docs'
// convention: "output" for output, "error" for errors). The text parts of
// a model turn, without thought parts, make its visible text.
type geminiAdapter struct{}

func (geminiAdapter) Name() string { return "gemini" }

func isGeminiContent(m map[string]any) bool {
	_, ok := m["parts"].([]any)
	return ok
}

func isGeminiCallPart(m map[string]any) bool {
	v, _ := first(m, "functionCall", "function_call")
	_, ok := v.(map[string]any)
	return ok
}

func (geminiAdapter) Detect(in *Input) (string, bool) {
	if m, ok := in.Value.(map[string]any); ok && in.Form == FormJSON {
		switch {
		case m["candidates"] != nil:
			if _, ok := m["candidates"].([]any); ok {
				return "a Gemini GenerateContentResponse (candidates)", true
			}
		case m["contents"] != nil:
			if c, ok := m["contents"].([]any); ok && allGeminiContents(c) {
				return `an object whose "contents" are ` + plural(len(c), "Gemini Content object"), true
			}
		case isGeminiContent(m):
			return "a single Gemini Content object (role, parts)", true
		case isGeminiCallPart(m):
			return "a single Gemini functionCall part", true
		}
		return "", false
	}
	recs := in.Records()
	if allGeminiContents(recs) {
		return "a list of " + plural(len(recs), "Gemini Content object") + " (role, parts)", true
	}
	return "", false
}

func allGeminiContents(recs []any) bool {
	if len(recs) == 0 {
		return false
	}
	for _, r := range recs {
		m, ok := r.(map[string]any)
		if !ok || !isGeminiContent(m) {
			return false
		}
	}
	return true
}

func (geminiAdapter) Parse(in *Input) (engine.Trace, error) {
	b := newBuilder()
	add := func(v any, l loc) error {
		m, ok := v.(map[string]any)
		if !ok {
			return shapeErr("gemini", l.tokens(), "a Content must be an object, not %s", aType(v))
		}
		return geminiContent(b, m, l, true)
	}
	switch v := in.Value.(type) {
	case map[string]any:
		switch {
		case v["contents"] != nil || v["candidates"] != nil:
			if c, ok := v["contents"]; ok {
				list, ok := c.([]any)
				if !ok {
					return engine.Trace{}, shapeErr("gemini", []any{"contents"}, "contents must be an array, not %s", aType(c))
				}
				for i, e := range list {
					if err := add(e, root("contents").elem(i)); err != nil {
						return engine.Trace{}, err
					}
				}
			}
			if c, ok := v["candidates"]; ok {
				if _, ok := c.([]any); !ok {
					return engine.Trace{}, shapeErr("gemini", []any{"candidates"}, "candidates must be an array, not %s", aType(c))
				}
				if cand := candidate0(v); cand != nil {
					if err := geminiContent(b, cand, root("candidates", 0, "content"), false); err != nil {
						return engine.Trace{}, err
					}
				}
			}
		case isGeminiContent(v):
			if err := geminiContent(b, v, root(), true); err != nil {
				return engine.Trace{}, err
			}
		case isGeminiCallPart(v):
			geminiParts(b, []any{v}, "model")
		default:
			return engine.Trace{}, notFit("gemini", nil, v, "expected a response with candidates, an object with contents, a Content or a functionCall part")
		}
	case []any:
		for i, e := range v {
			if err := add(e, root().elem(i)); err != nil {
				return engine.Trace{}, err
			}
		}
	default:
		return engine.Trace{}, shapeErr("gemini", nil, "expected a JSON object or array, not %s", aType(v))
	}
	return b.trace(), nil
}

// candidate0 returns the content of the response's first candidate (index
// 0), or nil.
func candidate0(resp map[string]any) map[string]any {
	for _, c := range getArr(resp, "candidates") {
		cm, ok := c.(map[string]any)
		if !ok {
			continue
		}
		if idx, ok := cm["index"]; ok && idString(idx) != "0" {
			continue
		}
		content, _ := cm["content"].(map[string]any)
		return content
	}
	return nil
}

// geminiContent reads a Content. It must have "parts", an array of
// objects, except a candidate's content (needParts false), which a blocked
// response may leave empty.
func geminiContent(b *builder, m map[string]any, l loc, needParts bool) error {
	role := getStr(m, "role")
	if role == "" {
		role = "model" // a candidate's content may leave the role out
	}
	parts, ok := m["parts"].([]any)
	if !ok {
		if m["parts"] != nil {
			return shapeErr("gemini", l.tokens("parts"), "parts must be an array, not %s", aType(m["parts"]))
		}
		if needParts {
			return notFit("gemini", l.tokens(), m, `not a Gemini Content: it has no "parts"`)
		}
	}
	for j, p := range parts {
		if _, ok := p.(map[string]any); !ok {
			return shapeErr("gemini", l.tokens("parts", j), "a part must be an object, not %s", aType(p))
		}
	}
	text, made := geminiParts(b, parts, role)
	if role == "model" {
		b.turn(text, made)
	}
	return nil
}

// geminiParts reads parts: calls, results and the visible text of a model
// turn. It returns the text and whether a call was made.
func geminiParts(b *builder, parts []any, role string) (string, bool) {
	var text strings.Builder
	made := false
	for _, p := range parts {
		pm, ok := p.(map[string]any)
		if !ok {
			continue
		}
		if fc, ok := first(pm, "functionCall", "function_call"); ok {
			fm, _ := fc.(map[string]any)
			c := engine.ToolCall{Tool: getStr(fm, "name"), ID: idString(fm["id"])}
			b.setArgs(&c, fm["args"])
			b.add(c)
			made = true
			continue
		}
		if fr, ok := first(pm, "functionResponse", "function_response"); ok {
			fm, _ := fr.(map[string]any)
			id := idString(fm["id"])
			if !b.anyID {
				id = "" // the calls carry no ids: join by name
			}
			resp := fm["response"]
			errText := ""
			if rm, ok := resp.(map[string]any); ok {
				if e, ok := rm["error"]; ok && e != nil {
					if errText = errorText(e); errText == "" {
						errText = "true"
					}
				}
			}
			b.result(id, getStr(fm, "name"), resp, errText)
			continue
		}
		if thought, _ := pm["thought"].(bool); thought {
			continue
		}
		if s, ok := pm["text"].(string); ok && role == "model" {
			text.WriteString(s)
		}
	}
	return text.String(), made
}

// geminiStreamAdapter reads a streamed Gemini response: a sequence of
// GenerateContentResponse chunks (the JSON array of streamGenerateContent,
// JSON Lines, or SSE with alt=sse). The parts of candidate 0 are gathered
// until a chunk carries a finishReason (or the responseId changes); each
// such run is one model turn, read as by the gemini adapter.
type geminiStreamAdapter struct{}

func (geminiStreamAdapter) Name() string { return "gemini-stream" }

func (geminiStreamAdapter) Detect(in *Input) (string, bool) {
	if in.Form == FormJSON {
		if _, ok := in.Value.([]any); !ok {
			return "", false
		}
	}
	recs := in.Records()
	seen := false
	for _, r := range recs {
		m, ok := r.(map[string]any)
		if !ok {
			return "", false
		}
		if _, ok := m["candidates"].([]any); ok {
			seen = true
		} else if _, ok := first(m, "usageMetadata", "usage_metadata", "promptFeedback", "prompt_feedback"); !ok {
			return "", false
		}
	}
	if !seen {
		return "", false
	}
	return streamReason(in, len(recs), "Gemini GenerateContentResponse chunk"), true
}

func (geminiStreamAdapter) Parse(in *Input) (engine.Trace, error) {
	b := newBuilder()
	var parts []any
	respID := ""
	open := false
	finish := func() {
		if open {
			geminiContent(b, map[string]any{"role": "model", "parts": parts}, root(), false)
		}
		parts, open = nil, false
	}
	for i, r := range in.Records() {
		m, ok := r.(map[string]any)
		if !ok {
			return engine.Trace{}, shapeErr("gemini-stream", []any{i}, "a chunk must be an object, not %s", aType(r))
		}
		if c, ok := m["candidates"]; ok {
			if _, ok := c.([]any); !ok {
				return engine.Trace{}, shapeErr("gemini-stream", []any{i, "candidates"}, "candidates must be an array, not %s", aType(c))
			}
		} else if _, ok := first(m, "usageMetadata", "usage_metadata", "promptFeedback", "prompt_feedback"); !ok {
			return engine.Trace{}, notFit("gemini-stream", []any{i}, m, `not a Gemini GenerateContentResponse chunk: it has no "candidates"`)
		}
		id, _ := first(m, "responseId", "response_id")
		if s, _ := id.(string); s != "" {
			if s != respID && respID != "" {
				finish()
			}
			respID = s
		}
		for _, c := range getArr(m, "candidates") {
			cm, ok := c.(map[string]any)
			if !ok {
				continue
			}
			if idx, ok := cm["index"]; ok && idString(idx) != "0" {
				continue
			}
			open = true
			content, _ := cm["content"].(map[string]any)
			parts = append(parts, getArr(content, "parts")...)
			if fr, _ := first(cm, "finishReason", "finish_reason"); fr != nil && fr != "" {
				finish()
			}
		}
	}
	finish()
	return b.trace(), nil
}
