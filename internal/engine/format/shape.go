package format

import "github.com/toolscore/toolscore/internal/jsondoc"

// Detection asks the adapters in order, and most of them fail on most
// documents, often only after looking at every record (a list of 25
// OpenAI messages is not a LangChain list, but only its last message can
// say so). A built-in adapter therefore also says which documents it
// cannot detect, from a summary of the document's records read once (the
// keys each has and the kinds of their values: a shape): Registry.parse
// skips the adapter's Detect when the shape rules it out. Each screen is
// a necessary condition of its Detect, so the first adapter that detects
// the document is the same as when every Detect runs (FuzzScreen compares
// the two).

// keySet is a set of the member names detectors look for (the k*
// constants), as bits.
type keySet uint64

// The member names screens look for.
const (
	kType keySet = 1 << iota
	kRole
	kKind
	kData
	kObject
	kOutput
	kInput
	kMessages
	kFinishReason
	kToolCalls
	kParts
	kContent
	kSchemaVersion
	kRunType
	kPost
	kPatch
	kRuns
	kMessage
	kAuthor
	kEvents
	kJSONRPC
	kResourceSpans
	kSpanID
	kContext
	kChoices
	kCandidates
	kContents
	kFunctionCall
	kFunctionCallSnake
	kFunction
)

// keyBit returns the bit of a member name screens look for, 0 for any
// other.
func keyBit(k string) keySet {
	switch k {
	case "type":
		return kType
	case "role":
		return kRole
	case "kind":
		return kKind
	case "data":
		return kData
	case "object":
		return kObject
	case "output":
		return kOutput
	case "input":
		return kInput
	case "messages":
		return kMessages
	case "finishReason":
		return kFinishReason
	case "toolCalls":
		return kToolCalls
	case "parts":
		return kParts
	case "content":
		return kContent
	case "$schemaVersion":
		return kSchemaVersion
	case "run_type":
		return kRunType
	case "post":
		return kPost
	case "patch":
		return kPatch
	case "runs":
		return kRuns
	case "message":
		return kMessage
	case "author":
		return kAuthor
	case "events":
		return kEvents
	case "jsonrpc":
		return kJSONRPC
	case "resourceSpans":
		return kResourceSpans
	case "spanId":
		return kSpanID
	case "context":
		return kContext
	case "choices":
		return kChoices
	case "candidates":
		return kCandidates
	case "contents":
		return kContents
	case "functionCall":
		return kFunctionCall
	case "function_call":
		return kFunctionCallSnake
	case "function":
		return kFunction
	}
	return 0
}

// shape summarises a document's records (Input.Records; for a FormJSON
// object, the object itself) for the screens.
type shape struct {
	// root reports that the document is one JSON object (Input.Object).
	root bool
	// objs reports that there is at least one record and every record is
	// an object.
	objs bool
	// any holds the keys some record has; all the keys every record has
	// (nothing when a record is not an object or there are none); arr
	// the keys whose value is an array in some record.
	any, all, arr keySet
	// update reports that some record could be a LangGraph updates chunk
	// (lcUpdate): an array, or an object with a member that is an object
	// and none that is a string, number or boolean.
	update bool
}

// readShape reads the shape of in's records: each record's members once.
func (in *Input) readShape() shape {
	_, root := in.Object()
	s := shape{root: root, objs: len(in.recs) > 0, all: ^keySet(0)}
	for _, r := range in.recs {
		switch r.Kind() {
		case jsondoc.Object:
		case jsondoc.Array:
			s.update = true
			s.objs = false
			s.all = 0
			continue
		default:
			s.objs = false
			s.all = 0
			continue
		}
		var keys keySet
		objVal, scalar := false, false
		for k, v := range r.Members() {
			b := keyBit(k)
			keys |= b
			switch v.Kind() {
			case jsondoc.Array:
				s.arr |= b
			case jsondoc.Object:
				objVal = true
			case jsondoc.String, jsondoc.Number, jsondoc.Bool:
				scalar = true
			}
		}
		s.any |= keys
		s.all &= keys
		if objVal && !scalar {
			s.update = true
		}
	}
	if len(in.recs) == 0 {
		s.all = 0
	}
	return s
}

// has reports whether some record has one of the keys.
func (s *shape) has(keys keySet) bool { return s.any&keys != 0 }

