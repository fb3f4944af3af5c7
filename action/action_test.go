// Package action_test runs the composite GitHub Action of ../action.yml
// the way a runner does: the step's inputs and expressions substituted,
// GITHUB_* variables set, each run step written to a file and run with
// bash --noprofile --norc -eo pipefail, then the job summary, the step's
// outputs and the exit status checked. The setup-go step is the one step
// not run: the Go toolchain that runs this test builds toolscore.
package action_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// actionFile is action.yml's shape, as far as a composite action uses it.
type actionFile struct {
	Inputs map[string]struct {
		Default  string `json:"default"`
		Required bool   `json:"required"`
	} `json:"inputs"`
	Outputs map[string]struct {
		Value string `json:"value"`
	} `json:"outputs"`
	Runs struct {
		Using string `json:"using"`
		Steps []struct {
			ID               string            `json:"id"`
			Name             string            `json:"name"`
			Uses             string            `json:"uses"`
			Shell            string            `json:"shell"`
			Run              string            `json:"run"`
			Env              map[string]string `json:"env"`
			WorkingDirectory string            `json:"working-directory"`
			With             map[string]string `json:"with"`
			If               string            `json:"if"`
		} `json:"steps"`
	} `json:"runs"`
}

// runner is one emulated job: a workspace, a temp directory, the files a
// runner gives the steps.
type runner struct {
	t         *testing.T
	root      string // the action's checkout (the repository)
	workspace string
	temp      string
	summary   string
	output    string
	action    actionFile
}

func newRunner(t *testing.T) *runner {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{t: t, root: root, workspace: t.TempDir(), temp: t.TempDir()}
	if err := yaml.Unmarshal(data, &r.action); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if r.action.Runs.Using != "composite" {
		t.Fatalf("action.yml runs.using = %q, want composite", r.action.Runs.Using)
	}
	r.summary = filepath.Join(r.temp, "step_summary.md")
	r.output = filepath.Join(r.temp, "github_output")
	for _, f := range []string{r.summary, r.output} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// copy copies a repository file into the workspace under name.
func (r *runner) copy(from, name string) {
	r.t.Helper()
	data, err := os.ReadFile(filepath.Join(r.root, from))
	if err != nil {
		r.t.Fatal(err)
	}
	r.write(name, string(data))
}

// write writes a workspace file.
func (r *runner) write(name, content string) {
	r.t.Helper()
	p := filepath.Join(r.workspace, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

var expression = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// expand substitutes the expressions a runner would: inputs.NAME (the
// given value, else the default), github.action_path and runner.temp.
// Any other expression fails the test, so the emulation stays honest.
func (r *runner) expand(s string, inputs map[string]string) string {
	return expression.ReplaceAllStringFunc(s, func(m string) string {
		e := expression.FindStringSubmatch(m)[1]
		switch {
		case strings.HasPrefix(e, "inputs."):
			name := strings.TrimPrefix(e, "inputs.")
			in, ok := r.action.Inputs[name]
			if !ok {
				r.t.Fatalf("action.yml uses undeclared input %q", name)
			}
			if v, ok := inputs[name]; ok {
				return v
			}
			return in.Default
		case e == "github.action_path":
			return r.root
		case e == "runner.temp":
			return r.temp
		}
		r.t.Fatalf("action.yml has an expression the test does not emulate: %s", m)
		return ""
	})
}

// run runs the action's steps with inputs and returns the last step's
// exit status and output.
func (r *runner) run(inputs map[string]string) (int, string) {
	r.t.Helper()
	for k := range inputs {
		if _, ok := r.action.Inputs[k]; !ok {
			r.t.Fatalf("no input %q in action.yml", k)
		}
	}
	base := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"GOCACHE=" + goEnv(r.t, "GOCACHE"), "GOMODCACHE=" + goEnv(r.t, "GOMODCACHE"), "GOFLAGS=" + os.Getenv("GOFLAGS"),
		"GOTOOLCHAIN=local",
		"CI=true", "GITHUB_ACTIONS=true", "RUNNER_OS=Linux", "RUNNER_TEMP=" + r.temp,
		"GITHUB_WORKSPACE=" + r.workspace, "GITHUB_ACTION_PATH=" + r.root,
		"GITHUB_STEP_SUMMARY=" + r.summary, "GITHUB_OUTPUT=" + r.output,
		"GITHUB_ENV=" + filepath.Join(r.temp, "github_env"), "GITHUB_PATH=" + filepath.Join(r.temp, "github_path"),
		"GITHUB_REPOSITORY=acme/agent", "GITHUB_SHA=0000000000000000000000000000000000000000",
		"GITHUB_EVENT_NAME=pull_request", "GITHUB_RUN_ID=1", "GITHUB_JOB=grade",
	}
	// Each run is a new step: its own summary and outputs.
	for _, f := range []string{r.summary, r.output} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	var out bytes.Buffer
	code := 0
	for i, st := range r.action.Runs.Steps {
		switch {
		case st.If != "":
			r.t.Fatalf("step %q has an if: the test does not emulate conditions", st.Name)
		case st.Uses != "":
			if !strings.HasPrefix(st.Uses, "actions/setup-go@") {
				r.t.Fatalf("step %q uses %s: the test emulates only actions/setup-go", st.Name, st.Uses)
			}
			continue // the Go that runs this test is on PATH
		case st.Shell != "bash":
			r.t.Fatalf("step %q: shell %q, want bash", st.Name, st.Shell)
		}
		script := filepath.Join(r.temp, fmt.Sprintf("step-%d.sh", i))
		if err := os.WriteFile(script, []byte(r.expand(st.Run, inputs)), 0o644); err != nil {
			r.t.Fatal(err)
		}
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
		cmd.Dir = r.workspace
		if st.WorkingDirectory != "" {
			cmd.Dir = r.expand(st.WorkingDirectory, inputs)
		}
		cmd.Env = append([]string(nil), base...)
		for k, v := range st.Env {
			cmd.Env = append(cmd.Env, k+"="+r.expand(v, inputs))
		}
		out.Reset()
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code = cmd.ProcessState.ExitCode()
		if err != nil && code < 0 {
			r.t.Fatalf("step %q: %v", st.Name, err)
		}
		if code != 0 {
			break // a failed step ends the job
		}
	}
	return code, out.String()
}

// outputs reads the step outputs the action exposes.
func (r *runner) outputs() map[string]string {
	r.t.Helper()
	data, err := os.ReadFile(r.output)
	if err != nil {
		r.t.Fatal(err)
	}
	step := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			step[k] = v
		}
	}
	got := map[string]string{}
	for name, o := range r.action.Outputs {
		m := regexp.MustCompile(`^\$\{\{ steps\.grade\.outputs\.([a-z-]+) \}\}$`).FindStringSubmatch(o.Value)
		if m == nil {
			r.t.Fatalf("output %s = %q, want ${{ steps.grade.outputs.NAME }}", name, o.Value)
		}
		got[name] = step[m[1]]
	}
	return got
}

