package harness

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/engine"
)

func TestParseSuite(t *testing.T) {
	const doc = `{
  "name": "demo",
  "min_score": 0.75,
  "tools": [{"name": "lookup"}],
  "tasks": [
    {"id": "c1", "input": "find x", "contract": {"contract_version": 2, "required": [{"tool": "lookup"}], "min_score": 0.5}, "labels": {"k": "v"}},
    {"id": "g1", "input": [{"role": "user", "content": "find y"}], "gold": [{"tool": "lookup", "args": {"id": 12345678901234567890}}], "tools": []},
    {"id": "r1", "input": "find z", "contract_ref": "flights@3"}
  ]
}`
	s, err := ParseSuite([]byte(doc), ".json")
	if err != nil {
		t.Fatalf("ParseSuite: %v", err)
	}
	type task struct {
		ID, Input, Tools, ContractJSON, ContractRef string
		Index                                       int
		Gold, HasContract                           bool
		MinScore                                    *float64
		Labels                                      map[string]string
	}
	var got []task
	for _, tk := range s.Tasks {
		got = append(got, task{
			ID: tk.ID, Index: tk.Index, Input: string(tk.Input), Tools: string(tk.Tools),
			ContractJSON: string(tk.ContractJSON), ContractRef: tk.ContractRef,
			HasContract: tk.Contract != nil, Gold: tk.Contract != nil && tk.Contract.Gold,
			MinScore: tk.MinScore, Labels: tk.Labels,
		})
	}
	min := 0.75
	want := []task{
		{ID: "c1", Index: 0, Input: `"find x"`, Tools: `[{"name": "lookup"}]`,
			ContractJSON: `{"contract_version": 2, "required": [{"tool": "lookup"}], "min_score": 0.5}`,
			HasContract:  true, Labels: map[string]string{"k": "v"}},
		// Gold tasks take the suite's min_score; numbers are kept as written.
		{ID: "g1", Index: 1, Input: `[{"role": "user", "content": "find y"}]`, Tools: `[]`,
			ContractJSON: `[{"tool": "lookup", "args": {"id": 12345678901234567890}}]`,
			HasContract:  true, Gold: true, MinScore: &min},
		{ID: "r1", Index: 2, Input: `"find z"`, Tools: `[{"name": "lookup"}]`, ContractRef: "flights@3"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tasks (-want +got):\n%s", diff)
	}
	if s.Name != "demo" || s.MinScore == nil || *s.MinScore != 0.75 {
		t.Errorf("suite = %q min_score %v, want demo 0.75", s.Name, s.MinScore)
	}
	if p := s.Tasks[2].Pointer(); p != "/tasks/2" {
		t.Errorf("Pointer() = %q, want /tasks/2", p)
	}
}

func TestParseSuiteYAML(t *testing.T) {
	const doc = `
name: demo
tasks:
  - id: a
    input: hello
    gold:
      - tool: lookup
        args: {id: 7}
`
	for _, ext := range []string{".yaml", ".yml", ""} {
		s, err := ParseSuite([]byte(doc), ext)
		if err != nil {
			t.Fatalf("ParseSuite(%q): %v", ext, err)
		}
		if got := string(s.Tasks[0].ContractJSON); got != `[{"args":{"id":7},"tool":"lookup"}]` {
			t.Errorf("ParseSuite(%q) gold = %s", ext, got)
		}
		if s.Tasks[0].MinScore != nil {
			t.Errorf("ParseSuite(%q) MinScore = %v, want nil (the default)", ext, *s.Tasks[0].MinScore)
		}
	}
}

func TestParseSuiteErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		ext  string
		want []engine.FieldError
	}{
		{
			name: "broken embedded contract, pointer prefixed",
			doc:  `{"name":"x","tasks":[{"id":"a","input":"hi","gold":[]},{"id":"b","input":"hi","contract":{"contract_version":3,"required":[{"tool":"t"}]}}]}`,
			want: []engine.FieldError{{Pointer: "/tasks/1/contract/contract_version", Message: "contract_version must be 2"}},
		},
		{
			name: "duplicate ids",
			doc:  `{"name":"x","tasks":[{"id":"a","input":"hi","gold":[]},{"id":"b","input":"hi","gold":[]},{"id":"a","input":"hi","gold":[]}]}`,
			want: []engine.FieldError{{Pointer: "/tasks/2/id", Message: `duplicate task id "a" (first used at /tasks/0)`}},
		},
		{
			name: "no grading source",
			doc:  `{"name":"x","tasks":[{"id":"a","input":"hi"}]}`,
			want: []engine.FieldError{{Pointer: "/tasks/0", Message: "a task needs one of contract, gold or contract_ref"}},
		},
		{
			name: "two grading sources",
			doc:  `{"name":"x","tasks":[{"id":"a","input":"hi","gold":[],"contract_ref":"c"}]}`,
			want: []engine.FieldError{{Pointer: "/tasks/0", Message: "a task takes exactly one of contract, gold or contract_ref, not gold and contract_ref"}},
		},
		{
			name: "gold file under contract",
			doc:  `{"name":"x","tasks":[{"id":"a","input":"hi","contract":{"calls":[]}}]}`,
			want: []engine.FieldError{{Pointer: "/tasks/0/contract", Message: "a contract needs contract_version, required or optional (use gold for a gold file)"}},
		},
		{
			name: "contract under gold",
			doc:  `{"name":"x","tasks":[{"id":"a","input":"hi","gold":{"contract_version":2,"required":[]}}]}`,
			want: []engine.FieldError{{Pointer: "/tasks/0/gold", Message: "is a contract, not a gold file; put it under contract"}},
		},
		{
			name: "every problem at once, sorted by pointer",
			doc: `{"name":"x","typo":1,"min_score":2,"tasks":[
				{"id":"a b","input":5,"gold":[]},
				{"id":"ok","input":[{"content":"no role"}],"contract_ref":"name@0","labels":{"k":1}}]}`,
			want: []engine.FieldError{
				{Pointer: "", Message: "unknown field 'typo'"},
				{Pointer: "/min_score", Message: "must be <= 1 but found 2"},
				{Pointer: "/tasks/0/id", Message: "a task id is letters, digits, '_', '.' and '-', starting with a letter, digit or '_'"},
				{Pointer: "/tasks/0/input", Message: "input must be a prompt string or a list of messages"},
				{Pointer: "/tasks/1/contract_ref", Message: "contract_ref must be name, name@version or name@latest (a name is letters, digits, '.', '_' and '-'; a version is a number from 1)"},
				{Pointer: "/tasks/1/input/0", Message: "missing properties: 'role'"},
				{Pointer: "/tasks/1/labels/k", Message: "expected string, but got number"},
			},
		},
		{
			name: "array indexes sort as numbers",
			doc: `{"name":"x","tasks":[` + strings.Repeat(`{"id":"a","input":"hi","gold":[]},`, 10) +
				`{"id":"a","input":"hi"}]}`,
			want: func() []engine.FieldError {
				var w []engine.FieldError
				for i := 1; i <= 10; i++ {
					w = append(w, engine.FieldError{Pointer: "/tasks/" + itoa(i) + "/id", Message: `duplicate task id "a" (first used at /tasks/0)`})
				}
				w = append(w[:9], engine.FieldError{Pointer: "/tasks/10", Message: "a task needs one of contract, gold or contract_ref"}, w[9])
				return w
			}(),
		},
		{
			name: "label limits",
			doc:  `{"name":"x","tasks":[{"id":"a","input":"hi","contract_ref":"flights@latest","labels":{"":"v","ok":"` + strings.Repeat("v", 257) + `"}}]}`,
			want: []engine.FieldError{
				{Pointer: "/tasks/0/labels", Message: "label keys must be 1 to 64 characters long"},
				{Pointer: "/tasks/0/labels/ok", Message: "length must be <= 256, but got 257"},
			},
		},
		{
			name: "missing name and tasks",
			doc:  `{}`,
			want: []engine.FieldError{{Pointer: "", Message: "missing properties: 'name', 'tasks'"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSuite([]byte(tc.doc), tc.ext)
			var se *SuiteError
			if !errors.As(err, &se) {
				t.Fatalf("ParseSuite error = %v, want a *SuiteError", err)
			}
			if !errors.Is(err, ErrInvalidSuite) {
				t.Errorf("errors.Is(%v, ErrInvalidSuite) = false", err)
			}
			if diff := cmp.Diff(tc.want, se.Errors); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestParseSuiteSyntaxErrors(t *testing.T) {
	tests := []struct {
		name, doc, ext, want string
	}{
		{"json", "{\"name\": \"x\",\n \"tasks\": [}", ".json", "invalid suite: line 2:12: invalid character '}' looking for beginning of value (at /tasks/0)"},
		{"sniffed json", "{\"name\": ", "", "invalid suite: line 1:10: unexpected end of JSON input"},
		{"yaml", "name: x\ntasks:\n  - id: a\n   input: hi\n", ".yaml", "invalid suite: yaml: line 3: did not find expected '-' indicator"},
		{"empty", "", ".json", "invalid suite: line 1:1: empty document"},
		{"yaml repeated key", "name: x\ntasks:\n  - id: a\n    input: hi\n    contract:\n      contract_version: 2\n      required:\n        - tool: a\n      forbidden:\n        - tool: rm\n      forbidden: []\n", ".yaml",
			"invalid suite: yaml: line 11: key \"forbidden\" already set in map"},
		{"yaml repeated key in a flow mapping", "name: x\ntasks:\n  - id: a\n    input: hi\n    contract: {contract_version: 2, required: [{tool: a, tool: b}]}\n", ".yml",
			"invalid suite: yaml: line 5: key \"tool\" already set in map"},
		{"sniffed yaml repeated top-level key", "name: x\nname: y\ntasks: []\n", "",
			"invalid suite: yaml: line 2: key \"name\" already set in map"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSuite([]byte(tc.doc), tc.ext)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("ParseSuite(%q) error = %v, want %s", tc.doc, err, tc.want)
			}
			if !errors.Is(err, ErrInvalidSuite) {
				t.Errorf("errors.Is(%v, ErrInvalidSuite) = false", err)
			}
		})
	}
}

func TestLoadSuite(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"name":"x","tasks":[{"id":"a","input":"hi"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadSuite(bad)
	want := bad + ": invalid suite: /tasks/0: a task needs one of contract, gold or contract_ref"
	if err == nil || err.Error() != want {
		t.Errorf("LoadSuite error = %v, want %s", err, want)
	}
	var se *SuiteError
	if !errors.As(err, &se) {
		t.Errorf("LoadSuite error is not a *SuiteError")
	}
	if _, err := LoadSuite(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadSuite(missing) = %v, want ErrNotExist", err)
	}
	// The example suite is valid.
	s, err := LoadSuite("../../examples/harness/suite.json")
	if err != nil {
		t.Fatalf("LoadSuite(example): %v", err)
	}
	if len(s.Tasks) < 5 {
		t.Errorf("example suite has %d tasks, want at least 5", len(s.Tasks))
	}
}
