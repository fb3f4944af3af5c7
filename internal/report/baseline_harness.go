package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/harness"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// HarnessBaseline is a harness report read back as a baseline: each
// task's outcome and verdict, by task id.
type HarnessBaseline struct {
	// File names the baseline; Suite is its suite's name.
	File  string
	Suite string
	tasks map[string]*taskEntry
	order []string
}

// taskEntry is what a harness comparison keeps of one baseline task.
type taskEntry struct {
	side   TaskSide
	safety []string
}

// TaskSide is one side of a task's comparison.
type TaskSide struct {
	Outcome harness.Outcome `json:"outcome"`
	// Score, Grade and Passed are zero for an errored task.
	Score  float64      `json:"score"`
	Grade  engine.Grade `json:"grade,omitempty"`
	Passed bool         `json:"passed"`
}

// harnessDoc is the part of a harness report a baseline reads (its
// format_version is read from the tree).
type harnessDoc struct {
	Suite *string `json:"suite"`
	Tasks []struct {
		ID      string          `json:"id"`
		Outcome harness.Outcome `json:"outcome"`
		Result  *struct {
			Score  float64      `json:"score"`
			Grade  engine.Grade `json:"grade"`
			Passed bool         `json:"passed"`
			Checks struct {
				Items []engine.Check `json:"items"`
			} `json:"checks"`
		} `json:"result"`
	} `json:"tasks"`
	Grade *string `json:"grade"`
}

// ReadHarnessBaseline reads a harness report (`toolscore harness --json`)
// as the baseline of a run of suite. A file that is not JSON, a member
// of another type than a report's, a format_version this toolscore does
// not read, or a task in the report twice is a *SavedError placing what
// is wrong in file by line, column and JSON pointer, as ReadSavedValues
// places a saved result's errors ("r.json: line 3:18: /tasks/0/outcome:
// must be a string, got number"); a report of another suite, an eval
// result, or a file that is not a harness report at all is a
// *BaselineError naming file.
func ReadHarnessBaseline(r io.Reader, file, suite string) (*HarnessBaseline, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &BaselineError{file, err.Error()}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &BaselineError{file, "file is empty"}
	}
	root, err := jsondoc.Parse(data)
	if err != nil {
		var se *jsondoc.SyntaxError
		if !errors.As(err, &se) {
			return nil, &SavedError{File: file, Msg: err.Error()}
		}
		return nil, &SavedError{File: file, Line: se.Line, Column: se.Column, Pointer: se.Pointer, Msg: se.Msg}
	}
	// The report is the whole file: places in it are the file's.
	v := &SavedValue{File: file, Line: 1, Column: 1, Value: root, col0: 1}
	if root.Kind() != jsondoc.Object {
		return nil, v.Errorf(root, false, "not a harness report: a JSON %s, want an object", root.Kind())
	}
	ver := 1
	if fv := root.Get("format_version"); fv.Exists() {
		n, ok := fv.Num()
		if ver, err = strconv.Atoi(n); !ok || err != nil || ver < 1 {
			return nil, v.Errorf(fv, false, "format_version %s is not a version number", fv.Raw())
		}
		if ver > harness.ReportFormatVersion {
			return nil, v.Errorf(fv, false, "format_version %d was written by a newer toolscore (this one reads up to %d): upgrade toolscore", ver, harness.ReportFormatVersion)
		}
	}
	var d harnessDoc
	if err := v.Decode(&d); err != nil {
		return nil, err
	}
	switch {
	case d.Suite == nil && d.Grade != nil:
		return nil, &BaselineError{file, "is an eval result, not a harness report (use it with toolscore eval --baseline)"}
	case d.Suite == nil || d.Tasks == nil:
		return nil, &BaselineError{file, "not a harness report: no suite and tasks (want the output of toolscore harness --json)"}
	case *d.Suite != suite:
		return nil, &BaselineError{file, fmt.Sprintf("is a report of suite %q, not %q", *d.Suite, suite)}
	}
	b := &HarnessBaseline{File: file, Suite: *d.Suite, tasks: map[string]*taskEntry{}}
	for i, t := range d.Tasks {
		if _, dup := b.tasks[t.ID]; dup {
			return nil, v.Errorf(root.Get("tasks").Index(i).Get("id"), true, "task %q is in the report twice", t.ID)
		}
		e := &taskEntry{side: TaskSide{Outcome: t.Outcome}}
		if t.Result != nil {
			e.side.Score, e.side.Grade, e.side.Passed = t.Result.Score, t.Result.Grade, t.Result.Passed
			e.safety = safetyFailures(t.Result.Checks.Items)
		}
		b.tasks[t.ID] = e
		b.order = append(b.order, t.ID)
	}
	return b, nil
}

