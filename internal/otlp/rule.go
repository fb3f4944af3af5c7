package otlp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// Rule is a parsed grading rule: which traces it matches and how they are
// graded. A rule is one version of a named rule in the registry; the
// latest version of each name is in force.
//
// The JSON document (docs/otel.md, "Grading rules"):
//
//	{
//	  "description": "the travel agent, graded against its contract",
//	  "priority": 10,
//	  "enabled": true,
//	  "match": [
//	    {"attribute": "service.name", "equals": "travel-agent", "in": "resource"},
//	    {"attribute": "gen_ai.agent.name", "regex": "^travel"},
//	    {"attribute": "toolscore.contract", "exists": true}
//	  ],
//	  "contract": "flights@2",
//	  "contract_attribute": "toolscore.contract",
//	  "options": {"strict": false, "min_score": 0.8},
//	  "task_id": "toolscore.task_id",
//	  "run_id": "session.id",
//	  "agent": "gen_ai.agent.name",
//	  "labels": {"env": "deployment.environment.name"},
//	  "grade_without_tool_calls": false
//	}
type Rule struct {
	// Description is free text.
	Description string
	// Priority orders the rules in force: the lowest first, ties by name;
	// default 100.
	Priority int
	// Enabled is false for a rule that matches nothing (a way to retire a
	// name); default true.
	Enabled bool
	// Match lists the conditions; a trace matches when every one holds.
	// An empty list matches every trace.
	Match []Condition
	// Contract is the registry reference ("name", "name@latest" or
	// "name@N") to grade with; "" when only ContractAttribute gives it.
	Contract string
	// ContractAttribute names an attribute whose value is the registry
	// reference (such as toolscore.contract, which an agent may set); when
	// the trace has none, Contract is used, and when that is "" too the
	// rule does not match.
	ContractAttribute string
	// Options are the evaluation options, as the members of the body of
	// POST /v1/evaluations (strict, safety_gate, forbidden, weights,
	// min_score, format), as a JSON object; nil for none.
	Options json.RawMessage
	// TaskID, RunID and Agent name the attributes whose values become the
	// result's task_id, run_id and agent ("" for none).
	TaskID, RunID, Agent string
	// Labels maps a label key to the attribute whose value it takes.
	Labels map[string]string
	// GradeWithoutToolCalls grades a matched trace in which the trace
	// formats find no tool call as a 0-call trace; when false such a trace
	// is counted as unmatched (state no_tool_calls).
	GradeWithoutToolCalls bool
}

// Condition is one test on the attributes of a trace: it holds when some
// resource or span (as In says) has Attribute with a value that Equals
// the given text, matches Regex, or, for Exists, is present at all (with
// Exists false: absent everywhere).
type Condition struct {
	Attribute string
	// In is "resource", "span" or "any" (the default).
	In     string
	Equals *string
	Regex  *regexp.Regexp
	Exists *bool

	regexInst int // engine.RegexInstructions(Regex), set by ParseRule
}

// Option names a rule may set: the evaluation options of POST
// /v1/evaluations.
var optionNames = []string{"strict", "safety_gate", "forbidden", "weights", "min_score", "format"}

// The limits of a rule document.
const (
	maxConditions = 32
	maxRuleLabels = 32
	maxAttrName   = 256
)

