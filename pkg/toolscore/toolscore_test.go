package toolscore_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/format"
	"github.com/toolscore/toolscore/internal/report"
	"github.com/toolscore/toolscore/internal/secrets"
	"github.com/toolscore/toolscore/pkg/toolscore"
)

func read(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func example(name string) string { return filepath.Join("..", "..", "examples", "contracts", name) }

// cliJSON encodes v as `toolscore eval --json` writes a result: no HTML
// escaping, indented by two spaces, one newline at the end.
func cliJSON(tb testing.TB, v any) string {
	tb.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		tb.Fatal(err)
	}
	return buf.String()
}

// header matches the lines of a saved result's header, which a library
// result does not have.
var header = regexp.MustCompile(`(?m)^  "(format_version|expectation_sha256)": .*\n`)

// TestEqualsCLIGolden: the library's results of the seed example equal
// `toolscore eval --json` on the same files, as the CLI's golden test pins
// its output (cmd/toolscore/testdata), both through EvaluateTrace and
// through LoadContract, ParseTrace and EvaluateContract.
func TestEqualsCLIGolden(t *testing.T) {
	ctx := context.Background()
	trace := read(t, example("trace.json"))
	for _, tc := range []struct{ expectation, golden string }{
		{"contract.json", "eval_contract_json.golden"},
		{"gold.json", "eval_gold_json.golden"},
	} {
		want := header.ReplaceAllString(string(read(t, filepath.Join("..", "..", "cmd", "toolscore", "testdata", tc.golden))), "")
		exp := read(t, example(tc.expectation))
		res, err := toolscore.EvaluateTrace(ctx, exp, trace, toolscore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, cliJSON(t, res)); diff != "" {
			t.Errorf("EvaluateTrace(%s) differs from the CLI's (-cli +library):\n%s", tc.expectation, diff)
		}
		c, err := toolscore.LoadContract(exp)
		if err != nil {
			t.Fatal(err)
		}
		p, err := toolscore.ParseTrace(trace, "")
		if err != nil {
			t.Fatal(err)
		}
		res, err = toolscore.EvaluateContract(ctx, c, p.Calls, toolscore.Options{FinalAnswer: p.FinalAnswer})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, cliJSON(t, res)); diff != "" {
			t.Errorf("EvaluateContract(%s) differs from the CLI's (-cli +library):\n%s", tc.expectation, diff)
		}
	}
}

