package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// The evaluation request is read once: jsondoc reads the body (or one
// batch item) into a tape, readRequest takes the typed members from it,
// and the contract, gold list, trace and forbidden rules stay values of
// that tape, which the engine and the trace adapters read as they are
// (engine.ParseContractValue, engine.ParseForbiddenValue,
// format.ParseValue). Nothing else decodes the request.

// parseRequest reads one request document with jsondoc.
//
// Errors: 400 invalid-json located by line, column and byte for bad JSON;
// 422 (invalid-contract inside contract or gold, invalid-trace inside
// trace, invalid-request elsewhere) at the value's pointer for JSON that
// is valid but outside jsondoc's limits (a numeric literal longer than
// jsondoc.MaxNumberLen bytes, nesting deeper than jsondoc.MaxDepth).
func parseRequest(data []byte) (jsondoc.Value, error) {
	return parseRequestText(data, string(data))
}

// parseOwnedRequest is parseRequest on a body that nothing writes to
// again (readBody's): the document reads the body's memory instead of a
// copy of it.
func parseOwnedRequest(body []byte) (jsondoc.Value, error) {
	return parseRequestText(body, unsafe.String(unsafe.SliceData(body), len(body)))
}

// parseBody is parseOwnedRequest on a request body that may hold an
// inline contract or gold list the contract cache already has: that
// value is not read again. Where the cache has the text that follows
// the body's first "contract" (or "gold") key, parseBody reads the body
// with that value's inside blanked out (an empty object or array of the
// same length, so every other value keeps its offsets), then puts the
// text back, and keeps the document when its contract (or gold) member
// is that value. The document's member is then an empty object or array
// whose text (Value.Raw, evaluationRequest.Contract) is the contract; the
// parsed contract comes from the cache (contractCache.parseInline). In
// every other case, and for every error, it is parseOwnedRequest's
// document and error.
func (cc *contractCache) parseBody(body []byte) (jsondoc.Value, error) {
	for _, key := range [...]string{"contract", "gold"} {
		i := memberValueAt(body, key)
		if i < 0 {
			continue
		}
		raw, ok := cc.inlineAt(body, i)
		if !ok {
			continue
		}
		n := len(raw)
		inner := body[i+1 : i+n-1]
		for b := inner; len(b) > 0; {
			b = b[copy(b, spaces[:]):]
		}
		doc, err := parseOwnedRequest(body)
		copy(inner, raw[1:n-1])
		if err == nil {
			if m := doc.Get(key); m.Offset() == i && len(m.Raw()) == n {
				return doc, nil
			}
		}
		break
	}
	return parseOwnedRequest(body)
}

// spaces is white space to blank out text with.
var spaces = func() (b [256]byte) {
	for i := range b {
		b[i] = ' '
	}
	return b
}()

