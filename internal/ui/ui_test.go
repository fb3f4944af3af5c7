package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/toolscore/toolscore/internal/api"
	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/regrade"
	"github.com/toolscore/toolscore/internal/regrade/regradetest"
	"github.com/toolscore/toolscore/internal/runs"
	"github.com/toolscore/toolscore/internal/store"
	"github.com/toolscore/toolscore/internal/store/storetest"
	"github.com/toolscore/toolscore/internal/ui"
)

// fixture is a server (API and console, as cmd/server mounts them) on a
// fresh database holding: contract flights at versions 1 and 2 (2 raises
// min_score to 0.99), a passing evaluation against flights@1 (good), one
// whose trace, final answer, labels and agent hold markup (evil, passing
// too), a completed regrade of both to flights@2 that flips both to FAIL, and a
// completed harness run of two tasks.
type fixture struct {
	url    string
	db     *store.DB
	good   string
	evil   string
	rg     string
	regood string // good's regrade result
	run    string
}

const evilScript = `<script>alert("x")</script>`

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	dbURL := storetest.NewDatabase(t)
	db, err := store.Open(ctx, store.Config{URL: dbURL, Logger: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	harnessRuns, err := runs.New(runs.Config{Store: db, Logger: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))})
	if err != nil {
		t.Fatal(err)
	}
	regrades, err := regrade.New(regrade.Config{Store: db, DatabaseURL: dbURL, Logger: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)), Jobs: harnessRuns.Register})
	if err != nil {
		t.Fatal(err)
	}
	if err := regrades.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = regrades.Stop(sctx)
	})
	srv := api.New(api.Config{Store: db, Logger: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)), Regrades: regrades, Runs: harnessRuns, AuthOff: true})
	t.Cleanup(srv.Close)
	console := ui.New(ui.Config{Store: db, Regrades: regrades, Runs: harnessRuns, Logger: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)), AuthOff: true})
	mux := http.NewServeMux()
	mux.Handle("/ui/", console.Handler())
	mux.Handle("/ui", console.Handler())
	mux.Handle("/", srv.Handler())
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	f := &fixture{url: hs.URL, db: db}

	contract := readFile(t, "../../examples/contracts/contract.json")
	f.post(t, "/v1/contracts/flights/versions", contract, http.StatusCreated)
	v2 := bytes.Replace(contract, []byte(`"min_score": 0.9`), []byte(`"min_score": 0.99`), 1)
	f.post(t, "/v1/contracts/flights/versions", v2, http.StatusCreated)

	trace := readFile(t, "../../examples/contracts/trace.json")
	f.good = f.evaluate(t, map[string]any{"contract": "flights@1", "trace": json.RawMessage(trace),
		"task_id": "lisbon-1", "agent": "demo", "labels": map[string]string{"env": "dev"}})
	evilTrace := bytes.Replace(trace, []byte(`{\"city\": \"Lisbon\"}`), []byte(`{\"city\": \"`+strings.ReplaceAll(evilScript, `"`, `\\\"`)+`\"}`), 1)
	if bytes.Equal(evilTrace, trace) {
		t.Fatal("the evil trace is the good one")
	}
	f.evil = f.evaluate(t, map[string]any{"contract": "flights@1", "trace": json.RawMessage(evilTrace),
		"final_answer": evilScript + " booked", "task_id": "evil-1", "agent": "<b>agent</b>",
		"labels": map[string]string{"note": evilScript}})

	var rg struct {
		ID string `json:"id"`
	}
	json.Unmarshal(f.post(t, "/v1/regrades", []byte(`{"contract": "flights@2"}`), http.StatusAccepted), &rg)
	f.rg = rg.ID
	deadline := time.Now().Add(60 * time.Second)
	for {
		var st struct {
			State string `json:"state"`
		}
		json.Unmarshal(f.get(t, "/v1/regrades/"+f.rg, http.StatusOK), &st)
		if st.State == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("regrade %s still %s after 60 s", f.rg, st.State)
		}
		time.Sleep(50 * time.Millisecond) // the regrade runs on river's workers: poll its state
	}
	rs, err := db.ListRegradeResults(ctx, record.DefaultProject, uuid.MustParse(f.good), 10)
	if err != nil || len(rs) != 1 {
		t.Fatalf("good's regrade results: %v %v", rs, err)
	}
	f.regood = rs[0].ID.String()
	f.run, _ = seedRun(t, db, 2, 2)
	return f
}