// every reports whether every record has all of the keys.
func (s *shape) every(keys keySet) bool { return s.all&keys == keys }

// screener is a built-in adapter whose Detect can be ruled out from the
// document's shape.
type screener interface {
	// mayDetect reports false only when Detect fails on every document
	// of shape s.
	mayDetect(s *shape) bool
}

// The screens of the built-in adapters. Each names, in its comment, what
// its Detect needs that the screen checks. plainAdapter has none: it is
// asked first, and its Detect fails on the first record that is not a
// call.

// Pydantic AI: a message has "kind"; a list inside an object is under
// "messages".
func (pydanticAIAdapter) mayDetect(s *shape) bool {
	if s.root {
		return s.has(kKind | kMessages)
	}
	return s.has(kKind)
}

// AI SDK: steps have "finishReason" or "toolCalls"; a UI stream's chunks
// "type"; UIMessages "parts"; ModelMessages with tool parts an array
// "content"; a message list inside an object is under "messages".
func (aiSDKAdapter) mayDetect(s *shape) bool {
	if s.root {
		return s.has(kFinishReason | kToolCalls | kMessages)
	}
	return s.has(kFinishReason|kToolCalls|kType|kParts) || s.arr&kContent != 0
}

// OpenAI Agents: a run state has "$schemaVersion", an export "data" or
// "object", stream events and items "type".
func (openAIAgentsAdapter) mayDetect(s *shape) bool {
	return s.has(kSchemaVersion | kType | kData | kObject)
}

// LangSmith: a run has "run_type", a batch "post" or "patch", a run list
// "runs".
func (langSmithAdapter) mayDetect(s *shape) bool {
	return s.has(kRunType | kPost | kPatch | kRuns)
}

// MCP message log: every record has "message".
func (mcpLogAdapter) mayDetect(s *shape) bool { return s.every(kMessage) }

// Google ADK: an event has "author"; a session "events".
func (googleADKAdapter) mayDetect(s *shape) bool {
	if s.root {
		return s.has(kAuthor | kEvents)
	}
	return s.every(kAuthor)
}

// MCP: every message has "jsonrpc" (records that are arrays are batches,
// not screened).
func (mcpAdapter) mayDetect(s *shape) bool { return !s.objs || s.every(kJSONRPC) }

// OpenTelemetry: an export has "resourceSpans", a span "spanId", a span
// as Python prints it "context".
func (otelAdapter) mayDetect(s *shape) bool {
	return s.has(kResourceSpans | kSpanID | kContext)
}

// OpenAI Chat stream: a chunk has "object" or "choices".
func (openAIStreamAdapter) mayDetect(s *shape) bool { return s.has(kObject | kChoices) }

// OpenAI Responses stream: every event has "type".
func (responsesStreamAdapter) mayDetect(s *shape) bool { return s.every(kType) }

// Anthropic stream: every event has "type".
func (anthropicStreamAdapter) mayDetect(s *shape) bool { return s.every(kType) }

// Gemini stream: some chunk has "candidates".
func (geminiStreamAdapter) mayDetect(s *shape) bool { return s.has(kCandidates) }

// LangChain: a message or a tool call has "type", a state "messages"; an
// updates chunk is an update-like record.
func (langchainAdapter) mayDetect(s *shape) bool {
	return s.has(kType|kMessages) || s.update
}

// Gemini: a response has "candidates", a request "contents", a Content
// "parts", a call part "functionCall" or "function_call".
func (geminiAdapter) mayDetect(s *shape) bool {
	if s.root {
		return s.has(kCandidates | kContents | kParts | kFunctionCall | kFunctionCallSnake)
	}
	return s.every(kParts)
}

// OpenAI Responses: an item has "type", a response "object" or "output",
// a request "input".
func (responsesAdapter) mayDetect(s *shape) bool {
	return s.has(kType | kObject | kOutput | kInput)
}

// Anthropic: a message is marked by "type" or blocks in an array
// "content"; a list inside an object is under "messages".
func (anthropicAdapter) mayDetect(s *shape) bool {
	return s.has(kType|kMessages) || s.arr&kContent != 0
}

// OpenAI Chat: a message has "role", a completion "object" or "choices";
// an object holds "messages", a tool call "function" or "type".
func (openAIAdapter) mayDetect(s *shape) bool {
	return s.has(kRole | kObject | kChoices | kMessages | kFunction | kType)
}
