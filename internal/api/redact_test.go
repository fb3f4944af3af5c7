package api

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/record"
)

// Fake secrets of the gitleaks rules' forms (an AWS access key id, a
// GitHub token, a Slack bot token), built at run time.
var (
	fakeAWSKey   = "AKIA" + "QYLPMN5HHHFPZAM2"
	fakeGitHub   = "ghp_" + "R7cXk2Vq9LmN4bT8wZ3yH6jF1dS5aQ0pE2uK"
	fakeSlackBot = "xoxb-" + "263594206564-2343594206574-FGqddMF8t08v8N7Oq4i57vs1"
)

// TestIdentifiersRedacted checks that the secrets in an evaluation's
// task_id, run_id, agent and labels (a key, a value, and a value whose
// key names it) are stored and answered redacted, and that filters
// holding the same secrets select those results.
func TestIdentifiersRedacted(t *testing.T) {
	b := setup(t, nil)
	body := `{"gold": ` + goldList + `, "trace": ` + traceHalf + `, "task_id": "task-` + fakeAWSKey + `", "run_id": "` + fakeSlackBot + `",
		"agent": "bot ` + fakeGitHub + `", "labels": {"env": "ci", "k-` + fakeGitHub + `": "v", "api_key": "Zq8vR2kL9xT4wB7nM3pQ", "note": "` + fakeAWSKey + `"}}`
	rec := b.do(t, "POST", "/v1/evaluations", body)
	if rec.Code != 201 {
		t.Fatalf("POST = %d %s", rec.Code, rec.Body)
	}
	for _, s := range []string{fakeAWSKey, fakeGitHub, fakeSlackBot, "Zq8vR2kL9xT4wB7nM3pQ"} {
		if strings.Contains(rec.Body.String(), s) {
			t.Errorf("the answer holds %s: %s", s, rec.Body)
		}
	}
	if len(b.store.order) != 1 {
		t.Fatalf("stored %d results", len(b.store.order))
	}
	got := b.store.results[b.store.order[0]]
	want := record.ResultSummary{TaskID: "task-[REDACTED:aws-access-token]", RunID: "[REDACTED:slack-bot-token]", Agent: "bot [REDACTED:github-pat]",
		Labels: map[string]string{"env": "ci", "k-[REDACTED:github-pat]": "v", "api_key": "[REDACTED:generic-api-key]", "note": "[REDACTED:aws-access-token]"}}
	if diff := cmp.Diff([]any{want.TaskID, want.RunID, want.Agent, want.Labels}, []any{got.TaskID, got.RunID, got.Agent, got.Labels}); diff != "" {
		t.Errorf("stored identifiers (-want +got):\n%s", diff)
	}
	if strings.Contains(string(got.LabelsJSON), fakeGitHub) || !strings.Contains(string(got.LabelsJSON), `"k-[REDACTED:github-pat]":"v"`) {
		t.Errorf("stored labels JSON = %s", got.LabelsJSON)
	}
	// A filter written with the secrets selects as if written redacted.
	b.do(t, "GET", "/v1/evaluations?task_id=task-"+fakeAWSKey+"&agent=bot+"+fakeGitHub+"&run_id="+fakeSlackBot+"&label=api_key=Zq8vR2kL9xT4wB7nM3pQ&label=k-"+fakeGitHub, "")
	f := b.store.lastFilter
	wantLabels := []record.LabelFilter{{Key: "api_key", Value: "[REDACTED:generic-api-key]", HasValue: true}, {Key: "k-[REDACTED:github-pat]"}}
	if f.TaskID != want.TaskID || f.Agent != want.Agent || f.RunID != want.RunID || !cmp.Equal(f.Labels, wantLabels) {
		t.Errorf("filter = %+v, want the stored forms %+v %v", f, want, wantLabels)
	}
	// Without secrets, nothing changes.
	b.do(t, "GET", "/v1/evaluations?task_id=t1&label=env=ci", "")
	if f := b.store.lastFilter; f.TaskID != "t1" || !cmp.Equal(f.Labels, []record.LabelFilter{{Key: "env", Value: "ci", HasValue: true}}) {
		t.Errorf("plain filter = %+v", f)
	}
}

// TestContractBodyShownRedacted checks that a registry contract is kept
// as published (it grades) but its description is stored redacted and
// its body answered redacted, by the publish, get and list routes and by
// validate; evaluations against it still grade with the real value.
func TestContractBodyShownRedacted(t *testing.T) {
	b := setup(t, nil)
	contract := `{"contract_version": 2, "description": "deploys with ` + fakeAWSKey + `", "required": [{"tool": "deploy", "args": {"key": "` + fakeGitHub + `", "password": "hunter2hunter2"}}]}`
	answers := []string{
		b.do(t, "POST", "/v1/contracts/deploy/versions", contract).Body.String(),
		b.do(t, "GET", "/v1/contracts/deploy/versions/1", "").Body.String(),
		b.do(t, "GET", "/v1/contracts/deploy/versions/latest", "").Body.String(),
		b.do(t, "GET", "/v1/contracts/deploy/versions", "").Body.String(),
		b.do(t, "GET", "/v1/contracts", "").Body.String(),
		b.do(t, "POST", "/v1/validate", contract).Body.String(),
	}
	for i, a := range answers {
		for _, s := range []string{fakeAWSKey, fakeGitHub, "hunter2hunter2"} {
			if strings.Contains(a, s) {
				t.Errorf("answer %d holds %s: %s", i, s, a)
			}
		}
	}
	if !strings.Contains(answers[1], `"args":{"key":"[REDACTED:github-pat]","password":"[REDACTED:secret-named-argument]"}`) ||
		!strings.Contains(answers[1], `"description":"deploys with [REDACTED:aws-access-token]"`) {
		t.Errorf("GET version = %s", answers[1])
	}
	cv := b.store.contracts[0]
	if cv.Description != "deploys with [REDACTED:aws-access-token]" || !strings.Contains(string(cv.Body), fakeGitHub) {
		t.Errorf("stored description %q, body %s: want the description redacted and the body as published", cv.Description, cv.Body)
	}
	rec := b.do(t, "POST", "/v1/evaluations?store=false", `{"contract": "deploy@1", "trace": [{"tool": "deploy", "args": {"key": "`+fakeGitHub+`", "password": "hunter2hunter2"}}]}`)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"argument_metrics":{"precision":1,"recall":1,"f1":1}`) {
		t.Errorf("evaluation against the stored contract = %d %s, want argument f1 1", rec.Code, rec.Body)
	}
}