// seedRun stores a harness run of total tasks and the first write of
// three tasks (a graded one, the example trace against flights@1; an
// error; another graded one), as the runs service writes them; the run
// is completed when write is total, else running. It returns the run's
// id and a function that writes the remaining tasks.
func seedRun(t *testing.T, db *store.DB, total, write int) (string, func()) {
	t.Helper()
	ctx := context.Background()
	id := uuid.Must(uuid.NewV7())
	now := time.Now().UTC().Truncate(time.Microsecond)
	run := record.Run{ID: id, ProjectID: record.DefaultProject, SuiteName: "flight-suite", Suite: json.RawMessage(`{"name":"flight-suite","tasks":[]}`),
		AgentURL: "http://user:secret@agent.example/run?token=abc", Agent: "demo", Concurrency: 2, Timeout: 30 * time.Second,
		Retries: 1, Total: total, CreatedAt: now}
	if err := db.CreateRun(ctx, run, nil); err != nil {
		t.Fatal(err)
	}
	cv, err := db.GetContractVersion(ctx, record.DefaultProject, "flights", 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.ParseContract(cv.Body)
	if err != nil {
		t.Fatal(err)
	}
	answer := "Your seat 12A on flight FL-204 to Lisbon is reserved."
	tr := engine.Trace{FinalAnswer: &answer, Calls: []engine.ToolCall{
		{Tool: "search_flights", Args: jsondoc.MustFromAny(map[string]any{"destination": "LIS", "date": "2026-12-18"}), ID: "call_1"},
		{Tool: "get_weather", Args: jsondoc.MustFromAny(map[string]any{"city": "Lisbon"}), ID: "call_2"},
		{Tool: "reserve_seat", Args: jsondoc.MustFromAny(map[string]any{"flight_id": "FL-204", "seat": "12A"}), ID: "call_3"},
	}}
	graded := func(task string, index int, d time.Duration) record.RunTaskWrite {
		res := regradetest.Result(t, record.ContractRef{Name: "flights", Version: 1, SHA256: cv.SHA256, Kind: cv.Kind}, c, tr,
			regradetest.Options{SafetyGate: true}, now)
		res.RunID, res.TaskID = id.String(), task
		return record.RunTaskWrite{ProjectID: record.DefaultProject, RunID: id, Result: &res, Task: record.RunTask{TaskID: task, Index: index,
			Outcome: "pass", ResultID: res.ID, Score: res.Score, Grade: res.Grade, Attempts: 1, Duration: d, Format: "openai"}}
	}
	tasks := []record.RunTaskWrite{
		graded("book-lisbon", 0, 1500*time.Millisecond),
		{ProjectID: record.DefaultProject, RunID: id, Task: record.RunTask{TaskID: "agent-down", Index: 1, Outcome: "error",
			Reason: "the agent answered 502", Attempts: 2, Duration: 4 * time.Second}},
		graded("seat-porto", 2, 700*time.Millisecond),
	}
	writeTasks := func(ws []record.RunTaskWrite) {
		for _, w := range ws {
			if _, _, err := db.WriteRunTask(ctx, w, nil); err != nil {
				t.Error(err)
			}
		}
	}
	writeTasks(tasks[:write])
	return id.String(), func() { writeTasks(tasks[write:total]) }
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (f *fixture) post(t *testing.T, path string, body []byte, want int) []byte {
	t.Helper()
	resp, err := http.Post(f.url+path, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("POST %s: %d, want %d: %s", path, resp.StatusCode, want, b)
	}
	return b
}

func (f *fixture) get(t *testing.T, path string, want int) []byte {
	t.Helper()
	b, _ := f.page(t, path, want)
	return b
}

// page GETs path, checks its status and returns the body and headers.
func (f *fixture) page(t *testing.T, path string, want int) ([]byte, http.Header) {
	t.Helper()
	resp, err := http.Get(f.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d, want %d: %s", path, resp.StatusCode, want, b)
	}
	return b, resp.Header
}

func (f *fixture) evaluate(t *testing.T, req map[string]any) string {
	t.Helper()
	body, _ := json.Marshal(req)
	var out struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(f.post(t, "/v1/evaluations", body, http.StatusCreated), &out); err != nil {
		t.Fatal(err)
	}
	return out.ID
}

// text is a page's text: tags removed, entities of the escaped characters
// decoded, white space collapsed.
func text(page []byte) string {
	s := regexp.MustCompile(`(?s)<[^>]*>`).ReplaceAllString(string(page), " ")
	s = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&#34;", `"`, "&#39;", "'", "&#43;", "+", "&amp;", "&", "&quot;", `"`).Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

func wantText(t *testing.T, path string, page []byte, wants ...string) {
	t.Helper()
	got := text(page)
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s: the page lacks %q; it reads:\n%s", path, w, got)
		}
	}
}

func TestPages(t *testing.T) {
	f := newFixture(t)
	today := time.Now().UTC().Format("2006-01-02")
	cases := []struct {
		path  string
		wants []string
	}{
		// Originals only by default: good and evil, both against
		// flights@1 (the run's result too); the regrade results are
		// left out.
		{"/ui/", []string{"evaluations 3", "flights@1 3", "Most frequent top issues",
			"arguments low reserve_seat `reserve_seat` called with unexpected arguments (unexpected: seat) 3 100.0%"}},
		{"/ui/?regrades=only", []string{"evaluations 2", "flights@2 2", "pass rate 0.0%"}},
		{"/ui/?regrades=include&contract=flights&version=2", []string{"evaluations 2", "0 passed"}},
		{"/ui/?agent=nobody", []string{"evaluations 0", "No evaluations match these filters"}},
		{"/ui/?label=env=dev", []string{"evaluations 1", "flights@1 1"}},
		{"/ui/?label=env=dev&label=note", []string{"evaluations 0", "Two or more label filters read the matching results themselves"}},
		{"/ui/?label=note", []string{"evaluations 1"}},
		{"/ui/?from=" + today + "&to=" + today, []string{"evaluations 3", "1 days, " + today + " to " + today}},
		{"/ui/evaluations", []string{"lisbon-1 demo env=dev", "evil-1", "book-lisbon", "regrade"}},
		{"/ui/evaluations?task_id=lisbon-1", []string{"PASS A 0.967 flights@1 lisbon-1 demo env=dev openai"}},
		{"/ui/evaluations?latest=true&task_id=lisbon-1", []string{"Evaluations: latest verdicts", "FAIL A 0.967 flights@2 lisbon-1", "regrade of original"}},
		{"/ui/evaluations?regrades=only&passed=false", []string{"FAIL A 0.967 flights@2 lisbon-1"}},
		{"/ui/evaluations/" + f.good, []string{"PASS score 0.967 (96.7%), min score 0.900", "against flights@1", "task lisbon-1",
			"Regraded 1 time(s): FAIL A 0.967 against flights@2", "Alternatives (2 combinations)", "Chosen for book : [1] reserve_seat",
			"Trace: 3 calls", "#0 search_flights call_1 scored", "#1 get_weather call_2 optional", "#2 reserve_seat call_3 scored",
			"Your seat 12A on flight FL-204 to Lisbon is reserved.", "Top issues to fix (1)", "Fix: In the call to `reserve_seat`: drop `seat`",
			"Evidence: 7 pass, 0 fail, 0 unknown", "forbidden-calls pass"}},
		{"/ui/evaluations/" + f.regood, []string{"FAIL score 0.967", "min score 0.990", "against flights@2", "This is a regrade result of regrade " + f.rg,
			"Its original: PASS A 0.967 against flights@1"}},
		{"/ui/contracts", []string{"flights contract 2"}},
		{"/ui/contracts/flights", []string{"Contract flights", "Version 2", `"min_score": 0.99`}},
		{"/ui/contracts/flights?version=1", []string{"Version 1", `"min_score": 0.9`}},
		{"/ui/contracts/flights?a=1&b=2", []string{"flights@1 → flights@2", `− "min_score": 0.9,`, `+ "min_score": 0.99,`}},
		{"/ui/contracts/flights?a=2&b=2", []string{"The two versions have the same body."}},
		{"/ui/regrades", []string{"flights@2 completed", "results of flights (every version but the target)"}},
		{"/ui/regrades/" + f.rg, []string{"Regrade to flights@2", "state completed", "regraded 2 / 2", "pass → fail 2", "fail → pass 0",
			"mean score Δ +0.000", "pass→fail PASS A @1 0.967"}},
		{"/ui/runs", []string{"flight-suite demo completed", "2/2"}},
		{"/ui/runs/" + f.run, []string{"Harness run of flight-suite", "http://user:xxxxx@agent.example/run?token=xxxxx", "tasks done 2 / 2", "passed 1",
			"book-lisbon pass 0.967 A", "agent-down error", "the agent answered 502", "book-lisbon: 1.5s"}},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			body, h := f.page(t, c.path, http.StatusOK)
			wantText(t, c.path, body, c.wants...)
			if got := h.Get("Content-Security-Policy"); got != ui.ContentSecurityPolicy {
				t.Errorf("CSP %q", got)
			}
			if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Content-Type") != "text/html; charset=utf-8" {
				t.Errorf("headers %v", h)
			}
		})
	}
	// The contract sha256s are shown.
	for _, v := range []int{1, 2} {
		cv, err := f.db.GetContractVersion(context.Background(), record.DefaultProject, "flights", v)
		if err != nil {
			t.Fatal(err)
		}
		wantText(t, "/ui/contracts/flights", f.get(t, "/ui/contracts/flights", http.StatusOK), cv.SHA256)
	}
	// The forms show each label filter in its own field, and an empty one
	// to add another.
	for _, path := range []string{"/ui/?label=env=dev&label=note", "/ui/evaluations?label=env=dev&label=note"} {
		body := string(f.get(t, path, http.StatusOK))
		for _, want := range []string{`name="label" value="env=dev"`, `name="label" value="note"`, `and label <input name="label" value=""`} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: the form lacks %s", path, want)
			}
		}
	}
	// The regrade's changes link to both results.
	rgPage := string(f.get(t, "/ui/regrades/"+f.rg, http.StatusOK))
	for _, id := range []string{f.good, f.regood} {
		if !strings.Contains(rgPage, `href="/ui/evaluations/`+id+`"`) {
			t.Errorf("the regrade page does not link to %s", id)
		}
	}
}

