package report

import (
	"io"
	"slices"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// MaxChanges is the number of regressed and of fixed traces a BatchDiff
// lists (it counts them all).
const MaxChanges = 10

// BatchBaseline is a baseline of many traces (the output of `eval --json`
// over many traces), by source. It holds a few numbers per trace, about
// 100 bytes with the source's name.
type BatchBaseline struct {
	// File names the baseline.
	File string
	// Traces, Passed, Failures count its entries; ScoreSum adds the
	// graded ones' scores.
	Traces, Passed, Failures int
	ScoreSum                 float64
	// FirstSource is the source of the file's first entry.
	FirstSource string
	entries     map[string]*baseEntry
}

// baseEntry is what a batch comparison keeps of one baseline trace.
type baseEntry struct {
	side   Side
	safety []string // failed safety checks
	err    bool
	seen   bool
}

// lightDoc is the part of a saved result a batch baseline reads (its
// header is read by ReadSavedValues).
type lightDoc struct {
	Score   float64      `json:"score"`
	Grade   engine.Grade `json:"grade"`
	Passed  bool         `json:"passed"`
	Metrics struct {
		Contract *engine.ContractMetrics `json:"contract_metrics"`
		Weights  engine.Weights          `json:"weights"`
	} `json:"metrics"`
	ExpectedCalls []struct {
		Tool string `json:"tool"`
	} `json:"expected_calls"`
	Checks struct {
		Items []struct {
			Name   string             `json:"name"`
			Status engine.CheckStatus `json:"status"`
		} `json:"items"`
	} `json:"checks"`
}

// ReadBatchBaseline reads a baseline of many traces from r and checks that
// every entry was graded against c (identity sha, name expName; see
// CheckExpectation). Entries are keyed by their source; a file whose
// entries have none (one trace's result) is an error, as are two entries
// with one source. The file is read by ReadSavedValues, one line at a
// time when it is JSON Lines. Errors are *SavedError placing the entry in
// file, or *BaselineError naming file.
func ReadBatchBaseline(r io.Reader, file, sha string, c *engine.Contract, expName string) (*BatchBaseline, error) {
	b := &BatchBaseline{File: file, entries: map[string]*baseEntry{}}
	err := ReadSavedValues(r, file, func(v *SavedValue) error {
		if v.Err != nil {
			return v.Err
		}
		var d lightDoc
		if err := v.Decode(&d); err != nil {
			return err
		}
		h := v.Header
		switch {
		case h.Source == "":
			return v.Errorf(jsondoc.Value{}, false, "has no source: it is one trace's result; a baseline of many traces is the output of toolscore eval --json over many traces")
		case h.Error == "" && (!slices.Contains(Grades, d.Grade) || d.Metrics.Weights == (engine.Weights{})):
			return v.Errorf(jsondoc.Value{}, false, "not a saved result: no grade and metrics (want the output of toolscore eval --json)")
		}
		if _, dup := b.entries[h.Source]; dup {
			return v.Errorf(v.Value.Get("source"), true, "trace %s is in the file twice", h.Source)
		}
		fp := fingerprint{sha: h.ExpectationSHA256}
		if h.Error == "" {
			exp := make([]engine.ExpectedCall, len(d.ExpectedCalls))
			for i, e := range d.ExpectedCalls {
				exp[i].Tool = e.Tool
			}
			fp = newFingerprint(h.ExpectationSHA256, d.Metrics.Contract, exp)
		}
		if err := fp.check(file, sha, c, expName); err != nil {
			return err
		}
		e := &baseEntry{side: Side{d.Score, d.Grade, d.Passed}, err: h.Error != ""}
		for _, it := range d.Checks.Items {
			if it.Status == engine.CheckFail && slices.Contains(safetyChecks, it.Name) {
				e.safety = append(e.safety, it.Name)
			}
		}
		b.entries[h.Source] = e
		if b.Traces == 0 {
			b.FirstSource = h.Source
		}
		b.Traces++
		switch {
		case e.err:
			b.Failures++
		case e.side.Passed:
			b.Passed++
		}
		if !e.err {
			b.ScoreSum += d.Score
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// PassRate is the baseline's Passed / Traces; 0 for none.
func (b *BatchBaseline) PassRate() float64 {
	if b.Traces == 0 {
		return 0
	}
	return float64(b.Passed) / float64(b.Traces)
}

// MeanScore is the baseline's mean score of its graded traces.
func (b *BatchBaseline) MeanScore() float64 {
	if n := b.Traces - b.Failures; n > 0 {
		return b.ScoreSum / float64(n)
	}
	return 0
}

// TraceChange is one trace whose verdict or score changed against the
// baseline.
type TraceChange struct {
	Seq    int    `json:"seq"`
	Source string `json:"source"`
	Old    Side   `json:"old"`
	New    Side   `json:"new"`
	// Reasons say why it regressed (see Diff.Regressed); empty for a fix.
	Reasons []string `json:"reasons"`
}

// BatchDiff compares many traces with a baseline of many traces, matched
// by source.
type BatchDiff struct {
	// Baseline names the baseline file; Base is it.
	Baseline string         `json:"baseline"`
	Base     *BatchBaseline `json:"-"`
	// MaxDrop is the tolerated score drop per trace.
	MaxDrop float64 `json:"max_drop"`
	// Matched counts the traces in both; New those only in this run.
	Matched int `json:"matched"`
	New     int `json:"new"`
	// PassToFail and FailToPass count the verdict flips; Regressed every
	// regressed trace (a flip, a drop beyond MaxDrop, a new safety
	// failure).
	PassToFail int `json:"pass_to_fail"`
	FailToPass int `json:"fail_to_pass"`
	Regressed  int `json:"regressed"`
	// Regressions are the MaxChanges worst regressions (flips first, then
	// the largest drops); Fixes the first MaxChanges traces that went from
	// FAIL to PASS.
	Regressions []TraceChange `json:"regressions"`
	Fixes       []TraceChange `json:"fixes"`
}

// Missing counts the baseline's traces this run did not have.
func (d *BatchDiff) Missing() int { return d.Base.Traces - d.Matched }

// CompareWith makes b compare every trace added from now on with base.
func (b *Batch) CompareWith(base *BatchBaseline, maxDrop float64) {
	b.Diff = &BatchDiff{Baseline: base.File, Base: base, MaxDrop: maxDrop, Regressions: []TraceChange{}, Fixes: []TraceChange{}}
}

// compare records trace seq's change against the baseline.
func (d *BatchDiff) compare(seq int, source string, g Graded) {
	e, ok := d.Base.entries[source]
	if !ok || e.seen {
		d.New++
		return
	}
	e.seen = true
	d.Matched++
	if e.err {
		return
	}
	cur := Side{g.Score, g.Grade, g.Passed}
	reasons := regressions(e.side, cur, e.safety, g.Safety, d.MaxDrop)
	switch {
	case e.side.Passed && !cur.Passed:
		d.PassToFail++
	case !e.side.Passed && cur.Passed:
		d.FailToPass++
		if len(d.Fixes) < MaxChanges {
			d.Fixes = append(d.Fixes, TraceChange{Seq: seq, Source: source, Old: e.side, New: cur, Reasons: []string{}})
		}
	}
	if len(reasons) == 0 {
		return
	}
	d.Regressed++
	ch := TraceChange{Seq: seq, Source: source, Old: e.side, New: cur, Reasons: reasons}
	worse := func(a, b *TraceChange) bool { // a ranks before b
		af, bf := a.Old.Passed && !a.New.Passed, b.Old.Passed && !b.New.Passed
		if af != bf {
			return af
		}
		return a.Old.Score-a.New.Score > b.Old.Score-b.New.Score
	}
	if len(d.Regressions) == MaxChanges && !worse(&ch, &d.Regressions[MaxChanges-1]) {
		return
	}
	at := len(d.Regressions)
	for at > 0 && worse(&ch, &d.Regressions[at-1]) {
		at--
	}
	if len(d.Regressions) < MaxChanges {
		d.Regressions = append(d.Regressions, TraceChange{})
	}
	copy(d.Regressions[at+1:], d.Regressions[at:len(d.Regressions)-1])
	d.Regressions[at] = ch
}
