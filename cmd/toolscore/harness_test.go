package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// harnessSuite is a suite of three tasks graded by gold files: the test
// agent passes "a" and "b" unless told otherwise.
const harnessSuite = `{"name": "cli", "tasks": [
  {"id": "a", "input": "look up a", "gold": [{"tool": "lookup", "args": {"id": "a"}}]},
  {"id": "b", "input": "look up b", "gold": [{"tool": "lookup", "args": {"id": "b"}}]},
  {"id": "c", "input": "look up c", "contract": {"contract_version": 2, "required": [{"tool": "lookup", "args": {"id": "c"}}], "forbidden": [{"tool": "drop"}]}}
]}`

// testAgent answers each task with a plain trace: lookup(id) for the
// task ids in good, a 500 for ids in down, and a forbidden call
// otherwise.
func testAgent(t *testing.T, good, down string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			TaskID string `json:"task_id"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		switch {
		case strings.Contains(good, req.TaskID):
			fmt.Fprintf(w, `[{"tool":"lookup","args":{"id":%q}}]`, req.TaskID)
		case strings.Contains(down, req.TaskID):
			http.Error(w, "down", http.StatusInternalServerError)
		default:
			fmt.Fprintf(w, `[{"tool":"lookup","args":{"id":%q}},{"tool":"drop","args":{}}]`, req.TaskID)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestHarnessExitCodes(t *testing.T) {
	suite := writeFile(t, "suite.json", harnessSuite)
	tests := []struct {
		name       string
		good, down string
		wantCode   int
		wantOut    []string
	}{
		{"all pass", "abc", "", exitOK, []string{"3/3 passed (100.0%), 0 failed, 0 errors; mean score 100.0%; grades A 3"}},
		{"forbidden call fails", "ab", "", exitFail, []string{
			"2/3 passed (66.7%), 1 failed, 0 errors",
			"Failing tasks\n  c  FAIL   drop: `drop` is forbidden",
		}},
		{"agent error", "ac", "b", exitFail, []string{
			"2/3 passed (66.7%), 0 failed, 1 error;",
			"  b  ERROR  agent answered 500 Internal Server Error: down (after 2 attempts)",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := testAgent(t, tc.good, tc.down)
			r := runCLI(t, "", "harness", suite, "--agent-url", url, "--retries", "1", "--timeout", "5s")
			if r.code != tc.wantCode {
				t.Errorf("exit = %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.wantCode, r.stdout, r.stderr)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, r.stdout)
				}
			}
			if r.stderr != "" {
				t.Errorf("stderr = %q, want nothing (no progress bar off a terminal)", r.stderr)
			}
		})
	}
}

// engineMessage matches the engine's own wording of a regex problem.
var engineMessage = regexp.MustCompile(`(/\$regex: ).*`)

func TestHarnessUsageAndSuiteErrors(t *testing.T) {
	good := writeFile(t, "suite.json", harnessSuite)
	bad := writeFile(t, "bad.json", `{"name": "x", "tasks": [
  {"id": "a", "input": "hi", "gold": []},
  {"id": "a", "input": "hi", "contract": {"contract_version": 2, "required": [{"tool": "t", "args": {"x": {"$regex": "("}}}]}}
]}`)
	ref := writeFile(t, "ref.yaml", "name: x\ntasks:\n  - id: a\n    input: hi\n    contract_ref: flights@2\n")
	badYAML := writeFile(t, "bad.yaml", "name: x\ntasks:\n  - id: a\n   input: hi\n")
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"no agent", []string{good}, "toolscore: harness needs one of --agent-url URL, --agent-cmd CMD and --traces DIR\n"},
		{"two agents", []string{good, "--agent-url", "http://x/", "--traces", "."}, "toolscore: harness takes only one of --agent-url, --agent-cmd and --traces\n"},
		{"bad concurrency", []string{good, "--traces", ".", "--concurrency", "0"}, "toolscore: --concurrency: must be from 1 to 1024, got 0\n"},
		{"bad timeout", []string{good, "--traces", ".", "--timeout", "-1s"}, "toolscore: --timeout: must be positive, got -1s\n"},
		{"one file for two reports", []string{good, "--traces", ".", "--junit", "r.out", "--html", "./r.out"},
			"toolscore: --junit and --html name the same file \"./r.out\": each report needs its own file\n"},
		{"bad url", []string{good, "--agent-url", "localhost:8089"}, "toolscore: --agent-url: agent url: \"localhost:8089\" is not an http:// or https:// URL\n"},
		{"bad server", []string{good, "--traces", ".", "--server", "db:5432"}, "toolscore: --server: server url: \"db:5432\" is not an http:// or https:// URL\n"},
		{"missing traces dir", []string{good, "--traces", filepath.Join(t.TempDir(), "nope")}, ""},
		{"missing suite", []string{filepath.Join(t.TempDir(), "none.json"), "--traces", "."}, ""},
		{"located suite errors", []string{bad, "--agent-url", "http://127.0.0.1:1/"},
			// The engine words the regex problem; the harness places it.
			"toolscore: " + bad + ": /tasks/1/contract/required/0/args/x/$regex: ...\n" +
				"toolscore: " + bad + ": /tasks/1/id: duplicate task id \"a\" (first used at /tasks/0)\n"},
		{"registry contract without server", []string{ref, "--agent-url", "http://127.0.0.1:1/"},
			"toolscore: " + ref + ": /tasks/0/contract_ref: contract \"flights@2\" is in a registry: it needs a toolscore service (--server URL)\n"},
		{"bad yaml", []string{badYAML, "--traces", "."}, "toolscore: " + badYAML + ": yaml: line 3: did not find expected '-' indicator\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, "", append([]string{"harness"}, tc.args...)...)
			if r.code != exitError {
				t.Errorf("exit = %d, want 2\nstderr: %s", r.code, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
			switch tc.name {
			case "missing traces dir":
				// The OS words the error; the flag must be named.
				if !strings.HasPrefix(r.stderr, "toolscore: --traces: traces directory: ") {
					t.Errorf("stderr = %q", r.stderr)
				}
			case "missing suite":
				if !strings.HasPrefix(r.stderr, "toolscore: "+tc.args[0]+": ") {
					t.Errorf("stderr = %q", r.stderr)
				}
			default:
				got := engineMessage.ReplaceAllString(r.stderr, "$1...")
				if got != tc.wantStderr {
					t.Errorf("stderr:\n%s\nwant:\n%s", got, tc.wantStderr)
				}
			}
		})
	}
}

// TestHarnessReports checks --json on stdout and the --junit and
// --markdown files of one run over recorded traces.
func TestHarnessReports(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"a.json":  `[{"tool":"lookup","args":{"id":"a"}}]`,
		"b.jsonl": `{"tool":"lookup","args":{"id":"wrong"}}` + "\n",
		// c has no recorded trace.
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	suite := writeFile(t, "suite.json", harnessSuite)
	junit, md := filepath.Join(dir, "report.xml"), filepath.Join(dir, "report.md")
	r := runCLI(t, "", "harness", suite, "--traces", dir, "--json", "--junit", junit, "--markdown", md, "--run-id", "run-42")
	if r.code != exitFail {
		t.Fatalf("exit = %d, want 1\nstderr: %s", r.code, r.stderr)
	}
	var rep struct {
		Suite string `json:"suite"`
		RunID string `json:"run_id"`
		Tasks []struct {
			ID      string `json:"id"`
			Outcome string `json:"outcome"`
		} `json:"tasks"`
		Summary struct {
			Passed, Failed, Errors int
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, r.stdout)
	}
	got := fmt.Sprintf("%s %s %v %+v", rep.Suite, rep.RunID, rep.Tasks, rep.Summary)
	want := "cli run-42 [{a pass} {b fail} {c error}] {Passed:1 Failed:1 Errors:1}"
	if got != want {
		t.Errorf("--json report = %s, want %s", got, want)
	}

	f, err := os.Open(junit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var doc struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Errors   int `xml:"errors,attr"`
			Cases    []struct {
				Name string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.NewDecoder(f).Decode(&doc); err != nil {
		t.Fatalf("--junit file does not parse: %v", err)
	}
	s := doc.Suites[0]
	if s.Tests != 3 || s.Failures != 1 || s.Errors != 1 || len(s.Cases) != 3 || s.Cases[2].Name != "c" {
		t.Errorf("JUnit = %+v", doc)
	}
	mdText, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	wantMD := "| 3 | `c` | ERROR | - | - |"
	if !strings.Contains(string(mdText), "## toolscore harness: cli") || !strings.Contains(string(mdText), wantMD) {
		t.Errorf("--markdown file lacks the heading or %q:\n%s", wantMD, mdText)
	}
}

// TestHarnessCommandAgent runs an --agent-cmd agent: the task arrives as
// JSON on stdin.
func TestHarnessCommandAgent(t *testing.T) {
	suite := writeFile(t, "suite.json", harnessSuite)
	// The shell agent reads the task id from its stdin.
	agent := `id=$(sed 's/.*"task_id":"\([^"]*\)".*/\1/'); printf '[{"tool":"lookup","args":{"id":"%s"}}]' "$id"`
	r := runCLI(t, "", "harness", suite, "--agent-cmd", agent, "--concurrency", "3")
	if r.code != exitOK {
		t.Fatalf("exit = %d, want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestHarnessServer checks --server: every result is graded and stored by
// the service under one run_id.
func TestHarnessServer(t *testing.T) {
	var mu sync.Mutex
	var runIDs, taskIDs []string
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			TaskID string `json:"task_id"`
			RunID  string `json:"run_id"`
			Agent  string `json:"agent"`
		}
		_ = json.Unmarshal(body, &req)
		mu.Lock()
		runIDs = append(runIDs, req.RunID+" "+req.Agent)
		taskIDs = append(taskIDs, req.TaskID)
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"id":"ev-%s","score":1,"grade":"A","passed":true,"min_score":0.9}`, req.TaskID)
	}))
	defer svc.Close()
	suite := writeFile(t, "suite.yaml", "name: x\ntasks:\n  - id: a\n    input: hi\n    contract_ref: flights@latest\n  - id: b\n    input: hi\n    gold: [{tool: lookup}]\n")
	r := runCLI(t, "", "harness", suite, "--agent-url", testAgent(t, "ab", ""), "--server", svc.URL, "--run-id", "r-7", "--agent-name", "bot", "--concurrency", "1")
	if r.code != exitOK {
		t.Fatalf("exit = %d, want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"r-7 bot", "r-7 bot"}, runIDs); diff != "" {
		t.Errorf("run ids (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b"}, taskIDs); diff != "" {
		t.Errorf("task ids (-want +got):\n%s", diff)
	}
	if want := "2 of 2 results stored in " + svc.URL + " under run_id r-7\n"; !strings.HasSuffix(r.stdout, want) {
		t.Errorf("stdout does not end with %q:\n%s", want, r.stdout)
	}
}

func TestDoctorSuite(t *testing.T) {
	r := runCLI(t, "", "doctor", "--suite", filepath.Join("..", "..", "examples", "harness", "suite.json"))
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("exit = %d, stderr = %q", r.code, r.stderr)
	}
	compareGolden(t, "doctor_suite", r.stdout)

	bad := writeFile(t, "bad.json", `{"name": "x", "tasks": [{"id": "a", "input": "hi", "contract": {"contract_version": 2, "required": []}, "gold": []}]}`)
	r = runCLI(t, "", "doctor", "--suite", bad)
	want := "toolscore: " + bad + ": /tasks/0: a task takes exactly one of contract, gold or contract_ref, not contract and gold\n"
	if r.code != exitError || r.stderr != want {
		t.Errorf("doctor --suite bad: exit %d, stderr:\n%s\nwant:\n%s", r.code, r.stderr, want)
	}
	r = runCLI(t, "", "doctor", "--suite", bad, "--contract", bad)
	if r.code != exitError || r.stderr != "toolscore: doctor checks one of --contract and --suite at a time\n" {
		t.Errorf("doctor with both: exit %d, stderr %q", r.code, r.stderr)
	}
}