func TestProgress(t *testing.T) {
	f := newFixture(t)
	var p map[string]any
	json.Unmarshal(f.get(t, "/ui/regrades/"+f.rg+"/progress", http.StatusOK), &p)
	want := map[string]any{"state": "completed", "final": true, "progress": 1.0, "total": 2.0, "done": 2.0, "failed": 0.0,
		"pass_to_fail": 2.0, "fail_to_pass": 0.0, "changed": 2.0, "mean_score_delta": 0.0, "passed": 0.0, "errors": 0.0}
	if fmt.Sprint(p) != fmt.Sprint(want) {
		t.Errorf("regrade progress %v, want %v", p, want)
	}
	json.Unmarshal(f.get(t, "/ui/runs/"+f.run+"/progress", http.StatusOK), &p)
	want = map[string]any{"state": "completed", "final": true, "progress": 1.0, "total": 2.0, "done": 2.0, "failed": 0.0,
		"pass_to_fail": 0.0, "fail_to_pass": 0.0, "changed": 0.0, "mean_score_delta": 0.0, "passed": 1.0, "errors": 1.0}
	if fmt.Sprint(p) != fmt.Sprint(want) {
		t.Errorf("run progress %v, want %v", p, want)
	}
}

// TestBadInput checks that unknown ids are 404 pages and bad filters 400
// pages naming the filter.
func TestBadInput(t *testing.T) {
	f := newFixture(t)
	missing := uuid.Must(uuid.NewV7()).String()
	cases := []struct {
		path   string
		status int
		wants  []string
	}{
		{"/ui/evaluations/" + missing, 404, []string{"404 Not found", "There is no evaluation " + missing + " in this project."}},
		{"/ui/evaluations/not-a-uuid", 404, []string{"There is no evaluation \"not-a-uuid\""}},
		{"/ui/regrades/" + missing, 404, []string{"There is no regrade " + missing}},
		{"/ui/runs/" + missing, 404, []string{"There is no run " + missing}},
		{"/ui/runs/" + missing + "/progress", 404, []string{"There is no run " + missing}},
		{"/ui/contracts/nope", 404, []string{"There is no contract \"nope\" in this project."}},
		{"/ui/nowhere", 404, []string{"There is no page at /ui/nowhere."}},
		{"/ui/evaluations?passed=maybe", 400, []string{"400 Bad filter", `The filter "passed" is wrong: "maybe" must be true or false`, "Fix the passed filter"}},
		{"/ui/evaluations?grade=E", 400, []string{`The filter "grade" is wrong: "E" must be one of A, B, C, D, F`}},
		{"/ui/evaluations?since=yesterday", 400, []string{`The filter "since" is wrong: "yesterday" is not a time`}},
		{"/ui/evaluations?since=2026-11-02&until=2026-11-01", 400, []string{`The filter "until" is wrong: it must be after since`}},
		{"/ui/evaluations?contract=flights@0", 400, []string{`The filter "contract" is wrong`}},
		{"/ui/evaluations?cursor=xyz", 400, []string{`The filter "cursor" is wrong`}},
		{"/ui/evaluations?latest=true&regrades=only", 400, []string{`The filter "regrades" is wrong`}},
		{"/ui/evaluations?limit=0", 400, []string{`The filter "limit" is wrong`}},
		{"/ui/evaluations?grades=A", 400, []string{`The filter "grades" is wrong: this page has no such filter`}},
		{"/ui/evaluations?agent=a&agent=b", 400, []string{`The filter "agent" is wrong: it is given 2 times`}},
		{"/ui/?from=2026-13-01", 400, []string{`The filter "from" is wrong: "2026-13-01" is not a date`}},
		{"/ui/?from=2026-11-02&to=2026-11-01", 400, []string{`The filter "from" is wrong: 2026-11-02 is after to (2026-11-01)`}},
		{"/ui/?from=2020-01-01&to=2026-11-01", 400, []string{`show at most 366`}},
		{"/ui/?version=2", 400, []string{`The filter "version" is wrong: a version needs a contract`}},
		{"/ui/?regrades=all", 400, []string{`The filter "regrades" is wrong`}},
		{"/ui/contracts/flights?a=1", 400, []string{`The filter "b" is wrong: a diff needs both versions`}},
		{"/ui/contracts/flights?version=9", 400, []string{`The filter "version" is wrong: "9" must be a version of flights, from 1 to 2`}},
		{"/ui/evaluations/" + f.good + "?x=1", 400, []string{`The filter "x" is wrong: this page takes no filter`}},
		{"/ui/evaluations?agent=%00", 400, []string{`The filter "agent" is wrong: the value is not UTF-8 text without NUL`}},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			body, h := f.page(t, c.path, c.status)
			wantText(t, c.path, body, c.wants...)
			if h.Get("Content-Security-Policy") != ui.ContentSecurityPolicy {
				t.Errorf("CSP %q", h.Get("Content-Security-Policy"))
			}
		})
	}
	// The 400 page links to the page without the wrong filter.
	body := string(f.get(t, "/ui/evaluations?agent=demo&passed=maybe", http.StatusBadRequest))
	if !strings.Contains(body, `href="/ui/evaluations?agent=demo"`) {
		t.Errorf("no link without the filter:\n%s", body)
	}
	resp, err := http.Post(f.url+"/ui/evaluations", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /ui/evaluations: %d", resp.StatusCode)
	}
}