// TaskChange is one task of a run compared with its baseline.
type TaskChange struct {
	ID string `json:"id"`
	// Old is nil for a task the baseline did not have.
	Old *TaskSide `json:"old"`
	New TaskSide  `json:"new"`
	// Delta is New.Score - Old.Score when both were graded.
	Delta float64 `json:"delta"`
	// Reasons say why the task regressed; empty when it did not.
	Reasons []string `json:"reasons"`
}

// Flip is "PASS → FAIL" when the outcome changed, else "".
func (c *TaskChange) Flip() string {
	if c.Old == nil || c.Old.Outcome == c.New.Outcome {
		return ""
	}
	return outcomeWord(c.Old.Outcome) + " → " + outcomeWord(c.New.Outcome)
}

// HarnessDiff compares a harness run with a baseline report, task by task.
type HarnessDiff struct {
	Baseline string  `json:"baseline"`
	MaxDrop  float64 `json:"max_drop"`
	// Tasks are the run's tasks in suite order.
	Tasks []TaskChange `json:"tasks"`
	// Missing are the baseline's tasks the run did not have, in the
	// baseline's order.
	Missing []string `json:"missing"`
	// Regressed counts the regressed tasks; PassToFail the tasks that
	// passed and now fail or error; FailToPass the other way round.
	Regressed  int `json:"regressed"`
	PassToFail int `json:"pass_to_fail"`
	FailToPass int `json:"fail_to_pass"`
}

// CompareHarness compares rep with the baseline, task by task: a task
// regressed when it passed and now fails or errors, when its score dropped
// by more than maxDrop, or when a safety check newly fails.
func CompareHarness(base *HarnessBaseline, rep *harness.Report, maxDrop float64) *HarnessDiff {
	d := &HarnessDiff{Baseline: base.File, MaxDrop: maxDrop, Tasks: []TaskChange{}, Missing: []string{}}
	seen := map[string]bool{}
	for i := range rep.Tasks {
		t := &rep.Tasks[i]
		ch := TaskChange{ID: t.ID, New: TaskSide{Outcome: t.Outcome}, Reasons: []string{}}
		var safety []string
		if t.Result != nil {
			ch.New.Score, ch.New.Grade, ch.New.Passed = t.Result.Score, t.Result.Grade, t.Result.Passed
			safety = safetyFailures(t.Result.Checks.Items)
		}
		if e, ok := base.tasks[t.ID]; ok && !seen[t.ID] {
			seen[t.ID] = true
			old := e.side
			ch.Old = &old
			graded := old.Outcome != harness.OutcomeError && t.Outcome != harness.OutcomeError
			if graded {
				ch.Delta = ch.New.Score - old.Score
				ch.Reasons = regressions(Side{old.Score, old.Grade, old.Passed}, Side{ch.New.Score, ch.New.Grade, ch.New.Passed}, e.safety, safety, maxDrop)
			} else if old.Outcome == harness.OutcomePass {
				ch.Reasons = []string{"outcome went from PASS to ERROR"}
			}
			switch {
			case old.Outcome == harness.OutcomePass && t.Outcome != harness.OutcomePass:
				d.PassToFail++
			case old.Outcome != harness.OutcomePass && t.Outcome == harness.OutcomePass:
				d.FailToPass++
			}
			if len(ch.Reasons) > 0 {
				d.Regressed++
			}
		}
		d.Tasks = append(d.Tasks, ch)
	}
	for _, id := range base.order {
		if !seen[id] && !slices.Contains(d.Missing, id) {
			d.Missing = append(d.Missing, id)
		}
	}
	return d
}

func outcomeWord(o harness.Outcome) string {
	switch o {
	case harness.OutcomePass:
		return "PASS"
	case harness.OutcomeFail:
		return "FAIL"
	}
	return "ERROR"
}
