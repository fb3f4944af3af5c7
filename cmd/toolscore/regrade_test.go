package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// inTempDir makes a fresh temporary directory the working directory, so
// that outputs name files by short relative paths.
func inTempDir(t *testing.T) {
	t.Helper()
	t.Chdir(t.TempDir())
}

// put writes content to name in the working directory.
func put(t *testing.T, name, content string) string {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// evalJSON writes the --json result of grading trace against contract to
// name and returns name.
func evalJSON(t *testing.T, name, contract, trace string) string {
	t.Helper()
	r := runCLI(t, "", "eval", "--json", contract, trace)
	if r.code > exitFail {
		t.Fatalf("eval: %d %s", r.code, r.stderr)
	}
	return put(t, name, r.stdout)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// absExample is the absolute path of a file of examples/contracts.
func absExample(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(example(name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRegradeOffline(t *testing.T) {
	v1, trace := absExample(t, "contract.json"), absExample(t, "trace.json")
	inTempDir(t)
	// The example contract with min_score 0.99: the example trace (score
	// 0.967) then fails.
	var c map[string]any
	if err := json.Unmarshal(mustRead(t, v1), &c); err != nil {
		t.Fatal(err)
	}
	c["min_score"] = 0.99
	b, _ := json.Marshal(c)
	v2 := put(t, "contract-v2.json", string(b))
	passing := evalJSON(t, "passing.json", v1, trace)
	// A trace with a forbidden call: FAIL at v1, and still at v2.
	forbidden := put(t, "trace-forbidden.json", `[{"tool": "search_flights", "args": {"destination": "LIS", "date": "2026-12-01"}},
		{"tool": "book_flight", "args": {"flight_id": "FL-1"}}, {"tool": "cancel_booking", "args": {}}]`)
	failing := evalJSON(t, "failing.json", v1, forbidden)

	r := runCLI(t, "", "regrade", "--contract", v2, passing, failing)
	if r.code != exitFail || r.stderr != "" {
		t.Fatalf("regrade = %d, stderr %q", r.code, r.stderr)
	}
	compareGoldenAt(t, "regrade_flip", r.stdout)

	// Against the contract it was graded with nothing changes: exit 0.
	r = runCLI(t, "", "regrade", "--contract", v1, passing)
	if r.code != exitOK || !strings.Contains(r.stdout, "no verdict or grade changed") || !strings.Contains(r.stdout, "1 unchanged") {
		t.Errorf("regrade against the same contract = %d:\n%s", r.code, r.stdout)
	}
	// --min-score overrides: the stricter contract passes again.
	if r := runCLI(t, "", "regrade", "--contract", v2, "--min-score", "0.9", passing); r.code != exitOK {
		t.Errorf("regrade --min-score 0.9 = %d:\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = runCLI(t, "", "regrade", "--json", "--contract", v2, passing, failing)
	var got struct {
		Results []regradeFileView `json:"results"`
		Summary regradeSummary    `json:"summary"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != exitFail {
		t.Fatalf("regrade --json = %d, %v:\n%s", r.code, err, r.stdout)
	}
	if diff := cmp.Diff(regradeSummary{Results: 2, PassToFail: 1, Unchanged: 1}, got.Summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if res := got.Results[0]; res.Change != "pass_to_fail" || res.Old.Grade != "A" || !res.Old.Passed || res.New.Passed || res.New.Score != res.Old.Score {
		t.Errorf("first result = %+v", res)
	}
	if res := got.Results[1]; res.Change != "" || res.New.Passed || res.New.TopIssue == nil || res.New.TopIssue.Kind != "forbidden-call" {
		t.Errorf("second result = %+v", res)
	}
}

func TestRegradeOfflineKeepsLeakedCredentials(t *testing.T) {
	inTempDir(t)
	gold := put(t, "gold.json", `[{"tool": "search"}]`)
	leaky := put(t, "leaky.json", `[{"tool": "search", "args": {"api_key": "k7Hq93LmPz2Xw8Rt"}}]`)
	res := evalJSON(t, "leaky-result.json", gold, leaky)
	if strings.Contains(string(mustRead(t, res)), "k7Hq93LmPz2Xw8Rt") {
		t.Fatal("eval --json kept the secret")
	}
	// The redacted calls no longer hold the secret; the verdict stays FAIL.
	r := runCLI(t, "", "regrade", "--json", "--contract", gold, res)
	if r.code != exitOK || !strings.Contains(r.stdout, `"kind": "credential"`) || !strings.Contains(r.stdout, `"passed": false`) {
		t.Errorf("regrade of a leaky result = %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestRegradeOfflineUnnamedCall regrades a saved result whose trace holds
// a call without a name (an OpenAI tool call with no function, kept as
// tool "" with an argument error): the same verdict, nothing changed.
func TestRegradeOfflineUnnamedCall(t *testing.T) {
	inTempDir(t)
	gold := put(t, "gold.json", `[{"tool": "search"}]`)
	trace := put(t, "unnamed.json", `{"messages": [{"role": "user", "content": "run it"}, {"role": "assistant", "content": null, "tool_calls": [`+
		`{"id": "call_1", "type": "function", "function": {"name": "search", "arguments": "{}"}}, {"id": "call_2", "type": "function"}]}]}`)
	res := evalJSON(t, "unnamed-result.json", gold, trace)
	if !strings.Contains(string(mustRead(t, res)), `"tool": "",`) {
		t.Fatalf("eval --json has no unnamed call:\n%s", mustRead(t, res))
	}
	r := runCLI(t, "", "regrade", "--json", "--contract", gold, res)
	var got struct {
		Results []regradeFileView `json:"results"`
		Summary regradeSummary    `json:"summary"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != exitOK {
		t.Fatalf("regrade --json = %d, %v:\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if diff := cmp.Diff(regradeSummary{Results: 1, Unchanged: 1}, got.Summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if res := got.Results[0]; res.Old.Score != 0.65 || res.New.Score != 0.65 || res.New.Grade != "D" || res.New.Passed ||
		res.New.TopIssue == nil || res.New.TopIssue.Kind != "wrong-tool" || res.New.TopIssue.Problem != "`` is not an expected tool" {
		t.Errorf("result = %+v", res)
	}
}

func TestRegradeErrors(t *testing.T) {
	v1 := example("contract.json")
	notResult := writeFile(t, "not-result.json", `{"calls": []}`)
	badJSON := writeFile(t, "bad.json", "{\n  \"score\": ,\n}")
	badCalls := writeFile(t, "bad-calls.json", `{"score": 1, "passed": true, "grade": "A", "trace_calls": [{"args": {}}]}`)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no contract", []string{"regrade", notResult}, "toolscore: --contract is required"},
		{"no files", []string{"regrade", "--contract", v1}, "toolscore: regrade needs RESULT.json files, or --server URL"},
		{"files with server", []string{"regrade", "--server", "http://x", "--contract", "a", notResult}, "toolscore: regrade --server takes no files"},
		{"not a result", []string{"regrade", "--contract", v1, notResult}, "toolscore: " + notResult + ": line 1:1: not an evaluation result (no trace_calls, score or passed); write one with toolscore eval --json"},
		{"bad json", []string{"regrade", "--contract", v1, badJSON}, "toolscore: " + badJSON + ": line 2:12:"},
		{"bad calls", []string{"regrade", "--contract", v1, badCalls}, "toolscore: " + badCalls + ": line 1:60: /trace_calls/0: no \"tool\": a stored call names its tool (\"\" for none)"},
		{"missing file", []string{"regrade", "--contract", v1, "nope.json"}, "toolscore: nope.json: no such file or directory"},
		{"bad min score", []string{"regrade", "--contract", v1, "--min-score", "2", badCalls}, `toolscore: --min-score: must be a number in [0,1], got "2"`},
		{"bad server", []string{"regrade", "--server", "ftp://x", "--contract", "a"}, `toolscore: --server: "ftp://x" is not an http(s) URL`},
		{"bad label", []string{"regrade", "--server", "http://127.0.0.1:1", "--contract", "a", "--label", "x"}, `toolscore: --label: want KEY=VALUE, got "x"`},
		{"bad since", []string{"regrade", "--server", "http://127.0.0.1:1", "--contract", "a", "--since", "yesterday"}, `toolscore: --since: must be an RFC 3339 time`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, "", tc.args...)
			if r.code != exitError || !strings.HasPrefix(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant prefix %q", r.code, r.stderr, tc.want)
			}
		})
	}
}

// compareGoldenAt is compareGolden for a test that changed its working
// directory: the golden file is in the package's testdata.
func compareGoldenAt(t *testing.T, name, got string) {
	t.Helper()
	wd, _ := os.Getwd()
	t.Chdir(pkgDir)
	compareGolden(t, name, got)
	t.Chdir(wd)
}

// pkgDir is the package directory, where tests start.
var pkgDir, _ = os.Getwd()

// fakeRegradeServer answers POST /v1/regrades and GET /v1/regrades/{id}
// like the service: pending, then running, then completed with flips.
type fakeRegradeServer struct {
	mu      sync.Mutex
	body    map[string]any
	gets    int
	final   string
	problem bool
}

func (f *fakeRegradeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == "POST" && r.URL.Path == "/v1/regrades":
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &f.body)
		if f.problem {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(404)
			_, _ = io.WriteString(w, `{"type": "https://toolscore.dev/problems/not-found", "title": "Resource not found", "status": 404,
				"detail": "contract flights@9 does not exist: not found", "errors": [{"pointer": "/contract", "message": "contract flights@9 does not exist: not found"}]}`)
			return
		}
		if f.body["dry_run"] == true {
			_, _ = io.WriteString(w, `{"dry_run": true, "target": {"name": "flights", "version": 3}, "total": 1234}`)
			return
		}
		w.WriteHeader(202)
		_, _ = io.WriteString(w, `{"id": "r-1", "state": "pending", "target": {"name": "flights", "version": 3}, "total": 0, "done": 0}`)
	case r.Method == "GET" && r.URL.Path == "/v1/regrades/r-1":
		f.gets++
		switch f.gets {
		case 1:
			_, _ = io.WriteString(w, `{"id": "r-1", "state": "pending", "total": 0, "done": 0}`)
		case 2:
			_, _ = io.WriteString(w, `{"id": "r-1", "state": "running", "total": 2000, "done": 1000, "failed": 0}`)
		default:
			_, _ = io.WriteString(w, f.final)
		}
	default:
		http.NotFound(w, r)
	}
}

func TestRegradeServer(t *testing.T) {
	fake := &fakeRegradeServer{final: `{"id": "r-1", "state": "completed", "total": 2000, "done": 1999, "failed": 1,
		"flips": {"pass_to_fail": 3, "fail_to_pass": 1}, "changed": 5, "mean_score_delta": -0.0125}`}
	srv := httptest.NewServer(fake)
	defer srv.Close()

	r := runCLI(t, "", "regrade", "--server", srv.URL, "--contract", "flights@3", "--from-versions", "1,2", "--agent", "bot",
		"--label", "env=prod", "--since", "2026-11-01T00:00:00Z", "--wait", "--poll", "1ms")
	if r.code != exitFail {
		t.Fatalf("regrade --wait with pass→fail flips = %d, want 1:\n%s%s", r.code, r.stdout, r.stderr)
	}
	wantBody := map[string]any{"contract": "flights@3", "from_versions": []any{1.0, 2.0}, "agent": "bot",
		"labels": map[string]any{"env": "prod"}, "since": "2026-11-01T00:00:00Z"}
	if diff := cmp.Diff(wantBody, fake.body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	want := "Regrade r-1 started against flights@3\n" +
		"Regrade r-1 completed: 1999 regraded, 1 failed; 3 pass→fail, 1 fail→pass, 5 changed; mean score delta -0.013\n" +
		"Changes: " + srv.URL + "/v1/regrades/r-1/changes\n"
	if r.stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, want)
	}
	// The progress bar is drawn only on a terminal: a file or a pipe (CI
	// logs) gets no spinner frames.
	if r.stderr != "" {
		t.Errorf("stderr is not a terminal, yet it got %q", r.stderr)
	}

	// Without --wait it only starts the regrade.
	fake.gets = 0
	r = runCLI(t, "", "regrade", "--server", srv.URL+"/", "--contract", "flights")
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "Regrade r-1 started against flights@3\nFollow it with: curl "+srv.URL+"/v1/regrades/r-1\n") || fake.gets != 0 {
		t.Errorf("regrade without --wait = %d:\n%s", r.code, r.stdout)
	}
	// A regrade without pass→fail flips exits 0.
	fake.gets, fake.final = 0, `{"id": "r-1", "state": "completed", "total": 2000, "done": 2000, "flips": {"pass_to_fail": 0, "fail_to_pass": 2}, "changed": 2}`
	if r := runCLI(t, "", "regrade", "--server", srv.URL, "--contract", "flights", "--wait", "--poll", "1ms"); r.code != exitOK {
		t.Errorf("regrade without pass→fail = %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A failed regrade is an error.
	fake.gets, fake.final = 0, `{"id": "r-1", "state": "failed", "error": "chunk job failed 100 times"}`
	if r := runCLI(t, "", "regrade", "--server", srv.URL, "--contract", "flights", "--wait", "--poll", "1ms"); r.code != exitError ||
		!strings.Contains(r.stderr, "toolscore: regrade r-1 failed: chunk job failed 100 times") {
		t.Errorf("failed regrade = %d:\n%s", r.code, r.stderr)
	}
	// Dry run.
	r = runCLI(t, "", "regrade", "--server", srv.URL, "--contract", "flights@3", "--dry-run")
	if r.code != exitOK || r.stdout != "Dry run: 1234 results would be regraded against flights@3\n" {
		t.Errorf("dry run = %d %q", r.code, r.stdout)
	}
	// A problem answer names its detail.
	fake.problem = true
	r = runCLI(t, "", "regrade", "--server", srv.URL, "--contract", "flights@9")
	if r.code != exitError || r.stderr != "toolscore: POST "+srv.URL+"/v1/regrades: 404 contract flights@9 does not exist: not found\n" {
		t.Errorf("unknown contract = %d %q", r.code, r.stderr)
	}
}

// TestRegradeJSONLines: regrade reads what eval --json writes for many
// traces (one result per line, an ungraded trace's line holding its
// error), for one trace (an indented document), and such documents one
// after another; each result of a file of many is named FILE:LINE.
func TestRegradeJSONLines(t *testing.T) {
	inTempDir(t)
	gold := put(t, "gold.json", `[{"tool": "a"}, {"tool": "b"}]`)
	gold2 := put(t, "gold2.json", `[{"tool": "a"}]`)
	traces := put(t, "traces.jsonl", "[{\"tool\": \"a\"}, {\"tool\": \"b\"}]\n\n[{\"tool\": \"a\"}]\n{\"calls\": [}\n")
	r := runBatchCLI(t, "", "eval", "--each-line", "--json", gold, traces)
	if r.code != exitError || strings.Count(r.stdout, "\n") != 3 {
		t.Fatalf("eval --each-line --json = %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	lines := put(t, "results.jsonl", r.stdout)
	const skipped = "toolscore: results.jsonl:3: skipped, eval could not grade the trace: traces.jsonl:4: column 12: invalid character '}' looking for beginning of value (at /calls/0)\n"

	r = runCLI(t, "", "regrade", "--contract", gold2, lines)
	if r.code != exitFail || r.stderr != skipped {
		t.Errorf("regrade results.jsonl = %d, stderr %q, want %d %q", r.code, r.stderr, exitFail, skipped)
	}
	compareGoldenAt(t, "regrade_lines", r.stdout)

	r = runCLI(t, "", "regrade", "--json", "--contract", gold2, lines)
	var got struct {
		Results []regradeFileView `json:"results"`
		Summary regradeSummary    `json:"summary"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != exitFail || r.stderr != skipped {
		t.Fatalf("regrade --json = %d, %v:\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	type row struct{ File, Source, Change string }
	var rows []row
	for _, res := range got.Results {
		rows = append(rows, row{res.File, res.Source, res.Change})
	}
	if diff := cmp.Diff([]row{{"results.jsonl:1", "traces.jsonl:1", "pass_to_fail"}, {"results.jsonl:2", "traces.jsonl:3", ""}}, rows); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(regradeSummary{Results: 2, Skipped: 1, PassToFail: 1, Unchanged: 1, MeanScoreDelta: got.Summary.MeanScoreDelta}, got.Summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if d := got.Summary.MeanScoreDelta; fmtScore(d) != "-0.125" {
		t.Errorf("mean score delta = %v, want -0.125", d)
	}

	// One trace's indented result, alone and twice over in one file.
	one := evalJSON(t, "one.json", gold, put(t, "t.json", `[{"tool": "a"}, {"tool": "b"}]`))
	n := strings.Count(string(mustRead(t, one)), "\n")
	two := put(t, "two.json", string(mustRead(t, one))+string(mustRead(t, one)))
	r = runCLI(t, "", "regrade", "--json", "--contract", gold2, one, two)
	got.Results = nil
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != exitFail || r.stderr != "" {
		t.Fatalf("regrade one.json two.json = %d, %v:\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	rows = nil
	for _, res := range got.Results {
		rows = append(rows, row{res.File, res.Source, res.Change})
	}
	want := []row{{"one.json", "", "pass_to_fail"}, {"two.json:1", "", "pass_to_fail"}, {fmt.Sprintf("two.json:%d", n+1), "", "pass_to_fail"}}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

// TestRegradeResultFileErrors: a result file regrade cannot read is an
// error naming the file and the line:column (and the place inside the
// result); in a JSON Lines file a line that is not a saved result is
// counted, named at the end, and the others are regraded (exit 2).
func TestRegradeResultFileErrors(t *testing.T) {
	inTempDir(t)
	gold := put(t, "gold.json", `[{"tool": "a"}]`)
	good := `{"score": 1, "passed": true, "grade": "A", "trace_calls": [{"tool": "a", "args": {}}]}`
	const of2 = "toolscore: 1 of 2 results could not be regraded\n"
	for _, tc := range []struct{ name, content, want string }{
		{"broken line", good + "\n{\"score\": 1, \"trace_calls\": [}\n", "toolscore: r.jsonl: line 2:30: /trace_calls/0: invalid character '}' looking for beginning of value\n" + of2},
		{"junk line", good + "\nnot json\n", "toolscore: r.jsonl: line 2:2: invalid character 'o' in literal null (expecting 'u')\n" + of2},
		{"not a result", good + "\n{\"calls\": []}\n", "toolscore: r.jsonl: line 2:1: not an evaluation result (no trace_calls, score or passed); write one with toolscore eval --json\n" + of2},
		{"bad calls", good + "\n" + `{"score": 1, "passed": true, "grade": "A", "trace_calls": [{"args": {}}]}` + "\n", "toolscore: r.jsonl: line 2:60: /trace_calls/0: no \"tool\": a stored call names its tool (\"\" for none)\n" + of2},
		{"call of another shape", good + "\n" + `{"score": 1, "passed": true, "grade": "A", "trace_calls": [{"tool": 5}]}` + "\n", "toolscore: r.jsonl: line 2:69: /trace_calls/0/tool: must be a string, got number\n" + of2},
		{"score a string", good + "\n" + `{"score": "x", "passed": true, "trace_calls": []}` + "\n", "toolscore: r.jsonl: line 2:11: /score: must be a number, got string\n" + of2},
		{"array", "[" + good + "]\n", "toolscore: r.jsonl: line 1:1: a JSON array, not a saved result: write the results one per line, as toolscore eval --json does\n"},
		{"only errors", `{"format_version":1,"source":"t.jsonl:1","error":"file is empty"}` + "\n",
			"toolscore: r.jsonl: skipped, eval could not grade the trace: t.jsonl:1: file is empty\ntoolscore: nothing to regrade: the only saved result is of a trace eval could not grade\n"},
		{"only errors, two", strings.Repeat(`{"format_version":1,"error":"file is empty"}`+"\n", 2),
			"toolscore: r.jsonl:1: skipped, eval could not grade the trace: file is empty\ntoolscore: r.jsonl:2: skipped, eval could not grade the trace: file is empty\ntoolscore: nothing to regrade: all 2 saved results are of traces eval could not grade\n"},
		{"empty", "\n\n", "toolscore: r.jsonl: file is empty\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, "", "regrade", "--contract", gold, put(t, "r.jsonl", tc.content))
			if r.code != exitError || r.stderr != tc.want {
				t.Errorf("regrade = %d %q, want %d %q", r.code, r.stderr, exitError, tc.want)
			}
		})
	}
}

// TestRegradeSavedErrors: regrade reads a saved result as eval
// --baseline does, with the same errors: a format_version it does not
// read is refused, a member of the wrong type is placed by line:column
// and pointer, and a trace given for a result says so.
func TestRegradeSavedErrors(t *testing.T) {
	inTempDir(t)
	gold := put(t, "gold.json", `[{"tool": "a"}]`)
	const newer = "format_version 99 was written by a newer toolscore (this one reads up to 1): upgrade toolscore"
	const trace = "line 1:1: a trace, not a saved result: grade it with toolscore eval --json, whose output this reads"
	for _, tc := range []struct{ name, content, want, baseline string }{
		{"newer", "{\n  \"format_version\": 99,\n  \"score\": 1\n}\n", "line 2:21: " + newer, "line 2:21: " + newer},
		{"version a string", `{"format_version": "1", "score": 1, "passed": true, "trace_calls": []}`, `line 1:20: format_version "1" is not a version number`, `line 1:20: format_version "1" is not a version number`},
		{"score a string", "{\n  \"format_version\": 1,\n  \"score\": \"x\",\n  \"passed\": true\n}\n", "line 3:12: /score: must be a number, got string", "line 3:12: /score: must be a number, got string"},
		{"calls a string", `{"score": 1, "passed": true, "trace_calls": "x"}`, "line 1:45: /trace_calls: must be an array, got string", "line 1:45: /trace_calls: must be an array, got string"},
		{"nested", `{"score": 1, "passed": true, "grade": "A", "issues": [{"tool": 7}], "trace_calls": []}`, "line 1:64: /issues/0/tool: must be a string, got number", "line 1:64: /issues/0/tool: must be a string, got number"},
		{"syntax", "{\n  \"score\": 1,\n  \"grade\": x\n}\n", "line 3:12: /grade: invalid character 'x' looking for beginning of value", "line 3:12: /grade: invalid character 'x' looking for beginning of value"},
		{"trace lines", `{"role": "user", "content": "hi"}` + "\n{\"role\": \"assistant\", \"content\": [}\n", trace, trace},
		{"trace document", "[\n  {\"role\": \"user\", \"content\": \"hi\"}\n]\n", trace, trace},
		{"event stream", "data: {\"type\": \"message_start\"}\n\ndata: {\"type\": \"message_stop\"}\n", "line 1:1: a trace (an event stream), not a saved result: grade it with toolscore eval --json, whose output this reads", "line 1:1: a trace (an event stream), not a saved result: grade it with toolscore eval --json, whose output this reads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := put(t, "r.json", tc.content)
			r := runCLI(t, "", "regrade", "--contract", gold, file)
			if want := "toolscore: r.json: " + tc.want + "\n"; r.code != exitError || r.stderr != want {
				t.Errorf("regrade = %d %q, want %d %q", r.code, r.stderr, exitError, want)
			}
			r = runCLI(t, "", "eval", "--baseline", file, gold, put(t, "t.json", `[{"tool": "a"}]`))
			if want := "toolscore: --baseline: r.json: " + tc.baseline + "\n"; r.code != exitError || r.stderr != want {
				t.Errorf("eval --baseline = %d %q, want %d %q", r.code, r.stderr, exitError, want)
			}
		})
	}
}

// TestRegradeMixedLines: a JSON Lines file with a line that is not a
// result regrades the others; the line is a --json row with "change":
// "error", its place and what is wrong, no verdicts, counted in
// summary.failed, and the exit status is 2.
func TestRegradeMixedLines(t *testing.T) {
	inTempDir(t)
	gold := put(t, "gold.json", `[{"tool": "a"}]`)
	good := `{"score": 0.5, "passed": false, "grade": "F", "trace_calls": [{"tool": "a", "args": {}}]}`
	mix := put(t, "mix.jsonl", good+"\n"+good+"\n{bad}\n"+good+"\n")
	r := runCLI(t, "", "regrade", "--json", "--contract", gold, mix)
	const stderr = "toolscore: mix.jsonl: line 3:2: invalid character 'b' looking for beginning of object key string\ntoolscore: 1 of 4 results could not be regraded\n"
	if r.code != exitError || r.stderr != stderr {
		t.Errorf("regrade --json = %d %q, want %d %q", r.code, r.stderr, exitError, stderr)
	}
	var got struct {
		Results []json.RawMessage `json:"results"`
		Summary regradeSummary    `json:"summary"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got.Results) != 4 {
		t.Fatalf("%v:\n%s", err, r.stdout)
	}
	const row = `{"file":"mix.jsonl:3","old":null,"new":null,"change":"error","error":"line 3:2: invalid character 'b' looking for beginning of object key string"}`
	var compact bytes.Buffer
	if err := json.Compact(&compact, got.Results[2]); err != nil || compact.String() != row {
		t.Errorf("row 3 = %s, want %s", compact.String(), row)
	}
	if want := (regradeSummary{Results: 3, Failed: 1, FailToPass: 3, MeanScoreDelta: got.Summary.MeanScoreDelta}); got.Summary != want {
		t.Errorf("summary %+v, want %+v", got.Summary, want)
	}
	r = runCLI(t, "", "regrade", "--contract", gold, mix)
	if r.code != exitError || r.stderr != stderr || !strings.Contains(r.stdout, "Regrade: 3 results against gold.json") || !strings.Contains(r.stdout, "(1 could not be regraded)") {
		t.Errorf("regrade = %d %q:\n%s", r.code, r.stderr, r.stdout)
	}
}

// TestRegradeSkippedSummary: the text summary counts the skipped results
// in words that agree with their number.
func TestRegradeSkippedSummary(t *testing.T) {
	inTempDir(t)
	gold := put(t, "gold.json", `[{"tool": "a"}]`)
	good := `{"score": 0.5, "passed": false, "grade": "F", "trace_calls": [{"tool": "a", "args": {}}]}` + "\n"
	bad := `{"format_version":1,"error":"file is empty"}` + "\n"
	for _, tc := range []struct {
		name, content, want string
	}{
		{"one", good + bad, "Summary: 0 pass→fail, 1 fail→pass, 0 grade changed, 0 unchanged (1 skipped: eval could not grade it); mean score delta +0.500\n"},
		{"two", good + bad + bad, "Summary: 0 pass→fail, 1 fail→pass, 0 grade changed, 0 unchanged (2 skipped: eval could not grade them); mean score delta +0.500\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, "", "regrade", "--contract", gold, put(t, "r.jsonl", tc.content))
			_, last, _ := strings.Cut(r.stdout, "\n\n")
			if r.code != exitOK || last != tc.want {
				t.Errorf("regrade = %d, summary %q, want %d %q", r.code, last, exitOK, tc.want)
			}
		})
	}
}

// TestRegradeZeroDelta: regrading a result whose score moves by a
// float's rounding (1 stored, 0.9999999999999999 now) reports a mean
// score delta of +0.000.
func TestRegradeZeroDelta(t *testing.T) {
	inTempDir(t)
	gold := put(t, "gold.json", `[{"tool": "a"}]`)
	res := put(t, "r.json", `{"score": 1, "passed": true, "grade": "A", "trace_calls": [{"tool": "a", "args": {}}]}`)
	r := runCLI(t, "", "regrade", "--contract", gold, res)
	const want = "Summary: 0 pass→fail, 0 fail→pass, 0 grade changed, 1 unchanged; mean score delta +0.000\n"
	if _, last, _ := strings.Cut(r.stdout, "\n\n"); r.code != exitOK || last != want {
		t.Errorf("regrade = %d, summary %q, want %d %q", r.code, last, exitOK, want)
	}
}
