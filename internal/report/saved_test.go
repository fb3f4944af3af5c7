package report

import (
	"testing"

	"github.com/toolscore/toolscore/internal/engine"
)

func TestExpectationSHA256(t *testing.T) {
	a, err := ExpectationSHA256([]byte(`{"contract_version": 2, "required": [{"tool": "x", "args": {"n": 1.0, "a": "<b>"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ExpectationSHA256([]byte("{\n  \"required\": [{\"args\": {\"a\": \"<b>\", \"n\": 1.0}, \"tool\": \"x\"}],\n  \"contract_version\": 2\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("reformatted document: %s, want %s", b, a)
	}
	c, err := ExpectationSHA256([]byte(`{"contract_version": 2, "required": [{"tool": "x", "args": {"n": 1, "a": "<b>"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if c == a {
		t.Error("1 and 1.0 give the same identity; numbers must stay as written")
	}
	if _, err := ExpectationSHA256([]byte(`{"a":`)); err == nil {
		t.Error("no error for a broken document")
	}
}

func TestAppendSaved(t *testing.T) {
	res := &engine.EvaluationResult{Score: 0.5, Grade: engine.GradeF, MinScore: 0.9, Issues: []engine.Issue{{Kind: "k", Problem: "a <b> & c"}}}
	got, err := AppendSaved([]byte("x"), Header{ExpectationSHA256: "ab", Source: "t.jsonl:2"}, res)
	if err != nil {
		t.Fatal(err)
	}
	want := `x{"format_version":1,"expectation_sha256":"ab","source":"t.jsonl:2","score":0.5,"grade":"F","passed":false,"min_score":0.9,"safety_gate":false,` +
		`"metrics":{"selection_accuracy":0,"invocation_accuracy":0,"required_call_recall":0,"argument_metrics":{"precision":0,"recall":0,"f1":0},` +
		`"sequence_metrics":{"edit_distance":0,"normalized_distance":0,"sequence_accuracy":0},"efficiency_metrics":{"redundant_count":0,"total_calls":0,"redundant_rate":0},` +
		`"tool_correctness_metrics":{"tool_correctness":0,"expected_tools":null,"called_tools":null,"missing_tools":null,"extra_tools":null,"correct_count":0,"total_expected":0},` +
		`"weights":{"selection_accuracy":0,"argument_f1":0,"sequence_accuracy":0,"redundant_rate":0,"required_call_recall":0}},"expected_calls":null,"trace_calls":null,` +
		`"scored_calls":null,"scored_indexes":null,"final_answer":null,"checks":{"pass":0,"fail":0,"unknown":0,"items":null},` +
		`"issues":[{"kind":"k","severity":"","tool":"","problem":"a <b> & c","fix":"","calls":null}]}`
	if string(got) != want {
		t.Errorf("AppendSaved:\n got %s\nwant %s", got, want)
	}
	got, err = AppendSaved(nil, Header{Source: "a \"b\".json", Error: "line 1:2: bad"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"format_version":1,"source":"a \"b\".json","error":"line 1:2: bad"}`; string(got) != want {
		t.Errorf("error line %s, want %s", got, want)
	}
}
