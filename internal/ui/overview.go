package ui

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/toolscore/toolscore/internal/record"
)

// The overview's limits.
const (
	// defaultDays is the time range shown when none is given.
	defaultDays = 30
	// maxDays bounds the time range (and so the charts' width per day).
	maxDays = 366
	// topIssues is how many of the most frequent first issues are shown.
	topIssues = 10
	// contractChoices is how many contract names the filter form offers.
	contractChoices = 200
)

var overviewParams = []string{"contract", "version", "agent", "label", "from", "to", "regrades"}

// overviewForm is the overview's filters as the form shows them.
type overviewForm struct {
	Contract, Version, Agent, From, To, Regrades string
	// Labels are the label filters, one field each.
	Labels    []string
	Contracts []string
}

// overviewView is what overview.tmpl shows.
type overviewView struct {
	Form      overviewForm
	Days      int
	Count     int64
	Passed    int64
	PassRate  float64
	MeanScore float64
	Grades    []gradeBar
	PerDay    *barChart
	PassChart *lineChart
	MeanChart *lineChart
	Contracts []contractRow
	Issues    []issueRow
	// LabelScan tells that two or more label filters made the overview
	// read the results themselves.
	LabelScan bool
}

// contractRow is one contract version's totals over the range.
type contractRow struct {
	Name      string
	Class     string
	Count     int64
	PassRate  float64
	MeanScore float64
	Link      string
}

type issueRow struct {
	record.IssueCount
	Share string
	Width float64
	Link  string
}

// parseOverview reads the overview's filters.
func parseOverview(r *http.Request, today time.Time) (record.OverviewFilter, overviewForm, error) {
	var f record.OverviewFilter
	var form overviewForm
	if err := checkParams(r, overviewParams, []string{"label"}); err != nil {
		return f, form, err
	}
	q := r.URL.Query()
	form = overviewForm{Contract: textParam(q, "contract"), Version: textParam(q, "version"), Agent: textParam(q, "agent"),
		Labels: nonEmpty(q["label"]), Regrades: q.Get("regrades")}
	if form.Contract != "" {
		name, version, err := parseContract("contract", form.Contract)
		if err != nil {
			return f, form, err
		}
		f.ContractName, f.ContractVersion = name, version
	}
	if form.Version != "" {
		if f.ContractName == "" {
			return f, form, badParam("version", "a version needs a contract: choose one")
		}
		n, err := strconv.Atoi(form.Version)
		if err != nil || n < 1 {
			return f, form, badParam("version", "%q must be a version number from 1", form.Version)
		}
		if f.ContractVersion != 0 && f.ContractVersion != n {
			return f, form, badParam("version", "the contract filter already names version %d", f.ContractVersion)
		}
		f.ContractVersion = n
	}
	f.Agent = form.Agent
	labels, err := parseLabels(q["label"])
	if err != nil {
		return f, form, err
	}
	f.Labels = labels
	if f.Regrades, err = parseRegrades(form.Regrades, record.RegradesExclude); err != nil {
		return f, form, err
	}
	form.Regrades = string(f.Regrades)
	to := today
	if v := q.Get("to"); v != "" {
		if to, err = time.Parse("2006-01-02", v); err != nil {
			return f, form, badParam("to", "%q is not a date such as 2026-11-20", v)
		}
	}
	from := to.AddDate(0, 0, -(defaultDays - 1))
	if v := q.Get("from"); v != "" {
		if from, err = time.Parse("2006-01-02", v); err != nil {
			return f, form, badParam("from", "%q is not a date such as 2026-11-20", v)
		}
	}
	if from.After(to) {
		return f, form, badParam("from", "%s is after to (%s)", from.Format("2006-01-02"), to.Format("2006-01-02"))
	}
	if days := int(to.Sub(from).Hours()/24) + 1; days > maxDays {
		return f, form, badParam("from", "the range is %d days; show at most %d", days, maxDays)
	}
	f.From, f.Until = from, to.AddDate(0, 0, 1)
	form.From, form.To = from.Format("2006-01-02"), to.Format("2006-01-02")
	return f, form, nil
}