// cliResult grades as `toolscore eval --json` does (cmd/toolscore runEval:
// engine.ParseContract, format.Parse, --final-answer over the trace's,
// engine.Evaluate with the default secret scanner, report.AppendSaved)
// and returns the result's JSON without the header.
func cliResult(tb testing.TB, exp, trace []byte, o toolscore.Options) string {
	tb.Helper()
	c, err := engine.ParseContract(exp)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := format.Parse(trace, o.Format)
	if err != nil {
		tb.Fatal(err)
	}
	if o.FinalAnswer != nil {
		p.Trace.FinalAnswer = o.FinalAnswer
	}
	res, err := engine.Evaluate(context.Background(), c, p.Trace, engine.Options{
		Strict: o.Strict, Weights: o.Weights, MinScore: o.MinScore, Forbidden: o.Forbidden,
		NoSafetyGate: o.NoSafetyGate, KeepSecrets: o.KeepSecrets, SecretScanner: cliScanner,
	})
	if err != nil {
		tb.Fatal(err)
	}
	line, err := report.AppendSaved(nil, report.Header{}, res)
	if err != nil {
		tb.Fatal(err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, line, "", "  "); err != nil {
		tb.Fatal(err)
	}
	out.WriteByte('\n')
	return header.ReplaceAllString(out.String(), "")
}

var cliScanner = secrets.New()

func ptr[T any](v T) *T { return &v }

// TestEqualsCLIOptions: with every option the CLI has a flag for, on the
// CLI's test traces (secrets, tool errors, unreadable arguments, an
// Anthropic trace), the library's results equal the CLI's.
func TestEqualsCLIOptions(t *testing.T) {
	ctx := context.Background()
	cliData := filepath.Join("..", "..", "cmd", "toolscore", "testdata")
	traces := []string{example("trace.json"), filepath.Join(cliData, "unsafe-trace.json"), filepath.Join(cliData, "openai-bad-args.json"),
		filepath.Join(cliData, "anthropic-error.json"), filepath.Join(cliData, "batch", "a-pass.json"), filepath.Join(cliData, "batch", "b-unsafe.json")}
	opts := []toolscore.Options{
		{},
		{MinScore: ptr(0.5), FinalAnswer: ptr("Booked FL-204, confirmation ZX-9911.")},
		{Forbidden: []toolscore.ForbiddenCall{{Tool: "get_weather", Reason: "weather is not needed"}}},
		{Forbidden: []toolscore.ForbiddenCall{{Tool: "get_weather"}}, NoSafetyGate: true},
		{Strict: true, Weights: map[string]float64{"argument_f1": 0.5, "required_call_recall": 0}},
		{KeepSecrets: true},
		{Format: "plain"},
	}
	for _, exp := range []string{"contract.json", "gold.json"} {
		expData := read(t, example(exp))
		c, err := toolscore.LoadContract(expData)
		if err != nil {
			t.Fatal(err)
		}
		for _, tp := range traces {
			traceData := read(t, tp)
			for i, o := range opts {
				if o.Format != "" {
					if _, err := toolscore.ParseTrace(traceData, o.Format); err != nil {
						continue // not a plain trace
					}
				}
				want := cliResult(t, expData, traceData, o)
				res, err := toolscore.EvaluateTrace(ctx, expData, traceData, o)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, cliJSON(t, res)); diff != "" {
					t.Errorf("%s %s options %d: EvaluateTrace differs (-cli +library):\n%s", exp, tp, i, diff)
				}
				p, err := toolscore.ParseTrace(traceData, o.Format)
				if err != nil {
					t.Fatal(err)
				}
				if o.FinalAnswer == nil {
					o.FinalAnswer = p.FinalAnswer
				}
				res, err = toolscore.EvaluateContract(ctx, c, p.Calls, o)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, cliJSON(t, res)); diff != "" {
					t.Errorf("%s %s options %d: EvaluateContract differs (-cli +library):\n%s", exp, tp, i, diff)
				}
			}
		}
	}
}

// TestGoldenCorpus: on the engine's golden corpus (random contracts with
// every matcher, and every trace of the format tests, with options), the
// library's results are the engine's pinned results
// (internal/engine/testdata/golden), through EvaluateTrace and through
// EvaluateContract on ParseTrace's calls.
func TestGoldenCorpus(t *testing.T) {
	type options struct {
		Strict       bool                      `json:"strict"`
		Weights      map[string]float64        `json:"weights"`
		MinScore     *float64                  `json:"min_score"`
		Forbidden    []toolscore.ForbiddenCall `json:"forbidden"`
		NoSafetyGate bool                      `json:"no_safety_gate"`
		KeepSecrets  bool                      `json:"keep_secrets"`
	}
	type line struct {
		Name     string          `json:"name"`
		Contract json.RawMessage `json:"contract"`
		Trace    json.RawMessage `json:"trace"`
		Options  options         `json:"options"`
		Result   json.RawMessage `json:"result"`
		Error    string          `json:"error"`
	}
	dir := filepath.Join("..", "..", "internal", "engine", "testdata", "golden")
	cases := readLines[line](t, filepath.Join(dir, "corpus.jsonl"))
	results := readLines[line](t, filepath.Join(dir, "results.jsonl"))
	if len(cases) != len(results) || len(cases) < 100 {
		t.Fatalf("%d cases, %d results", len(cases), len(results))
	}
	ctx := context.Background()
	for i, cs := range cases {
		o := toolscore.Options{Format: "plain", Strict: cs.Options.Strict, Weights: cs.Options.Weights, MinScore: cs.Options.MinScore,
			Forbidden: cs.Options.Forbidden, NoSafetyGate: cs.Options.NoSafetyGate, KeepSecrets: cs.Options.KeepSecrets}
		want := results[i]
		if want.Name != cs.Name {
			t.Fatalf("line %d: case %s, result %s", i+1, cs.Name, want.Name)
		}
		res, err := toolscore.EvaluateTrace(ctx, cs.Contract, cs.Trace, o)
		if got := pinned(t, res, err); got != string(want.Result)+want.Error {
			t.Errorf("%s: EvaluateTrace:\n got %s\nwant %s%s", cs.Name, got, want.Result, want.Error)
			continue
		}
		c, err := toolscore.LoadContract(cs.Contract)
		if err != nil {
			t.Fatal(err)
		}
		p, err := toolscore.ParseTrace(cs.Trace, "plain")
		if err != nil {
			t.Fatal(err)
		}
		o.FinalAnswer = p.FinalAnswer
		res, err = toolscore.EvaluateContract(ctx, c, p.Calls, o)
		if got := pinned(t, res, err); got != string(want.Result)+want.Error {
			t.Errorf("%s: EvaluateContract:\n got %s\nwant %s%s", cs.Name, got, want.Result, want.Error)
		}
	}
}