func (r *runner) read(name string) string {
	r.t.Helper()
	data, err := os.ReadFile(filepath.Join(r.workspace, name))
	if err != nil {
		r.t.Fatal(err)
	}
	return string(data)
}

// stepSummary is what the last run appended to $GITHUB_STEP_SUMMARY.
func (r *runner) stepSummary() string {
	r.t.Helper()
	data, err := os.ReadFile(r.summary)
	if err != nil {
		r.t.Fatal(err)
	}
	return string(data)
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// TestActionEval runs the action on the flight example: PASS, then a FAIL
// against the gold file, then the unsafe trace against the first run's
// results as the baseline (a regression), then a broken input (an error).
func TestActionEval(t *testing.T) {
	r := newRunner(t)
	r.copy("examples/contracts/contract.json", "agent/contract.json")
	r.copy("examples/contracts/gold.json", "agent/gold.json")
	r.copy("examples/contracts/trace.json", "runs/trace.json")
	r.copy("cmd/toolscore/testdata/unsafe-trace.json", "runs/unsafe.json")

	code, log := r.run(map[string]string{"expectation": "agent/contract.json", "traces": "runs/trace.json"})
	if code != 0 {
		t.Fatalf("PASS run: exit %d\n%s", code, log)
	}
	summary := r.stepSummary()
	if !strings.HasPrefix(summary, "## toolscore: PASS, grade A (96.7%)\n\n`runs/trace.json` (openai, 3 calls) against `agent/contract.json` (contract v2): score 0.967, min score 0.9.\n") {
		t.Errorf("job summary:\n%s", summary)
	}
	if want := map[string]string{"verdict": "pass", "exit-code": "0", "results": "toolscore-results.json"}; fmt.Sprint(r.outputs()) != fmt.Sprint(want) {
		t.Errorf("outputs %v, want %v", r.outputs(), want)
	}
	var saved struct {
		FormatVersion int    `json:"format_version"`
		Grade         string `json:"grade"`
	}
	if err := json.Unmarshal([]byte(r.read("toolscore-results.json")), &saved); err != nil || saved.FormatVersion != 1 || saved.Grade != "A" {
		t.Errorf("results file: %+v, %v", saved, err)
	}
	if html := r.read("toolscore-report.html"); !strings.HasPrefix(html, "<!DOCTYPE html>") {
		t.Errorf("HTML report starts %.40q", html)
	}
	if err := os.Rename(filepath.Join(r.workspace, "toolscore-results.json"), filepath.Join(r.workspace, "baseline.json")); err != nil {
		t.Fatal(err)
	}

	code, log = r.run(map[string]string{"expectation": "agent/gold.json", "traces": "runs/trace.json", "results": "gold-results.json"})
	if code != 1 || !strings.Contains(log, "::error title=toolscore::FAIL (see the job summary)") {
		t.Errorf("FAIL run: exit %d\n%s", code, log)
	}
	if got := r.outputs()["verdict"]; got != "fail" {
		t.Errorf("verdict output %q, want fail", got)
	}

	code, log = r.run(map[string]string{"expectation": "agent/contract.json", "traces": "runs/unsafe.json", "baseline": "baseline.json"})
	if code != 1 || !strings.Contains(log, "::error title=toolscore::a regression against the baseline baseline.json") {
		t.Errorf("regression run: exit %d\n%s", code, log)
	}
	summary = r.stepSummary()
	if !strings.Contains(summary, "### Compared with the baseline `baseline.json`\n\n**Regression:** score dropped by 0.179") {
		t.Errorf("job summary lacks the regression:\n%s", summary)
	}
	// The same trace as the baseline: no regression, exit 0.
	code, log = r.run(map[string]string{"expectation": "agent/contract.json", "traces": "runs/trace.json", "baseline": "baseline.json"})
	if code != 0 {
		t.Errorf("baseline run without regression: exit %d\n%s", code, log)
	}

	code, log = r.run(map[string]string{"expectation": "agent/missing.json", "traces": "runs/trace.json"})
	if code != 2 || !strings.Contains(log, "::error title=toolscore::toolscore: agent/missing.json: no such file or directory") {
		t.Errorf("error run: exit %d\n%s", code, log)
	}
	summary = r.stepSummary()
	if !strings.HasSuffix(summary, "## toolscore: error\n\n```\ntoolscore: agent/missing.json: no such file or directory\n```\n") {
		t.Errorf("job summary of the error:\n%s", summary)
	}
	if got := r.outputs()["verdict"]; got != "error" {
		t.Errorf("verdict output %q, want error", got)
	}
}

// TestActionManyTraces runs the action over a directory and a JSON Lines
// file of traces.
func TestActionManyTraces(t *testing.T) {
	r := newRunner(t)
	r.copy("examples/contracts/contract.json", "contract.json")
	r.copy("examples/contracts/trace.json", "runs/a.json")
	r.copy("examples/contracts/trace.json", "runs/b.json")
	code, log := r.run(map[string]string{"expectation": "contract.json", "traces": "runs\n"})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, log)
	}
	summary := r.stepSummary()
	if !strings.HasPrefix(summary, "## toolscore: PASS, 2/2 traces passed\n") {
		t.Errorf("job summary:\n%s", summary)
	}
	if lines := strings.Count(r.read("toolscore-results.json"), "\n"); lines != 2 {
		t.Errorf("%d result lines, want 2", lines)
	}
}