func (c *Console) overview(w http.ResponseWriter, r *http.Request) error {
	today := c.now().Truncate(24 * time.Hour)
	f, form, err := parseOverview(r, today)
	if err != nil {
		return err
	}
	ctx := r.Context()
	p := project(r)
	names, err := c.store.ListContracts(ctx, p, "", contractChoices)
	if err != nil {
		return err
	}
	for _, n := range names {
		form.Contracts = append(form.Contracts, n.Name)
	}
	ov, err := c.store.Overview(ctx, p, f, topIssues)
	if err != nil {
		return err
	}
	v := overviewView{Form: form, LabelScan: len(f.Labels) > 1}
	var days []time.Time
	for d := f.From; d.Before(f.Until); d = d.AddDate(0, 0, 1) {
		days = append(days, d)
	}
	v.Days = len(days)
	dayIndex := func(t time.Time) int { return int(t.Sub(f.From).Hours() / 24) }

	// Totals per day and per contract version.
	passed, failed := make([]int64, len(days)), make([]int64, len(days))
	type cvTotals struct {
		name    string
		version int
		count   int64
		passed  int64
		sum     float64
		perDay  map[int]*record.DayContractStats
	}
	byCV := map[string]*cvTotals{}
	var grades [5]int64
	var scoreSum float64
	for i := range ov.Series {
		s := &ov.Series[i]
		d := dayIndex(s.Day)
		if d < 0 || d >= len(days) {
			continue
		}
		passed[d] += s.Passed
		failed[d] += s.Count - s.Passed
		v.Count += s.Count
		v.Passed += s.Passed
		scoreSum += s.ScoreSum
		for g := range grades {
			grades[g] += s.Grades[g]
		}
		key := cvName(s.ContractName, s.ContractVersion)
		t, ok := byCV[key]
		if !ok {
			t = &cvTotals{name: s.ContractName, version: s.ContractVersion, perDay: map[int]*record.DayContractStats{}}
			byCV[key] = t
		}
		t.count += s.Count
		t.passed += s.Passed
		t.sum += s.ScoreSum
		t.perDay[d] = s
	}
	if v.Count > 0 {
		v.PassRate = float64(v.Passed) / float64(v.Count)
		v.MeanScore = scoreSum / float64(v.Count)
	}
	v.Grades = newGradeBars(grades)
	v.PerDay = newBarChart(days, passed, failed)

	// Contract versions, most results first; the first maxSeries are
	// drawn.
	cvs := make([]*cvTotals, 0, len(byCV))
	for _, t := range byCV {
		cvs = append(cvs, t)
	}
	slices.SortFunc(cvs, func(a, b *cvTotals) int {
		return cmp.Or(cmp.Compare(b.count, a.count), cmp.Compare(a.name, b.name), cmp.Compare(a.version, b.version))
	})
	var names2 []string
	var passVals, meanVals [][]float64
	var has [][]bool
	for i, t := range cvs {
		row := contractRow{Name: cvName(t.name, t.version), Count: t.count,
			PassRate: float64(t.passed) / float64(t.count), MeanScore: t.sum / float64(t.count)}
		if t.name != "" {
			lq := url.Values{"contract": {t.name + "@" + strconv.Itoa(t.version)}, "since": {form.From}, "until": {f.Until.Format("2006-01-02")}}
			if f.Regrades != record.RegradesInclude {
				lq.Set("regrades", string(f.Regrades))
			}
			row.Link = withQuery("/ui/evaluations", lq)
		}
		if i < maxSeries {
			row.Class = "s" + strconv.Itoa(i)
			pv, mv, hv := make([]float64, len(days)), make([]float64, len(days)), make([]bool, len(days))
			for d, s := range t.perDay {
				pv[d] = float64(s.Passed) / float64(s.Count)
				mv[d] = s.ScoreSum / float64(s.Count)
				hv[d] = true
			}
			names2 = append(names2, row.Name)
			passVals, meanVals, has = append(passVals, pv), append(meanVals, mv), append(has, hv)
		}
		v.Contracts = append(v.Contracts, row)
	}
	v.PassChart = newLineChart(days, names2, passVals, has, pct)
	v.MeanChart = newLineChart(days, names2, meanVals, has, score3)

	var most int64 = 1
	for _, is := range ov.TopIssues {
		most = max(most, is.Count)
	}
	for _, is := range ov.TopIssues {
		row := issueRow{IssueCount: is, Width: 200 * float64(is.Count) / float64(most)}
		if v.Count > 0 {
			row.Share = pct(float64(is.Count) / float64(v.Count))
		}
		v.Issues = append(v.Issues, row)
	}
	return c.render(w, r, "overview.tmpl", "overview", "overview", v)
}

// cvName is "name@version", or "inline" for inline contracts and gold
// lists.
func cvName(name string, version int) string {
	if name == "" {
		return "inline"
	}
	return name + "@" + strconv.Itoa(version)
}
