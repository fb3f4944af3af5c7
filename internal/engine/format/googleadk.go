package format

import (
	"github.com/toolscore/toolscore/internal/engine"
)

// googleADKAdapter reads Google Agent Development Kit session events
// (TypeScript @google/adk and Python google-adk): a list of events (a JSON
// array, or JSON Lines as event.model_dump_json() writes them), or a
// session {"id", "appName" | "app_name", "events": [...]} as the session
// service and the ADK API server return it. Both spellings are read:
// camelCase (TypeScript, the API server) and snake_case (Python's
// model_dump).
//
// An event is {author, content: {role, parts}, actions, ...}; its parts are
// read as Gemini parts: functionCall / function_call parts are calls (id,
// name, args), functionResponse / function_response parts their results,
// joined by id (ADK gives every call one), a response holding an "error"
// key is an error. Partial (streaming) events are skipped, as ADK does not
// keep them in the session. The final answer is the text of the last model
// event when it made no call.
type googleADKAdapter struct{}

func (googleADKAdapter) Name() string { return "google-adk" }

func isADKEvent(m map[string]any) bool {
	if _, ok := m["author"].(string); !ok {
		return false
	}
	if _, ok := first(m, "invocationId", "invocation_id"); ok {
		return true
	}
	_, ok := m["actions"].(map[string]any)
	return ok
}

// adkEvents returns the events of a document and where they are.
func adkEvents(in *Input) ([]any, loc, bool) {
	if m, ok := in.Value.(map[string]any); ok && in.Form == FormJSON && !isADKEvent(m) {
		evs, ok := m["events"].([]any)
		if !ok {
			return nil, root(), false
		}
		if _, ok := first(m, "appName", "app_name", "userId", "user_id", "id"); !ok {
			return nil, root(), false
		}
		return evs, root("events"), true
	}
	return in.Records(), root(), true
}

func (googleADKAdapter) Detect(in *Input) (string, bool) {
	evs, _, ok := adkEvents(in)
	if !ok || len(evs) == 0 {
		return "", false
	}
	for _, e := range evs {
		m, ok := e.(map[string]any)
		if !ok || !isADKEvent(m) {
			return "", false
		}
	}
	if _, isSession := in.Value.(map[string]any); isSession && in.Form == FormJSON && len(evs) > 0 {
		if _, one := evs[0].(map[string]any); one && in.Value.(map[string]any)["events"] != nil {
			return "a Google ADK session with " + plural(len(evs), "event"), true
		}
	}
	return streamReason(in, len(evs), "Google ADK session event"), true
}

func (googleADKAdapter) Parse(in *Input) (engine.Trace, error) {
	evs, l, ok := adkEvents(in)
	if !ok {
		return engine.Trace{}, notFit("google-adk", nil, in.Value, `expected a list of ADK events or a session with "events"`)
	}
	b := newBuilder()
	for i, e := range evs {
		at := l.elem(i)
		m, ok := e.(map[string]any)
		if !ok {
			return engine.Trace{}, shapeErr("google-adk", at.tokens(), "an event must be an object, not %s", aType(e))
		}
		if !isADKEvent(m) {
			return engine.Trace{}, notFit("google-adk", at.tokens(), m, `not a Google ADK event: it needs "author" and "invocationId" (or "actions")`)
		}
		if partial, _ := m["partial"].(bool); partial {
			continue
		}
		c, ok := m["content"]
		if !ok || c == nil {
			continue
		}
		cm, ok := c.(map[string]any)
		if !ok {
			return engine.Trace{}, shapeErr("google-adk", at.tokens("content"), "content must be an object, not %s", aType(c))
		}
		if cm["role"] == nil && getStr(m, "author") != "user" {
			cm = map[string]any{"role": "model", "parts": cm["parts"]}
		}
		if err := geminiContent(b, cm, root(append(at.tokens(), "content")...), false); err != nil {
			if se, ok := err.(*ShapeError); ok {
				se.Format = "google-adk"
			}
			return engine.Trace{}, err
		}
	}
	return b.trace(), nil
}