// TestActionHarness runs the action in harness mode over recorded traces,
// and checks the inputs it refuses.
func TestActionHarness(t *testing.T) {
	r := newRunner(t)
	r.write("suite.json", `{"name": "ci", "tasks": [
  {"id": "a", "input": "look up a", "gold": [{"tool": "lookup", "args": {"id": "a"}}]},
  {"id": "b", "input": "look up b", "gold": [{"tool": "lookup", "args": {"id": "b"}}]}
]}`)
	r.write("recorded/a.json", `[{"tool":"lookup","args":{"id":"a"}}]`)
	r.write("recorded/b.json", `[{"tool":"lookup","args":{"id":"wrong"}}]`)
	code, log := r.run(map[string]string{"suite": "suite.json", "recorded-traces": "recorded"})
	if code != 1 {
		t.Errorf("exit %d, want 1\n%s", code, log)
	}
	summary := r.stepSummary()
	if !strings.HasPrefix(summary, "## toolscore harness: ci\n\n1/2 passed (50.0%), 1 failed, 0 errors") {
		t.Errorf("job summary:\n%s", summary)
	}
	code, log = r.run(map[string]string{"suite": "suite.json"})
	if code != 2 || !strings.Contains(log, "the suite input needs exactly one of agent-command, agent-url and recorded-traces") {
		t.Errorf("suite without an agent: exit %d\n%s", code, log)
	}
	code, log = r.run(map[string]string{})
	if code != 2 || !strings.Contains(log, "give the expectation and traces inputs (eval), or suite (harness)") {
		t.Errorf("no inputs: exit %d\n%s", code, log)
	}
}

