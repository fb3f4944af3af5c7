package ui

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/toolscore/toolscore/internal/record"
)

// evaluationParams are the list's parameters: GET /v1/evaluations' filters
// with the same meaning, the page size and position, and latest.
var evaluationParams = []string{"contract", "task_id", "run_id", "agent", "label", "passed", "grade", "since", "until",
	"regrades", "latest", "limit", "cursor"}

// listForm is the list's filters as the form shows them.
type listForm struct {
	Contract, TaskID, RunID, Agent, Passed, Since, Until, Regrades string
	// Labels are the label filters, one field each.
	Labels []string
	Grades map[string]bool
	Latest bool
	Limit  int
}

// listView is what evaluations.tmpl shows.
type listView struct {
	Form  listForm
	Rows  []summaryRow
	First string
	Next  string
	// Latest tells the rows are originals shown by their latest verdict.
	Latest bool
	// NoRegrades tells the latest-verdict mode is off on this server.
	NoRegrades bool
}

// summaryRow is one result of a listing.
type summaryRow struct {
	record.ResultSummary
	Contract string
	Labels   string
	// Original is the original's id when the row is its latest verdict
	// and that is a regrade result (latest mode), "" otherwise.
	Original string
}

func newSummaryRow(s record.ResultSummary) summaryRow {
	row := summaryRow{ResultSummary: s, Contract: cvName(s.Contract.Name, s.Contract.Version)}
	if s.Contract.Name == "" {
		row.Contract = "inline " + string(s.Contract.Kind)
	}
	row.Labels = labelText(s.Labels)
	return row
}

// labelText is labels as sorted key=value pairs.
func labelText(labels map[string]string) string {
	var parts []string
	for k, v := range labels {
		parts = append(parts, k+"="+v)
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// parseList reads the list's filters into a ResultFilter.
func parseList(r *http.Request) (record.ResultFilter, listForm, *record.Cursor, error) {
	var f record.ResultFilter
	var form listForm
	if err := checkParams(r, evaluationParams, []string{"label", "grade"}); err != nil {
		return f, form, nil, err
	}
	q := r.URL.Query()
	form = listForm{Contract: textParam(q, "contract"), TaskID: textParam(q, "task_id"), RunID: textParam(q, "run_id"),
		Agent: textParam(q, "agent"), Labels: nonEmpty(q["label"]), Passed: q.Get("passed"),
		Since: q.Get("since"), Until: q.Get("until"), Regrades: q.Get("regrades"), Grades: map[string]bool{}}
	var err error
	if form.Contract != "" {
		if f.ContractName, f.ContractVersion, err = parseContract("contract", form.Contract); err != nil {
			return f, form, nil, err
		}
	}
	f.TaskID, f.RunID, f.Agent = form.TaskID, form.RunID, form.Agent
	if f.Labels, err = parseLabels(q["label"]); err != nil {
		return f, form, nil, err
	}
	switch form.Passed {
	case "":
	case "true", "false":
		b := form.Passed == "true"
		f.Passed = &b
	default:
		return f, form, nil, badParam("passed", "%q must be true or false (or empty for both)", form.Passed)
	}
	for _, g := range q["grade"] {
		for one := range strings.SplitSeq(g, ",") {
			if one == "" {
				continue
			}
			if len(one) != 1 || !strings.Contains("ABCDF", one) {
				return f, form, nil, badParam("grade", "%q must be one of A, B, C, D, F", one)
			}
			if !form.Grades[one] {
				f.Grades = append(f.Grades, one)
			}
			form.Grades[one] = true
		}
	}
	if form.Since != "" {
		if f.Since, err = parseTime("since", form.Since); err != nil {
			return f, form, nil, err
		}
	}
	if form.Until != "" {
		if f.Until, err = parseTime("until", form.Until); err != nil {
			return f, form, nil, err
		}
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return f, form, nil, badParam("until", "it must be after since")
	}
	switch v := q.Get("latest"); v {
	case "", "false":
	case "true":
		form.Latest = true
	default:
		return f, form, nil, badParam("latest", "%q must be true (or absent)", v)
	}
	if f.Regrades, err = parseRegrades(form.Regrades, ""); err != nil {
		return f, form, nil, err
	}
	if form.Latest && f.Regrades != "" && f.Regrades != record.RegradesInclude {
		return f, form, nil, badParam("regrades", "the latest-verdict view lists originals, each by its latest verdict: regrades must be include (or empty), not %q", f.Regrades)
	}
	if form.Limit, err = parseLimit(q); err != nil {
		return f, form, nil, err
	}
	after, err := decodeCursor(q)
	if err != nil {
		return f, form, nil, err
	}
	return f, form, after, nil
}

func (c *Console) evaluations(w http.ResponseWriter, r *http.Request) error {
	f, form, after, err := parseList(r)
	if err != nil {
		return err
	}
	v := listView{Form: form, Latest: form.Latest}
	ctx, p := r.Context(), project(r)
	var last *record.Cursor
	if form.Latest {
		if c.cfg.Regrades == nil {
			v.NoRegrades = true
			return c.render(w, r, "evaluations.tmpl", "evaluations", "evaluations", v)
		}
		rs, err := c.cfg.Regrades.LatestResults(ctx, p, f, after, form.Limit+1)
		if err != nil {
			return err
		}
		for i, lr := range rs {
			if i == form.Limit {
				last = &rs[i-1].Original
				break
			}
			row := newSummaryRow(lr.Result)
			if lr.Result.ID != lr.Original.ID {
				row.Original = lr.Original.ID.String()
			}
			v.Rows = append(v.Rows, row)
		}
	} else {
		rs, err := c.store.ListResults(ctx, p, f, after, form.Limit+1)
		if err != nil {
			return err
		}
		for i, s := range rs {
			if i == form.Limit {
				last = &record.Cursor{CreatedAt: rs[i-1].CreatedAt, ID: rs[i-1].ID}
				break
			}
			v.Rows = append(v.Rows, newSummaryRow(s))
		}
	}
	q := r.URL.Query()
	q.Del("cursor")
	for k, vs := range q {
		if len(vs) == 1 && vs[0] == "" {
			q.Del(k) // empty form fields
		}
	}
	if after != nil {
		v.First = withQuery("/ui/evaluations", q)
	}
	if last != nil {
		nq := url.Values{}
		for k, vs := range q {
			nq[k] = vs
		}
		nq.Set("cursor", encodeCursor(*last))
		v.Next = withQuery("/ui/evaluations", nq)
	}
	return c.render(w, r, "evaluations.tmpl", "evaluations", "evaluations", v)
}