// memberValueAt returns the offset of the value that follows the first
// `"key"` and a colon in body (white space allowed between them), or -1.
// It does not check that this is a member of the top-level object.
func memberValueAt(body []byte, key string) int {
	var pat [16]byte
	if len(key)+2 > len(pat) {
		return -1
	}
	p := append(append(append(pat[:0], '"'), key...), '"')
	k := bytes.Index(body, p)
	if k < 0 {
		return -1
	}
	i := k + len(p)
	for i < len(body) && isSpace(body[i]) {
		i++
	}
	if i >= len(body) || body[i] != ':' {
		return -1
	}
	i++
	for i < len(body) && isSpace(body[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// parseRequestText is parseRequest of data, whose text is s.
func parseRequestText(data []byte, s string) (jsondoc.Value, error) {
	v, err := jsondoc.ParseString(s)
	if err == nil {
		return v, nil
	}
	se, ok := err.(*jsondoc.SyntaxError)
	if !ok {
		return jsondoc.Value{}, err
	}
	if withinLimits(data, err) {
		kind := probInvalidRequest
		switch top, _, _ := strings.Cut(strings.TrimPrefix(se.Pointer, "/"), "/"); top {
		case "contract", "gold":
			kind = probInvalidContract
		case "trace":
			kind = probInvalidTrace
		}
		return jsondoc.Value{}, &apiError{kind: kind, detail: ptrOrRoot(se.Pointer) + ": " + se.Msg,
			errors: []FieldProblem{{Pointer: se.Pointer, Message: se.Msg}}, cause: err}
	}
	msg := se.Msg
	if strings.HasSuffix(msg, "after top-level value") {
		msg = "unexpected data after the JSON document"
	}
	located := &engine.SyntaxError{Offset: se.Offset, Line: se.Line, Column: se.Column, Pointer: se.Pointer, Msg: msg}
	return jsondoc.Value{}, &apiError{kind: probInvalidJSON, detail: syntaxDetail(located), syntax: located, cause: err}
}

// readRequest fills req from the request object v as encoding/json would
// decode it into evaluationRequest with unknown fields refused (but exact
// member names; null leaves a member's zero value), reporting the first
// problem in document order as decodeStrict does, then, as decodeStrict
// does too, a member given twice (one look at v's node when there is
// none). The contract, gold, trace and forbidden members are kept as
// values.
//
// Errors: 422 invalid-request at the member's pointer: "unknown field",
// "must be a string, got number", "repeated key ..." (repeatedMembersError)
// and the like.
func readRequest(v jsondoc.Value, req *evaluationRequest) error {
	switch v.Kind() {
	case jsondoc.Null:
		return nil
	case jsondoc.Object:
	default:
		return typeProblem("", "an object", v)
	}
	for key, m := range v.Members() {
		ptr := "/" + escapePointer(key)
		var err error
		switch key {
		case "contract":
			req.contract, req.Contract = m, rawOf(m)
		case "gold":
			req.gold, req.Gold = m, rawOf(m)
		case "trace":
			req.trace, req.Trace = m, rawOf(m)
		case "forbidden":
			req.forbidden, req.Forbidden = m, rawOf(m)
		case "format":
			err = readString(ptr, m, &req.Format)
		case "task_id":
			err = readString(ptr, m, &req.TaskID)
		case "run_id":
			err = readString(ptr, m, &req.RunID)
		case "agent":
			err = readString(ptr, m, &req.Agent)
		case "final_answer":
			if m.IsNull() {
				req.FinalAnswer = nil
				break
			}
			var s string
			if err = readString(ptr, m, &s); err == nil {
				req.FinalAnswer = &s
			}
		case "strict":
			err = readBool(ptr, m, &req.Strict)
		case "safety_gate":
			if m.IsNull() {
				req.SafetyGate = nil
				break
			}
			var b bool
			if err = readBool(ptr, m, &b); err == nil {
				req.SafetyGate = &b
			}
		case "labels":
			err = readLabels(ptr, m, &req.Labels)
		case "weights":
			err = readWeights(ptr, m, &req.Weights)
		case "min_score":
			if m.IsNull() {
				req.MinScore = nil
				break
			}
			var f float64
			if err = readNumber(ptr, m, &f); err == nil {
				req.MinScore = &f
			}
		default:
			return &apiError{kind: probInvalidRequest, detail: fmt.Sprintf("unknown field %q", key),
				errors: []FieldProblem{{Pointer: ptr, Message: "unknown field"}}}
		}
		if err != nil {
			return err
		}
	}
	if v.RepeatsKey() {
		return repeatedMembers(v)
	}
	return nil
}

// rawOf returns v's source text as bytes, sharing the document's memory
// (never written to; the document lives as long as the request).
func rawOf(v jsondoc.Value) json.RawMessage {
	s := v.Raw()
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// typeProblem is decodeStrict's 422 for a value of the wrong JSON type:
// "must be <want>, got <kind>" (encoding/json's names of the kinds).
func typeProblem(ptr, want string, v jsondoc.Value) error {
	got := v.Kind().String()
	if got == "boolean" {
		got = "bool"
	}
	msg := "must be " + want + ", got " + got
	return &apiError{kind: probInvalidRequest, detail: ptrOrRoot(ptr) + ": " + msg, errors: []FieldProblem{{Pointer: ptr, Message: msg}}}
}

func readString(ptr string, v jsondoc.Value, dst *string) error {
	switch v.Kind() {
	case jsondoc.Null:
		return nil
	case jsondoc.String:
		*dst = v.Text()
		return nil
	}
	return typeProblem(ptr, "a string", v)
}

func readBool(ptr string, v jsondoc.Value, dst *bool) error {
	switch v.Kind() {
	case jsondoc.Null:
		return nil
	case jsondoc.Bool:
		*dst, _ = v.Bool()
		return nil
	}
	return typeProblem(ptr, "a boolean", v)
}

// readNumber reads a float64 as encoding/json does: a literal outside its
// range is refused.
func readNumber(ptr string, v jsondoc.Value, dst *float64) error {
	switch v.Kind() {
	case jsondoc.Null:
		return nil
	case jsondoc.Number:
		lit, _ := v.Num()
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil {
			msg := outOfRange(lit)
			return &apiError{kind: probInvalidRequest, detail: ptrOrRoot(ptr) + ": " + msg, errors: []FieldProblem{{Pointer: ptr, Message: msg}}}
		}
		*dst = f
		return nil
	}
	return typeProblem(ptr, "a number", v)
}

func readLabels(ptr string, v jsondoc.Value, dst *map[string]string) error {
	switch v.Kind() {
	case jsondoc.Null:
		*dst = nil
		return nil
	case jsondoc.Object:
	default:
		return typeProblem(ptr, "an object", v)
	}
	if *dst == nil {
		*dst = make(map[string]string, v.Len())
	}
	for k, e := range v.Members() {
		var s string
		if err := readString(ptr+"/"+escapePointer(k), e, &s); err != nil {
			return err
		}
		(*dst)[k] = s
	}
	return nil
}

func readWeights(ptr string, v jsondoc.Value, dst *map[string]float64) error {
	switch v.Kind() {
	case jsondoc.Null:
		*dst = nil
		return nil
	case jsondoc.Object:
	default:
		return typeProblem(ptr, "an object", v)
	}
	if *dst == nil {
		*dst = make(map[string]float64, v.Len())
	}
	for k, e := range v.Members() {
		var f float64
		if err := readNumber(ptr+"/"+escapePointer(k), e, &f); err != nil {
			return err
		}
		(*dst)[k] = f
	}
	return nil
}
