package ui

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/record"
)

// Bounds of the regrade pages.
const (
	regradesPage  = 50
	changesPage   = 100
	failuresShown = 20
)

type regradesView struct {
	Rows  []regradeRow
	First string
	Next  string
}

// regradeRow is a regrade with its derived figures.
type regradeRow struct {
	record.Regrade
	Target    string
	Progress  float64
	MeanDelta float64
	Selection string
}

func newRegradeRow(rg record.Regrade) regradeRow {
	row := regradeRow{Regrade: rg, Target: cvName(rg.Target.Name, rg.Target.Version)}
	p := regradeProgress(rg)
	row.Progress, row.MeanDelta = p.Progress, p.MeanScoreDelta
	sel := rg.Selection
	parts := []string{"results of " + sel.ContractName}
	if len(sel.FromVersions) > 0 {
		vs := make([]string, len(sel.FromVersions))
		for i, n := range sel.FromVersions {
			vs[i] = "@" + itoa(n)
		}
		parts[0] += strings.Join(vs, ", ")
	} else {
		parts[0] += " (every version but the target)"
	}
	for _, f := range []struct{ k, v string }{{"task", sel.TaskID}, {"run", sel.RunID}, {"agent", sel.Agent}} {
		if f.v != "" {
			parts = append(parts, f.k+" "+f.v)
		}
	}
	for _, l := range sel.Labels {
		parts = append(parts, "label "+l.Key+"="+l.Value)
	}
	if !sel.Since.IsZero() {
		parts = append(parts, "since "+when(sel.Since))
	}
	if !sel.Until.IsZero() {
		parts = append(parts, "until "+when(sel.Until))
	}
	parts = append(parts, "created before "+when(rg.SnapshotAt))
	row.Selection = strings.Join(parts, "; ")
	return row
}

func (c *Console) regrades(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r, []string{"cursor"}, nil); err != nil {
		return err
	}
	after, err := decodeCursor(r.URL.Query())
	if err != nil {
		return err
	}
	rs, err := c.store.ListRegrades(r.Context(), project(r), after, regradesPage+1)
	if err != nil {
		return err
	}
	v := regradesView{}
	for i, rg := range rs {
		if i == regradesPage {
			v.Next = withQuery("/ui/regrades", url.Values{"cursor": {encodeCursor(record.Cursor{CreatedAt: rs[i-1].CreatedAt, ID: rs[i-1].ID})}})
			break
		}
		v.Rows = append(v.Rows, newRegradeRow(rg))
	}
	if after != nil {
		v.First = "/ui/regrades"
	}
	return c.render(w, r, "regrades.tmpl", "regrades", "regrades", v)
}

// regradeView is what regrade.tmpl shows.
type regradeView struct {
	regradeRow
	Final    bool
	Changes  []changeRow
	Next     string
	First    string
	Failures []record.RegradeFailure
	// MoreFailures tells more failures exist than are listed.
	MoreFailures bool
}

// changeRow is one original whose verdict or grade changed.
type changeRow struct {
	record.RegradeChange
	NewVersion int
	// Flip is pass→fail, fail→pass or "" when only the grade changed.
	Flip     string
	OldIssue string
	NewIssue string
}

// issueProblem is the problem text of a stored first issue.
func issueProblem(raw json.RawMessage) string {
	var is struct {
		Problem string `json:"problem"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &is) != nil {
		return ""
	}
	return is.Problem
}

// regradeService returns the regrade service, or the page saying it is
// off.
func (c *Console) regradeService() error {
	if c.cfg.Regrades == nil {
		return &pageError{status: http.StatusServiceUnavailable, title: "Regrades are off",
			detail: "This server runs without regrades."}
	}
	return nil
}

func (c *Console) regrade(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r, []string{"after"}, nil); err != nil {
		return err
	}
	if err := c.regradeService(); err != nil {
		return err
	}
	id, err := pathUUID("regrade", chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	var after uuid.UUID
	if s := r.URL.Query().Get("after"); s != "" {
		if after, err = uuid.Parse(s); err != nil {
			return badParam("after", "it is not a position this console made; start from the first page")
		}
	}
	ctx, p := r.Context(), project(r)
	rg, err := c.cfg.Regrades.Get(ctx, p, id)
	if err != nil {
		return notFoundAs("regrade", id, err)
	}
	v := regradeView{regradeRow: newRegradeRow(rg), Final: rg.State.Final()}
	changes, err := c.cfg.Regrades.Changes(ctx, p, id, after, changesPage+1)
	if err != nil {
		return notFoundAs("regrade", id, err)
	}
	for i, ch := range changes {
		if i == changesPage {
			v.Next = withQuery("/ui/regrades/"+id.String(), url.Values{"after": {changes[i-1].OriginalID.String()}})
			break
		}
		row := changeRow{RegradeChange: ch, NewVersion: rg.Target.Version,
			OldIssue: issueProblem(ch.OldIssue), NewIssue: issueProblem(ch.NewIssue)}
		switch {
		case ch.OldPassed && !ch.NewPassed:
			row.Flip = "pass→fail"
		case !ch.OldPassed && ch.NewPassed:
			row.Flip = "fail→pass"
		}
		v.Changes = append(v.Changes, row)
	}
	if after != uuid.Nil {
		v.First = "/ui/regrades/" + id.String()
	}
	fails, err := c.cfg.Regrades.Failures(ctx, p, id, uuid.Nil, failuresShown+1)
	if err != nil {
		return notFoundAs("regrade", id, err)
	}
	v.Failures = fails
	if len(fails) > failuresShown {
		v.Failures, v.MoreFailures = fails[:failuresShown], true
	}
	return c.render(w, r, "regrade.tmpl", "regrades", "regrade "+id.String(), v)
}

// progressView is the JSON the page's script polls while a regrade or a
// run is not final.
type progressView struct {
	State string `json:"state"`
	Final bool   `json:"final"`
	// Progress is in [0,1].
	Progress       float64 `json:"progress"`
	Total          int64   `json:"total"`
	Done           int64   `json:"done"`
	Failed         int64   `json:"failed"`
	PassToFail     int64   `json:"pass_to_fail"`
	FailToPass     int64   `json:"fail_to_pass"`
	Changed        int64   `json:"changed"`
	MeanScoreDelta float64 `json:"mean_score_delta"`
	// Passed and Errors are a run's.
	Passed int64 `json:"passed"`
	Errors int64 `json:"errors"`
}

// regradeProgress is a regrade's progress as the API computes it.
func regradeProgress(rg record.Regrade) progressView {
	p := progressView{State: string(rg.State), Final: rg.State.Final(), Total: rg.Total, Done: rg.Done, Failed: rg.Failed,
		PassToFail: rg.PassToFail, FailToPass: rg.FailToPass, Changed: rg.Changed}
	switch {
	case rg.State == record.RegradeCompleted:
		p.Progress = 1
	case rg.Total > 0:
		p.Progress = min(1, float64(rg.Done+rg.Failed)/float64(rg.Total))
	}
	if rg.Done > 0 {
		p.MeanScoreDelta = rg.ScoreDeltaSum / float64(rg.Done)
	}
	return p
}

func (c *Console) regradeProgress(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r, nil, nil); err != nil {
		return err
	}
	if err := c.regradeService(); err != nil {
		return err
	}
	id, err := pathUUID("regrade", chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	rg, err := c.cfg.Regrades.Get(r.Context(), project(r), id)
	if err != nil {
		return notFoundAs("regrade", id, err)
	}
	return writeJSON(w, regradeProgress(rg))
}
