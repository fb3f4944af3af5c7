package format

import (
	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
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

func isADKEvent(m jsondoc.Value) bool {
	if m.Get("author").Kind() != jsondoc.String {
		return false
	}
	if _, ok := first(m, "invocationId", "invocation_id"); ok {
		return true
	}
	return isObj(m.Get("actions"))
}

// adkEvents returns the events of a document, whether it is a session, and
// false when it is an object that is neither an event nor a session.
func adkEvents(in *Input) ([]jsondoc.Value, bool, bool) {
	if m, ok := in.Object(); ok && !isADKEvent(m) {
		evs := m.Get("events")
		if _, ok := first(m, "appName", "app_name", "userId", "user_id", "id"); !ok || !isArr(evs) {
			return nil, false, false
		}
		return elems(evs), true, true
	}
	return in.Records(), false, true
}

func (googleADKAdapter) Detect(in *Input) (string, bool) {
	evs, session, ok := adkEvents(in)
	if !ok || len(evs) == 0 {
		return "", false
	}
	for _, e := range evs {
		if !isADKEvent(e) {
			return "", false
		}
	}
	if session {
		return "a Google ADK session with " + plural(len(evs), "event"), true
	}
	return streamReason(in, len(evs), "Google ADK session event"), true
}

func (googleADKAdapter) Parse(in *Input) (engine.Trace, error) {
	evs, _, ok := adkEvents(in)
	if !ok {
		if m, isObject := in.Object(); isObject {
			if _, err := str("google-adk", "author", m.Get("author")); err != nil {
				return engine.Trace{}, err
			}
		}
		return engine.Trace{}, notFit("google-adk", in.Value(), `expected a list of ADK events or a session with "events"`)
	}
	b := in.newBuilder()
	for _, m := range evs {
		if !isObj(m) {
			return engine.Trace{}, shapeErr("google-adk", m, "an event must be an object, not %s", aType(m))
		}
		if !isADKEvent(m) {
			if _, err := str("google-adk", "author", m.Get("author")); err != nil {
				return engine.Trace{}, err
			}
			return engine.Trace{}, notFit("google-adk", m, `not a Google ADK event: it needs "author" and "invocationId" (or "actions")`)
		}
		if partial, _ := m.Get("partial").Bool(); partial {
			continue
		}
		cm := m.Get("content")
		if !set(cm) {
			continue
		}
		if !isObj(cm) {
			return engine.Trace{}, shapeErr("google-adk", cm, "content must be an object, not %s", aType(cm))
		}
		parts := cm.Get("parts")
		if set(parts) && !isArr(parts) {
			return engine.Trace{}, shapeErr("google-adk", parts, "parts must be an array, not %s", aType(parts))
		}
		for _, p := range parts.Elems() {
			if !isObj(p) {
				return engine.Trace{}, shapeErr("google-adk", p, "a part must be an object, not %s", aType(p))
			}
		}
		role := cm.Get("role").Text()
		if role == "" && m.Get("author").Text() != "user" {
			role = "model"
		}
		text, made, err := geminiParts("google-adk", b, elems(parts), role)
		if err != nil {
			return engine.Trace{}, err
		}
		if role == "model" {
			b.turn(text, made)
		}
	}
	return b.trace(), nil
}
