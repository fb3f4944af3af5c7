package engine_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/format"
)

// The golden corpus pins whole evaluation results: every figure, check,
// issue text and redaction. testdata/golden/corpus.jsonl holds the inputs
// (random contracts and traces from the internal tests' generators, and
// every trace under format/testdata graded against a gold file of its own
// calls and against a random contract); testdata/golden/results.jsonl
// holds what Evaluate returns for each, as JSON (without scored_calls,
// which the test checks are the trace calls at scored_indexes). `go test ./internal/engine
// -run TestGoldenCorpus -update` rewrites the results; -corpus draws the
// inputs again (and implies -update).

var newCorpus = flag.Bool("corpus", false, "draw the golden corpus inputs again (implies -update)")

const (
	corpusFile  = "testdata/golden/corpus.jsonl"
	resultsFile = "testdata/golden/results.jsonl"
)

// corpusLine is one line of corpus.jsonl.
type corpusLine struct {
	Name     string          `json:"name"`
	Contract json.RawMessage `json:"contract"`
	Trace    json.RawMessage `json:"trace"`
	Options  corpusOptions   `json:"options"`
}

// corpusOptions is engine.Options as the corpus writes it.
type corpusOptions struct {
	Strict       bool                   `json:"strict,omitempty"`
	Weights      map[string]float64     `json:"weights,omitempty"`
	MinScore     *float64               `json:"min_score,omitempty"`
	Forbidden    []engine.ForbiddenCall `json:"forbidden,omitempty"`
	NoSafetyGate bool                   `json:"no_safety_gate,omitempty"`
	KeepSecrets  bool                   `json:"keep_secrets,omitempty"`
}

func (o corpusOptions) engine() engine.Options {
	return engine.Options{SecretScanner: secretScanner, Strict: o.Strict, Weights: o.Weights, MinScore: o.MinScore, Forbidden: o.Forbidden, NoSafetyGate: o.NoSafetyGate, KeepSecrets: o.KeepSecrets}
}

