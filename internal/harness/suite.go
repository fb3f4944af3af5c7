package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/schemas"
)

// ErrInvalidSuite wraps every suite that cannot be used: bad JSON or YAML
// (a *engine.SyntaxError or a YAML error with its line), or a *SuiteError
// listing every problem with its JSON pointer.
var ErrInvalidSuite = errors.New("invalid suite")

// SuiteError lists every problem found in a suite, each located by an RFC
// 6901 JSON pointer into the suite document. Problems inside an embedded
// contract carry the task's pointer as prefix, such as
// "/tasks/2/contract/required/0/args/date". errors.Is(err, ErrInvalidSuite)
// holds.
type SuiteError struct {
	// Errors are the problems sorted by pointer (array indexes compared as
	// numbers), never empty.
	Errors []engine.FieldError
}

// Error formats the problems as "invalid suite: /ptr: message; ...".
func (e *SuiteError) Error() string {
	var b strings.Builder
	b.WriteString("invalid suite")
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
		fmt.Fprintf(&b, "%s: %s", p, fe.Message)
	}
	return b.String()
}

// Is reports whether target is ErrInvalidSuite.
func (e *SuiteError) Is(target error) bool { return target == ErrInvalidSuite }

// Suite is a validated harness suite (schemas/suite.schema.json): a named
// list of tasks, each with the contract, gold file or registry contract
// that grades it. A Suite is read-only once loaded and safe for concurrent
// use.
type Suite struct {
	// Name is the suite's name.
	Name string
	// Description is free text, "" when absent.
	Description string
	// MinScore is the passing score for gold tasks in [0,1]; nil means
	// engine.DefaultMinScore. Contract tasks use their contract's min_score.
	MinScore *float64
	// Tasks are the tasks in suite order; task ids are unique.
	Tasks []*Task
}

// Task is one task of a suite. Exactly one of Contract (inline contract or
// gold file, already parsed and validated) and ContractRef is set.
type Task struct {
	// ID identifies the task within its suite. It matches
	// ^[A-Za-z0-9_][A-Za-z0-9._-]*$, so it is safe as a file name.
	ID string
	// Index is the task's 0-based position in the suite.
	Index int
	// Description is free text, "" when absent.
	Description string
	// Input is the task given to the agent: a JSON string (a prompt) or a
	// JSON array of chat messages, as written in the suite.
	Input json.RawMessage
	// Tools is the JSON array of tool definitions offered to the agent (the
	// task's own, else the suite's); "[]" when neither has any.
	Tools json.RawMessage
	// Labels are free-form labels stored with the result; nil for none.
	Labels map[string]string
	// Contract grades the task; nil when ContractRef is set.
	Contract *engine.Contract
	// ContractJSON is the inline contract or gold document as written in
	// the suite (JSON), for sending to a toolscore service; nil when
	// ContractRef is set.
	ContractJSON json.RawMessage
	// ContractRef is a registry reference, name, name@version or
	// name@latest; "" for inline contracts.
	ContractRef string
	// MinScore is the passing score the task is graded with: the suite's
	// min_score for gold tasks (nil for the default 0.9), nil for contract
	// tasks (the contract's own min_score applies).
	MinScore *float64
}

// Pointer returns the task's JSON pointer in the suite, such as "/tasks/3".
func (t *Task) Pointer() string { return "/tasks/" + strconv.Itoa(t.Index) }

// wireSuite and wireTask are the JSON shapes of a suite, decoded after the
// schema has accepted the document.
type wireSuite struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	MinScore    *float64        `json:"min_score"`
	Tools       json.RawMessage `json:"tools"`
	Tasks       []wireTask      `json:"tasks"`
}

type wireTask struct {
	ID          string            `json:"id"`
	Description string            `json:"description"`
	Input       json.RawMessage   `json:"input"`
	Contract    json.RawMessage   `json:"contract"`
	Gold        json.RawMessage   `json:"gold"`
	ContractRef string            `json:"contract_ref"`
	Tools       json.RawMessage   `json:"tools"`
	Labels      map[string]string `json:"labels"`
}