// TestActionOddInputs runs the action on paths with spaces (one per line)
// and on errors whose text holds what a runner or Markdown would read as
// markup: the log has no workflow command but the action's own, the
// annotation's text is escaped, and the summary's code block holds the
// errors whole.
func TestActionOddInputs(t *testing.T) {
	r := newRunner(t)
	r.copy("examples/contracts/contract.json", "my agent/contract.json")
	r.copy("examples/contracts/trace.json", "my runs/good trace.json")
	r.copy("examples/contracts/trace.json", "runs/b.json")
	r.copy("examples/contracts/trace.json", "runs/c.json")
	code, log := r.run(map[string]string{"expectation": "my agent/contract.json", "traces": "my runs/good trace.json\n  runs/b.json  \n"})
	if code != 0 {
		t.Fatalf("paths with spaces: exit %d\n%s", code, log)
	}
	if summary := r.stepSummary(); !strings.HasPrefix(summary, "## toolscore: PASS, 2/2 traces passed\n\n2 traces against `my agent/contract.json`") {
		t.Errorf("job summary:\n%s", summary)
	}
	// Several paths on one line are still split at white space.
	code, log = r.run(map[string]string{"expectation": "my agent/contract.json", "traces": "runs/b.json runs/c.json"})
	if code != 0 || !strings.HasPrefix(r.stepSummary(), "## toolscore: PASS, 2/2 traces passed") {
		t.Fatalf("two paths on a line: exit %d\n%s", code, log)
	}

	r.write("runs/evil.json", `{"x\n::error title=pwned::injected\n": 1}`)
	code, log = r.run(map[string]string{"expectation": "my agent/contract.json", "traces": "runs/evil.json\nruns/```100%0A.json"})
	if code != 2 {
		t.Fatalf("errors: exit %d\n%s", code, log)
	}
	lines := strings.Split(log, "\n")
	var commands []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if token, ok := strings.CutPrefix(l, "::stop-commands::"); ok {
			for i++; i < len(lines) && lines[i] != "::"+token+"::"; i++ {
			}
			commands = append(commands, "stop-commands")
			continue
		}
		if strings.HasPrefix(l, "::") {
			commands = append(commands, l)
		}
	}
	want := []string{
		"stop-commands", "::group::toolscore report", "stop-commands", "::endgroup::",
		"::error title=toolscore::toolscore: runs/evil.json: invalid trace: no known format fits the document (a JSON object with keys x\\n::error title=pwned::injected\\n) (tried " + formats(t, r) + ")",
	}
	if fmt.Sprint(commands) != fmt.Sprint(want) {
		t.Errorf("workflow commands in the log:\n%q\nwant\n%q\nlog:\n%s", commands, want, log)
	}
	summary := r.stepSummary()
	if !strings.Contains(summary, "## toolscore: error\n\n````\ntoolscore: runs/evil.json: ") || !strings.Contains(summary, "toolscore: runs/```100%0A.json: no such file or directory\ntoolscore: 2 of 2 traces could not be graded\n````\n") {
		t.Errorf("job summary of the errors:\n%s", summary)
	}
	r.write("runs/50%.json", "")
	code, log = r.run(map[string]string{"expectation": "my agent/contract.json", "traces": "runs/50%.json"})
	if code != 2 || !strings.Contains(log, "\n::error title=toolscore::toolscore: runs/50%25.json: file is empty\n") {
		t.Errorf("a %% in the annotation: exit %d\n%s", code, log)
	}
}

// formats is the list of trace formats toolscore's errors name.
func formats(t *testing.T, r *runner) string {
	t.Helper()
	cmd := exec.Command("go", "run", "./cmd/toolscore", "eval", "examples/contracts/contract.json", "-")
	cmd.Dir = r.root
	cmd.Stdin = strings.NewReader("{}")
	out, _ := cmd.CombinedOutput()
	_, list, ok := strings.Cut(string(out), "(tried ")
	list, _, ok2 := strings.Cut(list, ")\n")
	if !ok || !ok2 {
		t.Fatalf("toolscore on {}: %s", out)
	}
	return list
}