// TestNothingRenderedAsMarkup stores markup in a trace's arguments, its
// final answer, a label and the agent, and checks that every page showing
// them shows it as text.
func TestNothingRenderedAsMarkup(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/ui/evaluations/" + f.evil, "/ui/evaluations", "/ui/evaluations?agent=%3Cb%3Eagent%3C%2Fb%3E", "/ui/?agent=%3Cb%3Eagent%3C%2Fb%3E"} {
		body := string(f.get(t, path, http.StatusOK))
		for _, raw := range []string{"<script>alert", "<b>agent"} {
			if strings.Contains(body, raw) {
				t.Errorf("%s holds %q as markup", path, raw)
			}
		}
		if n := strings.Count(body, "<script"); n != 1 {
			t.Errorf("%s: %d script elements, want the console's one", path, n)
		}
	}
	raw := string(f.get(t, "/ui/evaluations/"+f.evil, http.StatusOK))
	for _, want := range []string{
		`&#34;city&#34;: &#34;&lt;script&gt;alert(\&#34;x\&#34;)&lt;/script&gt;&#34;`, // the arguments, as indented JSON
		`&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; booked`,                      // the final answer
		`note=&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;`,                        // the label
		`&lt;b&gt;agent&lt;/b&gt;`,                                                    // the agent
	} {
		if !strings.Contains(raw, want) {
			t.Errorf("the page does not show %s as text", want)
		}
	}
	list := string(f.get(t, "/ui/evaluations?task_id=evil-1", http.StatusOK))
	if !strings.Contains(list, `note=&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;`) {
		t.Errorf("the list does not show the label as text")
	}
}