// LoadSuite reads and validates the suite file at path (see ParseSuite).
// Errors name the file: "FILE: line 3:7: ..." for bad JSON or YAML,
// "FILE: invalid suite: /tasks/1/id: ..." for a *SuiteError (which
// errors.As still finds).
func LoadSuite(path string) (*Suite, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseSuite(data, filepath.Ext(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseSuite reads a suite from data and validates it completely before
// any agent is called: the document against schemas/suite.schema.json,
// task ids for uniqueness, and every embedded contract or gold file with
// engine.ParseContract. ext is the file's extension: ".yaml" and ".yml"
// read YAML, ".json" reads JSON, anything else ("" included) reads JSON
// when the document starts with '{' and YAML otherwise.
//
// Errors wrap ErrInvalidSuite: an *engine.SyntaxError (line and column) for
// bad JSON, a YAML error naming the line for bad YAML or for a key given
// twice in one YAML mapping (block or flow), and a *SuiteError
// listing every problem with its JSON pointer otherwise.
func ParseSuite(data []byte, ext string) (*Suite, error) {
	isYAML := false
	switch strings.ToLower(ext) {
	case ".yaml", ".yml":
		isYAML = true
	case ".json":
	default:
		t := bytes.TrimSpace(data)
		isYAML = len(t) > 0 && t[0] != '{'
	}
	if isYAML {
		// The strict conversion refuses a key given twice in any mapping
		// (block or flow), as engine.ParseContract does in JSON: the lax
		// one would keep the last value, so a second "forbidden: []"
		// would silently lift the first list's rules.
		j, err := yaml.YAMLToJSONStrict(data)
		var te *yamlv2.TypeError
		if errors.As(err, &te) {
			// yaml.v2 puts each problem on its own line ("yaml: unmarshal
			// errors:\n  line 11: key ..."); a suite error is one line.
			return nil, fmt.Errorf("%w: yaml: %s", ErrInvalidSuite, strings.Join(te.Errors, "; "))
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidSuite, err)
		}
		data = j
	}
	doc, err := engine.DecodeJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSuite, err)
	}
	errs, err := validateSuiteSchema(doc)
	if err != nil {
		return nil, err
	}
	errs = append(errs, duplicateIDs(doc)...)
	// When the schema found problems some fields may not decode; decoding
	// goes on as far as it can so that embedded contracts are still checked
	// and every problem is reported at once.
	var w wireSuite
	if err := json.Unmarshal(data, &w); err != nil && len(errs) == 0 {
		// The schema accepted the document, so this is a bug.
		return nil, fmt.Errorf("decode suite: %w", err)
	}
	s := &Suite{Name: w.Name, Description: w.Description, MinScore: w.MinScore}
	for i := range w.Tasks {
		wt := &w.Tasks[i]
		t := &Task{
			ID:          wt.ID,
			Index:       i,
			Description: wt.Description,
			Input:       wt.Input,
			Tools:       firstNonEmpty(wt.Tools, w.Tools, json.RawMessage("[]")),
			Labels:      wt.Labels,
			ContractRef: wt.ContractRef,
		}
		switch {
		case isJSON(wt.Contract, '{'):
			t.ContractJSON = wt.Contract
			t.Contract, errs = parseEmbedded(wt.Contract, t.Pointer()+"/contract", false, errs)
		case isJSON(wt.Gold, '[', '{'):
			t.ContractJSON = wt.Gold
			t.Contract, errs = parseEmbedded(wt.Gold, t.Pointer()+"/gold", true, errs)
			t.MinScore = w.MinScore
		}
		s.Tasks = append(s.Tasks, t)
	}
	if len(errs) > 0 {
		return nil, newSuiteError(errs)
	}
	return s, nil
}

// isJSON reports whether raw is a JSON value starting with one of starts
// (raw comes from the decoder, so it has no leading white space).
func isJSON(raw json.RawMessage, starts ...byte) bool {
	return len(raw) > 0 && bytes.IndexByte(starts, raw[0]) >= 0
}

// parseEmbedded parses an inline contract (gold false) or gold file (gold
// true) at pointer ptr of the suite, appending its problems to errs with
// ptr prefixed to their pointers.
func parseEmbedded(raw json.RawMessage, ptr string, gold bool, errs []engine.FieldError) (*engine.Contract, []engine.FieldError) {
	c, err := engine.ParseContract(raw)
	if err != nil {
		var ve *engine.ValidationError
		if errors.As(err, &ve) {
			for _, fe := range ve.Errors {
				errs = append(errs, engine.FieldError{Pointer: ptr + fe.Pointer, Message: fe.Message})
			}
		} else {
			errs = append(errs, engine.FieldError{Pointer: ptr, Message: err.Error()})
		}
		return nil, errs
	}
	// The schema makes every inline contract look like one; a gold file
	// can still look like a contract.
	if gold && !c.Gold {
		errs = append(errs, engine.FieldError{Pointer: ptr, Message: "is a contract, not a gold file; put it under contract"})
		return nil, errs
	}
	return c, errs
}

// duplicateIDs reports every task whose id repeats an earlier task's, at
// the later task's id pointer. doc is the decoded suite; malformed parts
// are skipped (the schema reports them).
func duplicateIDs(doc any) []engine.FieldError {
	m, _ := doc.(map[string]any)
	tasks, _ := m["tasks"].([]any)
	first := map[string]int{}
	var errs []engine.FieldError
	for i, t := range tasks {
		tm, _ := t.(map[string]any)
		id, ok := tm["id"].(string)
		if !ok {
			continue
		}
		if j, dup := first[id]; dup {
			errs = append(errs, engine.FieldError{
				Pointer: fmt.Sprintf("/tasks/%d/id", i),
				Message: fmt.Sprintf("duplicate task id %q (first used at /tasks/%d)", id, j),
			})
			continue
		}
		first[id] = i
	}
	return errs
}

func firstNonEmpty(vs ...json.RawMessage) json.RawMessage {
	for _, v := range vs {
		if len(v) > 0 {
			return v
		}
	}
	return nil
}

