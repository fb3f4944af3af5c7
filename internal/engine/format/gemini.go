package format

import (
	"slices"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// geminiAdapter reads Google Gemini traces: a GenerateContentResponse
// (candidates[0].content), a request or saved conversation with "contents"
// (plus the response's "candidates" when saved together), a list of Content
// objects, a single Content, or a single functionCall part. Both the REST
// spelling (functionCall) and the Python SDK's (function_call) are read.
// A response of the Google Gen AI SDKs' automatic function calling keeps
// the turns before its candidates in "automaticFunctionCallingHistory"
// (JS) or "automatic_function_calling_history" (Python): the request's
// contents, then each functionCall turn and its functionResponse turn.
// That history is read in place of "contents" (which it begins with),
// then the candidates.
//
// functionCall parts are calls (args an object); functionResponse parts are
// results, joined by id when the calls carry ids, else by name in order. A
// response holding an "error" key is an error result (the Gemini docs'
// convention: "output" for output, "error" for errors). The text parts of
// a model turn, without thought parts, make its visible text.
type geminiAdapter struct{}

func (geminiAdapter) Name() string { return "gemini" }

func isGeminiContent(m jsondoc.Value) bool { return isArr(m.Get("parts")) }

func isGeminiCallPart(m jsondoc.Value) bool {
	v, _ := first(m, "functionCall", "function_call")
	return isObj(v)
}

func (geminiAdapter) Detect(in *Input) (string, bool) {
	if m, ok := in.Object(); ok {
		switch {
		case set(m.Get("candidates")):
			if isArr(m.Get("candidates")) {
				if h, _ := afcHistory(m); isArr(h) {
					return "a Gemini GenerateContentResponse (candidates) with an automatic function calling history of " + plural(h.Len(), "Content object"), true
				}
				return "a Gemini GenerateContentResponse (candidates)", true
			}
		case set(m.Get("contents")):
			if c := m.Get("contents"); isArr(c) && allGeminiContents(elems(c)) {
				return `an object whose "contents" are ` + plural(c.Len(), "Gemini Content object"), true
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

func allGeminiContents(recs []jsondoc.Value) bool {
	if len(recs) == 0 {
		return false
	}
	for _, m := range recs {
		if !isObj(m) || !isGeminiContent(m) {
			return false
		}
	}
	return true
}

func (geminiAdapter) Parse(in *Input) (engine.Trace, error) {
	b := in.newBuilder()
	add := func(m jsondoc.Value) error {
		if !isObj(m) {
			return shapeErr("gemini", m, "a Content must be an object, not %s", aType(m))
		}
		return geminiContent(b, m, true)
	}
	v := in.Value()
	switch v.Kind() {
	case jsondoc.Object:
		switch {
		case set(v.Get("contents")) || set(v.Get("candidates")):
			list, name := v.Get("contents"), "contents"
			if h, k := afcHistory(v); k != "" {
				list, name = h, k
			}
			if list.Exists() {
				if !isArr(list) {
					return engine.Trace{}, shapeErr("gemini", list, "%s must be an array, not %s", name, aType(list))
				}
				for _, e := range list.Elems() {
					if err := add(e); err != nil {
						return engine.Trace{}, err
					}
				}
			}
			if c := v.Get("candidates"); c.Exists() {
				if !isArr(c) {
					return engine.Trace{}, shapeErr("gemini", c, "candidates must be an array, not %s", aType(c))
				}
				if cand := candidate0(v); cand.Exists() {
					if err := geminiContent(b, cand, false); err != nil {
						return engine.Trace{}, err
					}
				}
			}
		case isGeminiContent(v):
			if err := geminiContent(b, v, true); err != nil {
				return engine.Trace{}, err
			}
		case isGeminiCallPart(v):
			_, _, err := geminiParts("gemini", b, []jsondoc.Value{v}, "model")
			if err != nil {
				return engine.Trace{}, err
			}
		default:
			return engine.Trace{}, notFit("gemini", v, "expected a response with candidates, an object with contents, a Content or a functionCall part")
		}
	case jsondoc.Array:
		for _, e := range v.Elems() {
			if err := add(e); err != nil {
				return engine.Trace{}, err
			}
		}
	default:
		return engine.Trace{}, shapeErr("gemini", v, "expected a JSON object or array, not %s", aType(v))
	}
	return b.trace(), nil
}

// afcHistory returns the response's automatic function calling history and
// its key: the first of the two spellings that is set and not an empty
// array, or the zero Value and "".
func afcHistory(resp jsondoc.Value) (jsondoc.Value, string) {
	for _, k := range [...]string{"automaticFunctionCallingHistory", "automatic_function_calling_history"} {
		if h := resp.Get(k); set(h) && (!isArr(h) || h.Len() > 0) {
			return h, k
		}
	}
	return jsondoc.Value{}, ""
}

// candidate0 returns the content of the response's first candidate (index
// 0) when it is an object, or the zero Value.
func candidate0(resp jsondoc.Value) jsondoc.Value {
	for _, cm := range resp.Get("candidates").Elems() {
		if !isObj(cm) {
			continue
		}
		if idx := cm.Get("index"); idx.Exists() && idString(idx) != "0" {
			continue
		}
		if content := cm.Get("content"); isObj(content) {
			return content
		}
		return jsondoc.Value{}
	}
	return jsondoc.Value{}
}

// geminiContent reads a Content. It must have "parts", an array of
// objects, except a candidate's content (needParts false), which a blocked
// response may leave empty.
func geminiContent(b *builder, m jsondoc.Value, needParts bool) error {
	role := m.Get("role").Text()
	if role == "" {
		role = "model" // a candidate's content may leave the role out
	}
	parts := m.Get("parts")
	if !isArr(parts) {
		if set(parts) {
			return shapeErr("gemini", parts, "parts must be an array, not %s", aType(parts))
		}
		if needParts {
			return notFit("gemini", m, `not a Gemini Content: it has no "parts"`)
		}
	}
	for _, p := range parts.Elems() {
		if !isObj(p) {
			return shapeErr("gemini", p, "a part must be an object, not %s", aType(p))
		}
	}
	text, made, err := geminiParts("gemini", b, elems(parts), role)
	if err != nil {
		return err
	}
	if role == "model" {
		b.turn(text, made)
	}
	return nil
}

// geminiParts reads parts: calls, results and the visible text of a model
// turn. It returns the text and whether a call was made; a functionCall or
// functionResponse that is not an object, or its name or id of the wrong
// type, is a *ShapeError of format.
func geminiParts(format string, b *builder, parts []jsondoc.Value, role string) (string, bool, error) {
	var text strings.Builder
	made := false
	for _, pm := range parts {
		if !isObj(pm) {
			continue
		}
		if fm, key, ok := firstKey(pm, "functionCall", "function_call"); ok {
			name, id, err := geminiCallFields(format, key, fm)
			if err != nil {
				return "", false, err
			}
			c := engine.ToolCall{Tool: name, ID: id}
			b.setArgs(&c, fm.Get("args"))
			b.add(c)
			made = true
			continue
		}
		if fm, key, ok := firstKey(pm, "functionResponse", "function_response"); ok {
			name, id, err := geminiCallFields(format, key, fm)
			if err != nil {
				return "", false, err
			}
			if !b.anyID {
				id = "" // the calls carry no ids: join by name
			}
			resp := fm.Get("response")
			errText := ""
			if e := resp.Get("error"); set(e) {
				if errText = errorText(e); errText == "" {
					errText = "true"
				}
			}
			b.result(id, name, resp, errText)
			continue
		}
		if thought, _ := pm.Get("thought").Bool(); thought {
			continue
		}
		if s, ok := pm.Get("text").Str(); ok && role == "model" {
			text.WriteString(s)
		}
	}
	return text.String(), made, nil
}

// geminiCallFields reads the name and id of a functionCall or
// functionResponse fm (the part's member key); fm present but not an
// object, or a name or id of the wrong type, is a *ShapeError of format.
// A null fm reads as a call with no name, as before.
func geminiCallFields(format, key string, fm jsondoc.Value) (name, id string, err error) {
	if set(fm) && !isObj(fm) {
		return "", "", shapeErr(format, fm, "%s must be an object, not %s", key, aType(fm))
	}
	if name, err = str(format, "name", fm.Get("name")); err != nil {
		return "", "", err
	}
	id, err = idOf(format, "id", fm.Get("id"))
	return name, id, err
}

// geminiStreamAdapter reads a streamed Gemini response: a sequence of
// GenerateContentResponse chunks (the JSON array of streamGenerateContent,
// JSON Lines, or SSE with alt=sse). The parts of candidate 0 are gathered
// until a chunk carries a finishReason (or the responseId changes); each
// such run is one model turn, read as by the gemini adapter.
type geminiStreamAdapter struct{}

func (geminiStreamAdapter) Name() string { return "gemini-stream" }

func (geminiStreamAdapter) Detect(in *Input) (string, bool) {
	if in.Form == FormJSON && !isArr(in.Value()) {
		return "", false
	}
	recs := in.Records()
	seen := false
	for _, m := range recs {
		if !isObj(m) {
			return "", false
		}
		if isArr(m.Get("candidates")) {
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
	b := in.newBuilder()
	var parts []jsondoc.Value
	respID := ""
	open := false
	finish := func() error {
		// The turn is read as a candidate's Content: a part that is not
		// an object leaves it out.
		if open && !slices.ContainsFunc(parts, func(p jsondoc.Value) bool { return !isObj(p) }) {
			text, made, err := geminiParts("gemini-stream", b, parts, "model")
			if err != nil {
				return err
			}
			b.turn(text, made)
		}
		parts, open = nil, false
		return nil
	}
	for _, m := range in.Records() {
		if !isObj(m) {
			return engine.Trace{}, shapeErr("gemini-stream", m, "a chunk must be an object, not %s", aType(m))
		}
		if c := m.Get("candidates"); c.Exists() {
			if !isArr(c) {
				return engine.Trace{}, shapeErr("gemini-stream", c, "candidates must be an array, not %s", aType(c))
			}
		} else if _, ok := first(m, "usageMetadata", "usage_metadata", "promptFeedback", "prompt_feedback"); !ok {
			return engine.Trace{}, notFit("gemini-stream", m, `not a Gemini GenerateContentResponse chunk: it has no "candidates"`)
		}
		id, _ := first(m, "responseId", "response_id")
		if s := id.Text(); s != "" {
			if s != respID && respID != "" {
				if err := finish(); err != nil {
					return engine.Trace{}, err
				}
			}
			respID = s
		}
		for _, cm := range m.Get("candidates").Elems() {
			if !isObj(cm) {
				continue
			}
			if idx := cm.Get("index"); idx.Exists() && idString(idx) != "0" {
				continue
			}
			open = true
			cc := cm.Get("content")
			if set(cc) && !isObj(cc) {
				return engine.Trace{}, shapeErr("gemini-stream", cc, "content must be an object, not %s", aType(cc))
			}
			cp := cc.Get("parts")
			if set(cp) && !isArr(cp) {
				return engine.Trace{}, shapeErr("gemini-stream", cp, "parts must be an array, not %s", aType(cp))
			}
			parts = append(parts, elems(cp)...)
			if fr, _ := first(cm, "finishReason", "finish_reason"); set(fr) && !(fr.Kind() == jsondoc.String && fr.Text() == "") {
				if err := finish(); err != nil {
					return engine.Trace{}, err
				}
			}
		}
	}
	if err := finish(); err != nil {
		return engine.Trace{}, err
	}
	return b.trace(), nil
}