// resultLine is one line of results.jsonl.
type resultLine struct {
	Name   string          `json:"name"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// drawCorpus generates the corpus inputs.
func drawCorpus(t *testing.T) []corpusLine {
	var out []corpusLine
	add := func(name, contract string, tr engine.Trace, o engine.Options) {
		trJSON, err := json.Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, corpusLine{Name: name, Contract: json.RawMessage(contract), Trace: trJSON, Options: corpusOptions{
			Strict: o.Strict, Weights: o.Weights, MinScore: o.MinScore, Forbidden: o.Forbidden, NoSafetyGate: o.NoSafetyGate, KeepSecrets: o.KeepSecrets}})
	}
	for i, c := range engine.ChecksCorpus(t, 3, 450) {
		add(fmt.Sprintf("checks/%d", i), c.Contract, c.Trace, c.Options)
	}
	for i, c := range engine.ScoringCorpus(1, 350) {
		add(fmt.Sprintf("scoring/%d", i), c.Contract, c.Trace, c.Options)
	}
	var files []string
	for _, pat := range []string{"format/testdata/*/*.json", "format/testdata/*/*.jsonl", "format/testdata/*/*.sse", "format/testdata/real/*/*/*"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	slices.Sort(files)
	contracts := engine.ChecksContracts(5, len(files))
	for k, f := range files {
		if strings.Contains(f, "/errors/") || strings.HasSuffix(f, ".golden") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := format.Parse(data, "auto")
		if err != nil {
			continue
		}
		type goldCall struct {
			Tool string         `json:"tool"`
			Args map[string]any `json:"args,omitempty"`
		}
		// (The gold's args are the calls' args decoded, as when the
		// corpus was drawn.)
		gold := []goldCall{}
		for i, c := range p.Trace.Calls {
			if i == len(p.Trace.Calls)-1 && i > 0 {
				break // one expected call missing
			}
			if c.ArgsError == "" {
				args, _ := c.Args.Any().(map[string]any)
				gold = append(gold, goldCall{Tool: c.Tool, Args: args})
			}
		}
		g, err := json.Marshal(gold)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(f, "format/testdata/")
		add("trace/"+name+"/gold", string(g), p.Trace, engine.Options{SecretScanner: secretScanner})
		add("trace/"+name+"/contract", contracts[k], p.Trace, engine.Options{SecretScanner: secretScanner})
	}
	return out
}

// readJSONLines decodes every line of a JSON Lines file into a new T.
func readJSONLines[T any](t *testing.T, path string) []T {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/engine -run TestGoldenCorpus -corpus)", err)
	}
	var out []T
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	return out
}

// writeJSONLines writes one compact JSON value per line.
func writeJSONLines[T any](t *testing.T, path string, lines []T) {
	var b bytes.Buffer
	for _, l := range lines {
		line, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGoldenCorpus evaluates every case of the corpus and requires each
// result, as JSON, to be byte for byte the golden one; and that the corpus
// makes every check status and issue kind come up.
func TestGoldenCorpus(t *testing.T) {
	if *newCorpus {
		writeJSONLines(t, corpusFile, drawCorpus(t))
	}
	cases := readJSONLines[corpusLine](t, corpusFile)
	got := make([]resultLine, len(cases))
	statuses := map[string]bool{}
	kinds := map[string]bool{}
	for i, cs := range cases {
		got[i].Name = cs.Name
		c, err := engine.ParseContract(cs.Contract)
		if err != nil {
			t.Fatalf("%s: contract: %v", cs.Name, err)
		}
		p, err := format.Parse(cs.Trace, "plain")
		if err != nil {
			t.Fatalf("%s: trace: %v", cs.Name, err)
		}
		res, err := engine.Evaluate(context.Background(), c, p.Trace, cs.Options.engine())
		if err != nil {
			got[i].Error = err.Error()
			continue
		}
		// ScoredCalls are the trace calls at ScoredIndexes: checked here
		// and left out of the golden file, which is big enough.
		if len(res.ScoredCalls) != len(res.ScoredIndexes) {
			t.Fatalf("%s: %d scored calls, %d scored indexes", cs.Name, len(res.ScoredCalls), len(res.ScoredIndexes))
		}
		for k, j := range res.ScoredIndexes {
			a, _ := json.Marshal(res.ScoredCalls[k])
			b, _ := json.Marshal(res.TraceCalls[j])
			if !bytes.Equal(a, b) {
				t.Fatalf("%s: scored call %d is not trace call %d:\n%s\n%s", cs.Name, k, j, a, b)
			}
		}
		res.ScoredCalls = nil
		if got[i].Result, err = json.Marshal(res); err != nil {
			t.Fatal(err)
		}
		for _, ch := range res.Checks.Items {
			statuses[ch.Name+" "+string(ch.Status)] = true
		}
		for _, is := range res.Issues {
			kinds[is.Kind] = true
		}
	}
	if engine.UpdateGolden() || *newCorpus {
		writeJSONLines(t, resultsFile, got)
	}
	want := readJSONLines[resultLine](t, resultsFile)
	if len(want) != len(got) {
		t.Fatalf("%d golden results for %d cases (run with -update)", len(want), len(got))
	}
	failed := 0
	for i := range got {
		if got[i].Name != want[i].Name || got[i].Error != want[i].Error || !bytes.Equal(got[i].Result, want[i].Result) {
			t.Errorf("%s: result differs from the golden one:\n got %s %s\nwant %s %s", got[i].Name, got[i].Error, around(got[i].Result, want[i].Result), want[i].Error, around(want[i].Result, got[i].Result))
			if failed++; failed == 5 {
				t.Fatal("too many differences")
			}
		}
	}
	for _, name := range []string{engine.CheckRequiredCalls, engine.CheckCallOrder, engine.CheckForbiddenCalls, engine.CheckCredentials, engine.CheckToolErrors, engine.CheckHonesty, engine.CheckGrounding} {
		for _, st := range []engine.CheckStatus{engine.CheckPass, engine.CheckFail, engine.CheckUnknown} {
			// required-calls and forbidden-calls are never unknown;
			// credentials only when the secret rules do not load.
			if !statuses[name+" "+string(st)] && !(st == engine.CheckUnknown && (name == engine.CheckRequiredCalls || name == engine.CheckForbiddenCalls || name == engine.CheckCredentials)) {
				t.Errorf("no case had %s %s", name, st)
			}
		}
	}
	for _, k := range []string{engine.IssueForbiddenCall, engine.IssueCredential, engine.IssueMissingCall, engine.IssueWrongTool, engine.IssueArguments, engine.IssueOrder, engine.IssueRedundant, engine.IssueToolError, engine.IssueDishonestClaim, engine.IssueUngrounded} {
		if !kinds[k] {
			t.Errorf("no case had a %s issue", k)
		}
	}
}

// around returns a's text around where it first differs from b.
func around(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return "…" + string(a[max(i-200, 0):min(i+200, len(a))]) + "…"
}