// newSuiteError sorts errs by pointer and drops exact duplicates.
func newSuiteError(errs []engine.FieldError) *SuiteError {
	slices.SortStableFunc(errs, func(a, b engine.FieldError) int { return comparePointers(a.Pointer, b.Pointer) })
	errs = slices.Compact(errs)
	return &SuiteError{Errors: errs}
}

// comparePointers orders JSON pointers token by token, comparing tokens
// that are both array indexes as numbers, so /tasks/2 sorts before
// /tasks/10.
func comparePointers(a, b string) int {
	at, bt := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(at) && i < len(bt); i++ {
		if at[i] == bt[i] {
			continue
		}
		an, aerr := strconv.Atoi(at[i])
		bn, berr := strconv.Atoi(bt[i])
		if aerr == nil && berr == nil {
			return an - bn
		}
		return strings.Compare(at[i], bt[i])
	}
	return len(at) - len(bt)
}

// validateSuiteSchema validates a decoded suite against the suite schema
// and returns its problems with their instance pointers.
func validateSuiteSchema(doc any) ([]engine.FieldError, error) {
	s, err := schemas.SuiteSchema()
	if err != nil {
		return nil, fmt.Errorf("compile suite schema: %w", err)
	}
	err = s.Validate(doc)
	if err == nil {
		return nil, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, err
	}
	var out []engine.FieldError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if msg, ok := specialMessage(e, doc); ok {
			out = append(out, engine.FieldError{Pointer: e.InstanceLocation, Message: msg})
			return
		}
		if e.KeywordLocation != "" && strings.HasSuffix(e.KeywordLocation, "/oneOf") {
			// A oneOf whose instance has the type of exactly one branch:
			// report only that branch's problems.
			var kept []*jsonschema.ValidationError
			for _, c := range e.Causes {
				if !isTypeMismatch(c, e.InstanceLocation) {
					kept = append(kept, c)
				}
			}
			if len(kept) > 0 {
				for _, c := range kept {
					walk(c)
				}
				return
			}
		}
		if len(e.Causes) == 0 {
			out = append(out, engine.FieldError{Pointer: e.InstanceLocation, Message: schemaMessage(e)})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return out, nil
}

// specialMessage gives a single plain message for the suite schema's
// oneOf and anyOf rules (a task's grading source, its input, a contract's
// keys), which the library reports as one error per branch.
func specialMessage(e *jsonschema.ValidationError, doc any) (string, bool) {
	switch {
	case strings.HasSuffix(e.AbsoluteKeywordLocation, "#/$defs/task/oneOf"):
		task, _ := lookup(doc, e.InstanceLocation).(map[string]any)
		var have []string
		for _, k := range []string{"contract", "gold", "contract_ref"} {
			if _, ok := task[k]; ok {
				have = append(have, k)
			}
		}
		if len(have) == 0 {
			return "a task needs one of contract, gold or contract_ref", true
		}
		return fmt.Sprintf("a task takes exactly one of contract, gold or contract_ref, not %s", strings.Join(have, " and ")), true
	case strings.HasSuffix(e.AbsoluteKeywordLocation, "#/$defs/task/properties/input/oneOf"):
		switch lookup(doc, e.InstanceLocation).(type) {
		case string, []any:
			return "", false // the matching branch's causes say what is wrong
		}
		return "input must be a prompt string or a list of messages", true
	case strings.HasSuffix(e.AbsoluteKeywordLocation, "#/$defs/task/properties/contract/anyOf"):
		return "a contract needs contract_version, required or optional (use gold for a gold file)", true
	}
	return "", false
}

// isTypeMismatch reports whether e says the value at loc has the wrong JSON
// type (and nothing else).
func isTypeMismatch(e *jsonschema.ValidationError, loc string) bool {
	return e.InstanceLocation == loc && strings.HasSuffix(e.KeywordLocation, "/type") && len(e.Causes) == 0
}

// lookup returns the value at JSON pointer ptr in doc, nil if absent.
func lookup(doc any, ptr string) any {
	if ptr == "" {
		return doc
	}
	v := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// schemaMessage rewrites the library's messages where a plainer one helps.
func schemaMessage(e *jsonschema.ValidationError) string {
	m := e.Message
	switch {
	case strings.HasPrefix(m, "additionalProperties ") && strings.HasSuffix(m, " not allowed"):
		return "unknown field " + strings.TrimSuffix(strings.TrimPrefix(m, "additionalProperties "), " not allowed")
	case strings.Contains(e.KeywordLocation, "/labels/propertyNames/"):
		return "label keys must be 1 to 64 characters long"
	case strings.HasSuffix(e.KeywordLocation, "/id/pattern"):
		return "a task id is letters, digits, '_', '.' and '-', starting with a letter, digit or '_'"
	case strings.HasSuffix(e.KeywordLocation, "/contract_ref/pattern"):
		return "contract_ref must be name, name@version or name@latest (a name is letters, digits, '.', '_' and '-'; a version is a number from 1)"
	}
	return m
}