func TestStaticAndRedirect(t *testing.T) {
	f := newFixture(t)
	js, h := f.page(t, "/ui/static/console.js", http.StatusOK)
	if !strings.HasPrefix(h.Get("Content-Type"), "text/javascript") || !bytes.Contains(js, []byte("data-progress")) {
		t.Errorf("console.js: %s %q", h.Get("Content-Type"), js[:40])
	}
	css, h := f.page(t, "/ui/static/console.css", http.StatusOK)
	if !strings.HasPrefix(h.Get("Content-Type"), "text/css") || !bytes.Contains(css, []byte("ol.timeline")) {
		t.Errorf("console.css: %s", h.Get("Content-Type"))
	}
	f.get(t, "/ui/static/nope.js", http.StatusNotFound)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(f.url + "/ui")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/ui/" {
		t.Errorf("/ui: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// generate fills db with rows generated results over the days before now
// (testdata/generate.sql, the benchmark's generator).
func generate(t testing.TB, db *store.DB, rows, days int) {
	t.Helper()
	b, err := os.ReadFile("testdata/generate.sql")
	if err != nil {
		t.Fatal(err)
	}
	sql := strings.NewReplacer(":rows", strconv.Itoa(rows), ":days", strconv.Itoa(days)).Replace(string(b))
	if _, err := db.Pool().Exec(context.Background(), sql); err != nil {
		t.Fatalf("generate: %v", err)
	}
}
