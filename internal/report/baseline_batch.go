package report

import (
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"

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
	// Unread counts the values of the file that are not saved results
	// (see ReadBatchBaseline); UnreadErrors are the first MaxChanges of
	// their errors, each a *SavedError placing the value.
	Unread       int
	UnreadErrors []error
	entries      map[string]*baseEntry
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

// read reads d from root, a saved result check has checked, as
// json.Unmarshal of its text would decode it, without decoding the text
// again (ReadSavedValues has read it into root). It reads the members
// by their exact names and is false, leaving d partly read, when root
// holds anything encoding/json might read otherwise or reject: a
// repeated key, a key that matches a member's name only in another case
// ("Score"), a value of another type than d's field or a number out of
// its range. SavedValue.Decode then reads the value and places its
// error. Only contract_metrics, a few counts and the scores of the
// alternatives' combinations, is decoded from its own text by
// encoding/json.
func (d *lightDoc) read(root jsondoc.Value) bool {
	if root.Kind() != jsondoc.Object || root.HasRepeatedKey() {
		return false
	}
	for k, m := range root.Members() {
		ok := true
		switch k {
		case "score":
			ok = readFloat(m, &d.Score)
		case "grade":
			var s string
			ok = readString(m, &s)
			d.Grade = engine.Grade(s)
		case "passed":
			ok = readBool(m, &d.Passed)
		case "metrics":
			ok = d.readMetrics(m)
		case "expected_calls":
			ok = readElems(m, &d.ExpectedCalls, func(e jsondoc.Value, c *struct {
				Tool string `json:"tool"`
			}) bool {
				return readMembers(e, []string{"tool"}, func(_ string, t jsondoc.Value) bool { return readString(t, &c.Tool) })
			})
		case "checks":
			ok = readMembers(m, []string{"items"}, func(_ string, items jsondoc.Value) bool {
				return readElems(items, &d.Checks.Items, func(e jsondoc.Value, it *struct {
					Name   string             `json:"name"`
					Status engine.CheckStatus `json:"status"`
				}) bool {
					return readMembers(e, []string{"name", "status"}, func(k string, x jsondoc.Value) bool {
						if k == "name" {
							return readString(x, &it.Name)
						}
						var s string
						ok := readString(x, &s)
						it.Status = engine.CheckStatus(s)
						return ok
					})
				})
			})
		default:
			ok = !foldsTo(k, lightNames)
		}
		if !ok {
			return false
		}
	}
	return true
}

// lightNames are the names of lightDoc's members.
var lightNames = []string{"score", "grade", "passed", "metrics", "expected_calls", "checks"}

// readMetrics reads lightDoc's metrics from m (see lightDoc.read).
func (d *lightDoc) readMetrics(m jsondoc.Value) bool {
	return readMembers(m, []string{"contract_metrics", "weights"}, func(k string, x jsondoc.Value) bool {
		if k == "weights" {
			w := &d.Metrics.Weights
			fields := []*float64{&w.SelectionAccuracy, &w.ArgumentF1, &w.SequenceAccuracy, &w.RedundantRate, &w.RequiredCallRecall}
			// engine.WeightNames are in the order of Weights's fields.
			return readMembers(x, engine.WeightNames, func(k string, n jsondoc.Value) bool {
				return readFloat(n, fields[slices.Index(engine.WeightNames, k)])
			})
		}
		switch x.Kind() {
		case jsondoc.Null:
			return true
		case jsondoc.Object:
			d.Metrics.Contract = new(engine.ContractMetrics)
			return json.Unmarshal([]byte(x.Raw()), d.Metrics.Contract) == nil
		}
		return false
	})
}

// readMembers reads the object v (null reads as nothing) member by
// member, in document order, calling fn with each member named one of
// names; other members are skipped, unless a name matches theirs in
// another case (see lightDoc.read). It is false when v is of another
// kind or fn is false.
func readMembers(v jsondoc.Value, names []string, fn func(string, jsondoc.Value) bool) bool {
	switch v.Kind() {
	case jsondoc.Null:
		return true
	case jsondoc.Object:
	default:
		return false
	}
	for k, m := range v.Members() {
		if slices.Contains(names, k) {
			if !fn(k, m) {
				return false
			}
		} else if foldsTo(k, names) {
			return false
		}
	}
	return true
}

// readElems reads the array v into *out, one element of it per element
// (null reads as a nil slice, as encoding/json reads it), each with fn;
// it is false when v is of another kind or fn is false.
func readElems[T any](v jsondoc.Value, out *[]T, fn func(jsondoc.Value, *T) bool) bool {
	switch v.Kind() {
	case jsondoc.Null:
		*out = nil
		return true
	case jsondoc.Array:
	default:
		return false
	}
	s := make([]T, v.Len())
	for i, e := range v.Elems() {
		if !fn(e, &s[i]) {
			return false
		}
	}
	*out = s
	return true
}

// foldsTo reports whether k is one of names in another case, which
// encoding/json would decode into the field (it compares keys as
// strings.EqualFold does).
func foldsTo(k string, names []string) bool {
	for _, n := range names {
		if strings.EqualFold(k, n) {
			return true
		}
	}
	return false
}

// readFloat reads the number v into *f as encoding/json does; null reads
// as nothing. It is false for another kind or a number out of range.
func readFloat(v jsondoc.Value, f *float64) bool {
	switch v.Kind() {
	case jsondoc.Null:
		return true
	case jsondoc.Number:
		n, _ := v.Num()
		x, err := strconv.ParseFloat(n, 64)
		if err != nil {
			return false
		}
		*f = x
		return true
	}
	return false
}

// readString reads the string v into *s; null reads as nothing. It is
// false for another kind.
func readString(v jsondoc.Value, s *string) bool {
	switch v.Kind() {
	case jsondoc.Null:
		return true
	case jsondoc.String:
		*s = v.Text()
		return true
	}
	return false
}

// readBool reads true or false into *b; null reads as nothing. It is
// false for another kind.
func readBool(v jsondoc.Value, b *bool) bool {
	switch v.Kind() {
	case jsondoc.Null:
		return true
	case jsondoc.Bool:
		*b, _ = v.Bool()
		return true
	}
	return false
}

// ReadBatchBaseline reads a baseline of many traces from r and checks that
// every entry was graded against c (identity sha, name expName; see
// CheckExpectation). Entries are keyed by their source; a file whose
// entries have none (one trace's result) is an error, as are two entries
// with one source. The file is read by ReadSavedValues, one line at a
// time when it is JSON Lines. A value that is not a saved result (a line
// that is not JSON, a member of another type, no grade and metrics) is
// counted in Unread and the others still read, as regrade reads such a
// file; a file none of whose values reads is refused with the first
// one's error. Errors are *SavedError placing the entry in file, or
// *BaselineError naming file.
func ReadBatchBaseline(r io.Reader, file, sha string, c *engine.Contract, expName string) (*BatchBaseline, error) {
	b := &BatchBaseline{File: file, entries: map[string]*baseEntry{}}
	unread := func(err error) error {
		b.Unread++
		if len(b.UnreadErrors) < MaxChanges {
			b.UnreadErrors = append(b.UnreadErrors, err)
		}
		return nil
	}
	err := ReadSavedValues(r, file, func(v *SavedValue) error {
		if v.Err != nil {
			return unread(v.Err)
		}
		var d lightDoc
		if !d.read(v.Value) {
			d = lightDoc{}
			if err := v.Decode(&d); err != nil {
				return unread(err)
			}
		}
		h := v.Header
		switch {
		case h.Source == "":
			return v.Errorf(jsondoc.Value{}, false, "has no source: it is one trace's result; a baseline of many traces is the output of toolscore eval --json over many traces")
		case h.Error == "" && (!slices.Contains(Grades, d.Grade) || d.Metrics.Weights == (engine.Weights{})):
			return unread(v.Errorf(jsondoc.Value{}, false, "not a saved result: no grade and metrics (want the output of toolscore eval --json)"))
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
	if b.Traces == 0 && b.Unread > 0 {
		// Nothing to compare with: the file is refused as a whole.
		return nil, b.UnreadErrors[0]
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