// refPattern is the syntax of a registry contract reference.
var refPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}(@(latest|[1-9][0-9]{0,8}))?$`)

// labelKeyPattern is what a label key set by a rule must match (the API's
// label key rule: 1 to 64 bytes without '=' or NUL).
func badLabelKey(k string) bool {
	return k == "" || len(k) > 64 || strings.ContainsAny(k, "=\x00") || !utf8.ValidString(k)
}

// ruleDoc is the JSON form of a rule.
type ruleDoc struct {
	Description           string            `json:"description"`
	Priority              *int              `json:"priority"`
	Enabled               *bool             `json:"enabled"`
	Match                 []conditionDoc    `json:"match"`
	Contract              string            `json:"contract"`
	ContractAttribute     string            `json:"contract_attribute"`
	Options               json.RawMessage   `json:"options"`
	TaskID                string            `json:"task_id"`
	RunID                 string            `json:"run_id"`
	Agent                 string            `json:"agent"`
	Labels                map[string]string `json:"labels"`
	GradeWithoutToolCalls bool              `json:"grade_without_tool_calls"`
}

type conditionDoc struct {
	Attribute string  `json:"attribute"`
	In        string  `json:"in"`
	Equals    *string `json:"equals"`
	Regex     *string `json:"regex"`
	Exists    *bool   `json:"exists"`
}

// RuleError lists every problem of a rule document, each with its JSON
// pointer.
type RuleError struct {
	Errors []engine.FieldError
}

func (e *RuleError) Error() string {
	var b strings.Builder
	b.WriteString("invalid grading rule")
	for i, fe := range e.Errors {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		p := fe.Pointer
		if p == "" {
			p = "/"
		}
		b.WriteString(p + ": " + fe.Message)
	}
	return b.String()
}

// ParseRule reads and checks a rule document. The evaluation options are
// checked only for their names and JSON types here; the API checks their
// values as POST /v1/evaluations does.
//
// Errors: *RuleError with a pointer per problem (unknown fields, a
// condition with no test or two, a bad regex, a malformed contract
// reference, neither contract nor contract_attribute, label keys).
func ParseRule(data []byte) (*Rule, error) {
	var doc ruleDoc
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, &RuleError{Errors: []engine.FieldError{ruleJSONError(data, err)}}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &RuleError{Errors: []engine.FieldError{{Pointer: "", Message: "unexpected data after the rule document"}}}
	}
	var errs []engine.FieldError
	add := func(ptr, format string, args ...any) {
		errs = append(errs, engine.FieldError{Pointer: ptr, Message: fmt.Sprintf(format, args...)})
	}
	r := &Rule{Description: doc.Description, Priority: 100, Enabled: true, Contract: doc.Contract,
		ContractAttribute: doc.ContractAttribute, TaskID: doc.TaskID, RunID: doc.RunID, Agent: doc.Agent,
		Labels: doc.Labels, GradeWithoutToolCalls: doc.GradeWithoutToolCalls}
	if doc.Priority != nil {
		r.Priority = *doc.Priority
	}
	if doc.Enabled != nil {
		r.Enabled = *doc.Enabled
	}
	if len(doc.Match) > maxConditions {
		add("/match", "at most %d conditions, got %d", maxConditions, len(doc.Match))
	}
	for i, c := range doc.Match {
		ptr := "/match/" + strconv.Itoa(i)
		cond := Condition{Attribute: c.Attribute, In: c.In, Equals: c.Equals, Exists: c.Exists}
		if c.Attribute == "" || len(c.Attribute) > maxAttrName {
			add(ptr+"/attribute", "required: an attribute name of 1 to %d bytes", maxAttrName)
		}
		switch c.In {
		case "":
			cond.In = "any"
		case "resource", "span", "any":
		default:
			add(ptr+"/in", "must be resource, span or any, got %q", c.In)
		}
		n := 0
		for _, set := range []bool{c.Equals != nil, c.Regex != nil, c.Exists != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			add(ptr, "give exactly one of equals, regex and exists")
		}
		if c.Regex != nil {
			re, err := regexp.Compile(*c.Regex)
			if err != nil {
				add(ptr+"/regex", "%v", err)
			}
			if re != nil {
				cond.Regex, cond.regexInst = re, engine.RegexInstructions(re)
			}
		}
		r.Match = append(r.Match, cond)
	}
	switch {
	case doc.Contract == "" && doc.ContractAttribute == "":
		add("/contract", "required: a registry contract reference (name or name@version), or contract_attribute")
	case doc.Contract != "" && !refPattern.MatchString(doc.Contract):
		add("/contract", "%q is not a registry contract reference: want name, name@latest or name@N", doc.Contract)
	}
	if len(doc.ContractAttribute) > maxAttrName {
		add("/contract_attribute", "at most %d bytes", maxAttrName)
	}
	for _, f := range []struct{ ptr, v string }{{"/task_id", doc.TaskID}, {"/run_id", doc.RunID}, {"/agent", doc.Agent}} {
		if len(f.v) > maxAttrName {
			add(f.ptr, "an attribute name of at most %d bytes", maxAttrName)
		}
	}
	if len(doc.Labels) > maxRuleLabels {
		add("/labels", "at most %d labels, got %d", maxRuleLabels, len(doc.Labels))
	}
	for _, k := range sortedKeys(doc.Labels) {
		ptr := "/labels/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
		if badLabelKey(k) || strings.HasPrefix(k, "otel.") {
			add(ptr, "a label key must be 1 to 64 bytes of UTF-8 without '=' or NUL, not starting with otel. (reserved)")
		}
		if a := doc.Labels[k]; a == "" || len(a) > maxAttrName {
			add(ptr, "the attribute name must be 1 to %d bytes", maxAttrName)
		}
	}
	if len(bytes.TrimSpace(doc.Options)) > 0 && !bytes.Equal(bytes.TrimSpace(doc.Options), []byte("null")) {
		var opts map[string]json.RawMessage
		if err := json.Unmarshal(doc.Options, &opts); err != nil {
			add("/options", "must be an object of evaluation options (%s)", strings.Join(optionNames, ", "))
		}
		for _, k := range sortedKeys(opts) {
			if !slices.Contains(optionNames, k) {
				add("/options/"+k, "unknown option; valid: %s", strings.Join(optionNames, ", "))
			}
		}
		if len(opts) > 0 {
			r.Options = doc.Options
		}
	}
	if len(errs) > 0 {
		return nil, &RuleError{Errors: errs}
	}
	return r, nil
}

// ruleJSONError places encoding/json's error decoding the rule document
// data: a syntax error by line and column, at the pointer of the value it
// is in ("not JSON: line 1:15: invalid character '}' looking for
// beginning of value"), a member of another type at the member ("line
// 1:14: must be an integer, got string" at /priority), as jsondoc places
// them; any other error (an unknown field) at the document.
func ruleJSONError(data []byte, err error) engine.FieldError {
	var te *json.UnmarshalTypeError
	var jse *jsondoc.SyntaxError
	s := string(data)
	end, ok := jsondoc.SkipValue(s, jsondoc.SkipSpace(s, 0))
	if !ok {
		end = len(s)
	}
	root, perr := jsondoc.ParseString(s[:end])
	switch {
	case errors.As(perr, &jse):
		return engine.FieldError{Pointer: jse.Pointer, Message: fmt.Sprintf("not JSON: line %d:%d: %s", jse.Line, jse.Column, jse.Msg)}
	case perr == nil && errors.As(err, &te):
		at, msg := jsondoc.TypeError(root, 0, te)
		line, col := jsondoc.LineCol(s, at.Offset())
		return engine.FieldError{Pointer: at.Pointer(), Message: fmt.Sprintf("line %d:%d: %s", line, col, msg)}
	}
	return engine.FieldError{Pointer: "", Message: strings.TrimPrefix(err.Error(), "json: ")}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Attrs is a trace's attributes as rules read them: the resources' and
// the spans', in the order identifiers are looked up (root spans first,
// then the other spans by start time, then the resources).
type Attrs struct {
	spans     [][]*commonpb.KeyValue
	resources [][]*commonpb.KeyValue
}

// TraceAttrs collects the attributes of a trace's resource spans.
func TraceAttrs(rs []*tracepb.ResourceSpans) *Attrs {
	type span struct {
		root  bool
		start uint64
		seq   int
		attrs []*commonpb.KeyValue
	}
	var spans []span
	a := &Attrs{}
	for _, r := range rs {
		if attrs := r.GetResource().GetAttributes(); len(attrs) > 0 {
			a.resources = append(a.resources, attrs)
		}
		for _, ss := range r.ScopeSpans {
			for _, s := range ss.Spans {
				spans = append(spans, span{root: len(s.ParentSpanId) == 0, start: s.StartTimeUnixNano, seq: len(spans), attrs: s.Attributes})
			}
		}
	}
	slices.SortStableFunc(spans, func(x, y span) int {
		switch {
		case x.root != y.root:
			if x.root {
				return -1
			}
			return 1
		case x.start != y.start:
			if x.start < y.start {
				return -1
			}
			return 1
		}
		return 0
	})
	for _, s := range spans {
		a.spans = append(a.spans, s.attrs)
	}
	return a
}

// Lookup returns the first value of attribute key, as text (see
// AttrText), and whether any was found.
func (a *Attrs) Lookup(key string) (string, bool) {
	for _, group := range [][][]*commonpb.KeyValue{a.spans, a.resources} {
		for _, attrs := range group {
			for _, kv := range attrs {
				if kv.Key == key {
					if s, ok := AttrText(kv.Value); ok {
						return s, true
					}
				}
			}
		}
	}
	return "", false
}

// AttrText returns an attribute value as the text rules compare: a string
// as it is, a bool as true or false, an integer in decimal, a double in
// the shortest form that reads back; false for arrays, key-value lists,
// bytes and empty values.
func AttrText(v *commonpb.AnyValue) (string, bool) {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue, true
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue), true
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10), true
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64), true
	}
	return "", false
}

// Matches reports whether every condition of r holds for the trace.
func (r *Rule) Matches(a *Attrs) bool {
	if !r.Enabled {
		return false
	}
	for i := range r.Match {
		if !r.Match[i].holds(a) {
			return false
		}
	}
	return true
}

// RegexWork returns an upper bound of the regexp work (text bytes times
// pattern instructions, engine.MaxRegexWork's measure) of Matches(a): for
// each regex condition, the length of the text of every attribute it
// tests times its pattern's compiled instructions. 0 for a disabled rule
// (Matches tests nothing) and a rule without regex conditions.
func (r *Rule) RegexWork(a *Attrs) int64 {
	if !r.Enabled {
		return 0
	}
	var w int64
	for i := range r.Match {
		c := &r.Match[i]
		if c.Regex == nil || c.Exists != nil {
			continue
		}
		inst := c.regexInst
		if inst == 0 {
			inst = engine.RegexInstructions(c.Regex)
		}
		for _, group := range c.groups(a) {
			for _, attrs := range group {
				for _, kv := range attrs {
					if kv.Key != c.Attribute {
						continue
					}
					if s, ok := AttrText(kv.Value); ok {
						w += int64(inst) * int64(len(s))
					}
				}
			}
		}
	}
	return w
}

// groups returns the attribute lists condition c tests, as its In says.
func (c *Condition) groups(a *Attrs) [][][]*commonpb.KeyValue {
	switch c.In {
	case "resource":
		return [][][]*commonpb.KeyValue{a.resources}
	case "span":
		return [][][]*commonpb.KeyValue{a.spans}
	}
	return [][][]*commonpb.KeyValue{a.spans, a.resources}
}

func (c *Condition) holds(a *Attrs) bool {
	found := false
	for _, group := range c.groups(a) {
		for _, attrs := range group {
			for _, kv := range attrs {
				if kv.Key != c.Attribute {
					continue
				}
				found = true
				if c.Exists != nil {
					if *c.Exists {
						return true
					}
					continue
				}
				s, ok := AttrText(kv.Value)
				if !ok {
					continue
				}
				if (c.Equals != nil && s == *c.Equals) || (c.Regex != nil && c.Regex.MatchString(s)) {
					return true
				}
			}
		}
	}
	return c.Exists != nil && !*c.Exists && !found
}

// ContractFor returns the registry reference the rule grades a trace
// with: the ContractAttribute's value when the trace has it, else
// Contract; "" when neither gives one.
func (r *Rule) ContractFor(a *Attrs) string {
	if r.ContractAttribute != "" {
		if v, ok := a.Lookup(r.ContractAttribute); ok && v != "" {
			return v
		}
	}
	return r.Contract
}