// pinned is what the engine's golden results hold for a result: its JSON
// (encoding/json) without scored_calls, which must be the trace calls at
// scored_indexes, or the error's text.
func pinned(tb testing.TB, res *toolscore.Result, err error) string {
	tb.Helper()
	if err != nil {
		return err.Error()
	}
	for k, j := range res.ScoredIndexes {
		if diff := cmp.Diff(res.TraceCalls[j], res.ScoredCalls[k]); diff != "" {
			tb.Fatalf("scored call %d is not trace call %d:\n%s", k, j, diff)
		}
	}
	r := *res
	r.ScoredCalls = nil
	b, err := json.Marshal(&r)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func readLines[T any](tb testing.TB, path string) []T {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestEveryFormat: every trace document of the format tests (JSON, JSON
// Lines, SSE, each format) grades the same through EvaluateTrace and
// through EvaluateContract on ParseTrace's calls, and ParseTrace reads
// what the CLI's reader reads.
func TestEveryFormat(t *testing.T) {
	ctx := context.Background()
	contract := read(t, example("contract.json"))
	c, err := toolscore.LoadContract(contract)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	root := filepath.Join("..", "..", "internal", "engine", "format", "testdata")
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(path, string(filepath.Separator)+"fuzz"+string(filepath.Separator)) {
			return err
		}
		switch filepath.Ext(path) {
		case ".json", ".jsonl", ".sse":
		default:
			return nil
		}
		data := read(t, path)
		want, err := format.Parse(data, "auto")
		if err != nil {
			return nil // the format tests' documents that must not read
		}
		p, err := toolscore.ParseTrace(data, "")
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if p.Format != want.Format || p.Reason != want.Reason || p.Form != string(want.Form) || !cmp.Equal(p.FinalAnswer, want.Trace.FinalAnswer) {
			t.Errorf("%s: ParseTrace %s %q %s, want %s %q %s", path, p.Format, p.Reason, p.Form, want.Format, want.Reason, want.Form)
		}
		wantCalls, _ := json.Marshal(want.Trace.Calls)
		gotCalls, _ := json.Marshal(p.Calls)
		if !bytes.Equal(wantCalls, gotCalls) {
			t.Errorf("%s: calls\n got %s\nwant %s", path, gotCalls, wantCalls)
		}
		byTrace, err := toolscore.EvaluateTrace(ctx, contract, data, toolscore.Options{})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		byCalls, err := toolscore.EvaluateContract(ctx, c, p.Calls, toolscore.Options{FinalAnswer: p.FinalAnswer})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if diff := cmp.Diff(cliJSON(t, byTrace), cliJSON(t, byCalls)); diff != "" {
			t.Errorf("%s: EvaluateContract differs from EvaluateTrace (-trace +calls):\n%s", path, diff)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 300 {
		t.Errorf("graded %d trace documents, want the format tests' (over 300)", n)
	}
}

// iata matches a three-letter upper-case airport code.
type iata struct{}

func (iata) Match(actual any, _ toolscore.CompareOptions) bool {
	s, ok := actual.(string)
	return ok && len(s) == 3 && strings.ToUpper(s) == s && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == ""
}

func TestCustomMatcher(t *testing.T) {
	ctx := context.Background()
	mk := func(arg any) (toolscore.Matcher, error) {
		if arg != true {
			return nil, errors.New("takes true")
		}
		return iata{}, nil
	}
	builtin := bytes.Replace(read(t, example("contract.json")), []byte(`"destination": "LIS"`), []byte(`"destination": {"$regex": "^[A-Z]{3}$"}`), 1)
	custom := bytes.Replace(builtin, []byte(`{"$regex": "^[A-Z]{3}$"}`), []byte(`{"$iata": true}`), 1)
	if bytes.Equal(custom, builtin) || bytes.Equal(builtin, read(t, example("contract.json"))) {
		t.Fatal("the contract was not rewritten")
	}
	cb, err := toolscore.LoadContract(builtin)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := toolscore.LoadContract(custom, toolscore.WithMatcher("$iata", mk))
	if err != nil {
		t.Fatal(err)
	}
	for _, dest := range []string{"LIS", "lis", "OPO"} {
		calls := []toolscore.ToolCall{
			{Tool: "search_flights", Args: json.RawMessage(`{"destination": "` + dest + `", "date": "2026-12-18"}`)},
			{Tool: "book_flight", Args: json.RawMessage(`{"flight_id": "FL-204"}`)},
		}
		want, err := toolscore.EvaluateContract(ctx, cb, calls, toolscore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := toolscore.EvaluateContract(ctx, cc, calls, toolscore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		expected := got.ExpectedCalls[0]
		// The same result, but for how the matcher is shown.
		got.ExpectedCalls, want.ExpectedCalls = nil, nil
		shownWant := strings.ReplaceAll(cliJSON(t, want), `{\"$regex\":\"^[A-Z]{3}$\"}`, `{\"$iata\":true}`)
		if diff := cmp.Diff(shownWant, cliJSON(t, got)); diff != "" {
			t.Errorf("%s: (-built-in +custom):\n%s", dest, diff)
		}
		shown, _ := json.Marshal(expected)
		if w := `{"tool":"search_flights","args":{"date":{"$regex":"^2026-12-"},"destination":{"$iata":true}}}`; string(shown) != w {
			t.Errorf("expected call shown as %s, want %s", shown, w)
		}
	}
	_, err = toolscore.LoadContract(bytes.Replace(custom, []byte(`"$iata": true`), []byte(`"$iata": 3`), 1), toolscore.WithMatcher("$iata", mk))
	var ve *toolscore.ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, toolscore.ErrInvalidContract) ||
		!cmp.Equal(ve.Errors, []toolscore.FieldError{{Pointer: "/required/0/args/destination/$iata", Message: "$iata: takes true"}}) {
		t.Errorf("error = %v", err)
	}
	_, err = toolscore.LoadContract(custom, toolscore.WithMatcher("iata", mk))
	if !errors.As(err, &ve) || !errors.Is(err, toolscore.ErrInvalidOptions) || err.Error() != `invalid options: /matchers/iata: custom matcher name "iata" must be "$" followed by a name` {
		t.Errorf("error = %v", err)
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	contract, trace := read(t, example("contract.json")), read(t, example("trace.json"))
	c, err := toolscore.LoadContract(contract)
	if err != nil {
		t.Fatal(err)
	}
	var se *toolscore.SyntaxError
	var ve *toolscore.ValidationError
	var sh *toolscore.ShapeError
	for _, tc := range []struct {
		name string
		err  error
		want string
		ok   func(error) bool
	}{
		{"contract JSON", second(toolscore.LoadContract([]byte("{\n  \"required\": [1,]\n}"))),
			`line 2:18: invalid character ']' looking for beginning of value (at /required/1)`,
			func(err error) bool { return errors.As(err, &se) && se.Line == 2 && se.Column == 18 }},
		{"contract shape", second(toolscore.LoadContract([]byte(`{"contract_version": 2, "required": [{"tool": ""}], "min_score": 2}`))),
			`invalid contract: /min_score: must be <= 1 but found 2; /required/0/tool: length must be >= 1, but got 0`,
			func(err error) bool {
				return errors.As(err, &ve) && errors.Is(err, toolscore.ErrInvalidContract) && len(ve.Errors) == 2
			}},
		{"trace detection", second(toolscore.ParseTrace([]byte(`{"hello": 1}`), "")),
			``,
			func(err error) bool {
				return errors.Is(err, toolscore.ErrInvalidTrace) &&
					strings.HasPrefix(err.Error(), "invalid trace: no known format fits the document (a JSON object with keys hello) (tried plain, ")
			}},
		{"trace shape", second(toolscore.ParseTrace([]byte(`{"calls": [{"tool": 7}]}`), "plain")),
			`invalid trace: plain: /calls/0/tool: tool must be a string, not a number`,
			func(err error) bool {
				return errors.As(err, &sh) && sh.Format == "plain" && sh.Pointer == "/calls/0/tool"
			}},
		{"unknown format", second(toolscore.ParseTrace(trace, "openia")),
			``,
			func(err error) bool {
				return errors.Is(err, toolscore.ErrInvalidTrace) && strings.HasPrefix(err.Error(), `invalid trace: unknown format "openia" (known: auto, plain, `)
			}},
		{"expectation named", second(toolscore.EvaluateTrace(ctx, []byte(`[`), trace, toolscore.Options{})),
			`expectation: line 1:2: unexpected end of JSON input`,
			func(err error) bool { return errors.As(err, &se) }},
		{"trace named", second(toolscore.EvaluateTrace(ctx, contract, []byte(`[{"tool": 7}]`), toolscore.Options{Format: "plain"})),
			`trace: invalid trace: plain: /0/tool: tool must be a string, not a number`,
			func(err error) bool { return errors.As(err, &sh) && errors.Is(err, toolscore.ErrInvalidTrace) }},
		{"call args", second(toolscore.EvaluateContract(ctx, c, []toolscore.ToolCall{{Tool: "a"}, {Tool: "b", Args: json.RawMessage(`{"x":`)}}, toolscore.Options{})),
			`invalid trace: calls[1].args: line 1:6: unexpected end of JSON input`,
			func(err error) bool { return errors.As(err, &se) && errors.Is(err, toolscore.ErrInvalidTrace) }},
		{"call result", second(toolscore.EvaluateContract(ctx, c, []toolscore.ToolCall{{Tool: "a", Result: json.RawMessage(`{"ok": tru}`)}}, toolscore.Options{})),
			`invalid trace: calls[0].result: line 1:11: invalid character '}' in literal true (expecting 'e') (at /ok)`,
			func(err error) bool { return errors.As(err, &se) && errors.Is(err, toolscore.ErrInvalidTrace) }},
		{"min score", second(toolscore.EvaluateContract(ctx, c, nil, toolscore.Options{MinScore: ptr(1.5)})),
			`invalid options: /min_score: min_score must be in [0,1], got 1.5`,
			func(err error) bool { return errors.As(err, &ve) && errors.Is(err, toolscore.ErrInvalidOptions) }},
		{"weights", second(toolscore.EvaluateContract(ctx, c, nil, toolscore.Options{Weights: map[string]float64{"speed": 1}})),
			`invalid options: /weights/speed: unknown weight "speed" (valid: selection_accuracy, argument_f1, sequence_accuracy, redundant_rate, required_call_recall)`,
			func(err error) bool { return errors.Is(err, toolscore.ErrInvalidOptions) }},
		{"cancelled", second(toolscore.EvaluateContract(cancelled(), c, nil, toolscore.Options{})),
			`context canceled`,
			func(err error) bool { return errors.Is(err, context.Canceled) }},
	} {
		if tc.err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if tc.want != "" && tc.err.Error() != tc.want {
			t.Errorf("%s: error %q, want %q", tc.name, tc.err, tc.want)
		}
		if !tc.ok(tc.err) {
			t.Errorf("%s: error %q (%T) is not of the right kind", tc.name, tc.err, tc.err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// TestNoCalls: an agent that called nothing is graded, not an error.
func TestNoCalls(t *testing.T) {
	c, err := toolscore.LoadContract(read(t, example("gold.json")))
	if err != nil {
		t.Fatal(err)
	}
	res, err := toolscore.EvaluateContract(context.Background(), c, nil, toolscore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := cliResult(t, read(t, example("gold.json")), []byte(`[]`), toolscore.Options{})
	if diff := cmp.Diff(want, cliJSON(t, res)); diff != "" {
		t.Errorf("(-cli +library):\n%s", diff)
	}
	if res.String() != "Grade F FAIL (10.0%)" || len(res.TraceCalls) != 0 {
		t.Errorf("got %s with %d calls", res, len(res.TraceCalls))
	}
}
