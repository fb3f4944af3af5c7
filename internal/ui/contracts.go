package ui

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/go-chi/chi/v5"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
)

// Bounds of the contract pages.
const (
	// contractsPage is the number of names per page of the list.
	contractsPage = 100
	// versionsShown is the number of versions listed on a contract's page
	// (the newest).
	versionsShown = 200
	// diffContext is the unchanged lines shown around each change.
	diffContext = 3
)

type contractsView struct {
	Rows []record.ContractSummary
	Next string
}

func (c *Console) contracts(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r, []string{"after"}, nil); err != nil {
		return err
	}
	after := r.URL.Query().Get("after")
	rows, err := c.store.ListContracts(r.Context(), project(r), after, contractsPage+1)
	if err != nil {
		return err
	}
	v := contractsView{Rows: rows}
	if len(rows) > contractsPage {
		v.Rows = rows[:contractsPage]
		v.Next = withQuery("/ui/contracts", url.Values{"after": {rows[contractsPage-1].Name}})
	}
	return c.render(w, r, "contracts.tmpl", "contracts", "contracts", v)
}

// contractView is what contract.tmpl shows.
type contractView struct {
	Name     string
	Versions []record.ContractVersion
	// Shown is the version whose body is shown.
	Shown record.ContractVersion
	Body  string
	// A and B are the diff's versions (0 when no diff is asked for).
	A, B      int
	Diff      []diffHunk
	Identical bool
	// Truncated tells that older versions are not listed.
	Truncated  bool
	ResultsURL string
}

type diffHunk struct {
	FromLine, ToLine int
	Lines            []diffLine
}

type diffLine struct {
	// Kind is del, ins or eq.
	Kind string
	Text string
}

func (c *Console) contract(w http.ResponseWriter, r *http.Request) error {
	if err := checkParams(r, []string{"version", "a", "b"}, nil); err != nil {
		return err
	}
	name := chi.URLParam(r, "name")
	if !namePattern.MatchString(name) {
		return notFound("There is no contract %q: a name has letters, digits, '.', '_' and '-'.", name)
	}
	ctx, p := r.Context(), project(r)
	q := r.URL.Query()
	latest, err := c.store.GetContractVersion(ctx, p, name, 0)
	if errors.Is(err, engine.ErrNotFound) {
		return notFound("There is no contract %q in this project.", name)
	}
	if err != nil {
		return err
	}
	v := contractView{Name: name, ResultsURL: withQuery("/ui/evaluations", url.Values{"contract": {name}})}
	// The newest versionsShown versions, newest first.
	after := max(0, latest.Version-versionsShown)
	v.Truncated = after > 0
	vs, err := c.store.ListContractVersions(ctx, p, name, after, versionsShown)
	if err != nil {
		return err
	}
	for i := len(vs) - 1; i >= 0; i-- {
		v.Versions = append(v.Versions, vs[i])
	}
	version := func(param string) (int, error) {
		s := q.Get(param)
		if s == "" {
			return 0, nil
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > latest.Version {
			return 0, badParam(param, "%q must be a version of %s, from 1 to %d", s, name, latest.Version)
		}
		return n, nil
	}
	shown, err := version("version")
	if err != nil {
		return err
	}
	v.Shown = latest
	if shown != 0 && shown != latest.Version {
		if v.Shown, err = c.store.GetContractVersion(ctx, p, name, shown); err != nil {
			return err
		}
	}
	v.Body = indent(v.Shown.Body)
	if v.A, err = version("a"); err != nil {
		return err
	}
	if v.B, err = version("b"); err != nil {
		return err
	}
	if (v.A == 0) != (v.B == 0) {
		missing := "a"
		if v.B == 0 {
			missing = "b"
		}
		return badParam(missing, "a diff needs both versions, a and b")
	}
	if v.A != 0 {
		bodies := map[int]string{}
		for _, n := range []int{v.A, v.B} {
			if _, ok := bodies[n]; ok {
				continue
			}
			cv := v.Shown
			if n != cv.Version {
				if cv, err = c.store.GetContractVersion(ctx, p, name, n); err != nil {
					return err
				}
			}
			bodies[n] = indent(cv.Body) + "\n"
		}
		if v.Diff, err = diffHunks(name, v.A, v.B, bodies[v.A], bodies[v.B]); err != nil {
			return err
		}
		v.Identical = len(v.Diff) == 0
	}
	return c.render(w, r, "contract.tmpl", "contracts", name, v)
}

// diffHunks is the line diff of two contract bodies.
func diffHunks(name string, a, b int, before, after string) ([]diffHunk, error) {
	edits := udiff.Lines(before, after)
	u, err := udiff.ToUnifiedDiff(fmt.Sprintf("%s@%d", name, a), fmt.Sprintf("%s@%d", name, b), before, edits, diffContext)
	if err != nil {
		return nil, fmt.Errorf("diff %s@%d %s@%d: %w", name, a, name, b, err)
	}
	var out []diffHunk
	for _, h := range u.Hunks {
		dh := diffHunk{FromLine: h.FromLine, ToLine: h.ToLine}
		for _, l := range h.Lines {
			kind := "eq"
			switch l.Kind {
			case udiff.Delete:
				kind = "del"
			case udiff.Insert:
				kind = "ins"
			}
			dh.Lines = append(dh.Lines, diffLine{Kind: kind, Text: trimNewline(l.Content)})
		}
		out = append(out, dh)
	}
	return out, nil
}

func trimNewline(s string) string {
	if n := len(s); n > 0 && s[n-1] == '\n' {
		return s[:n-1]
	}
	return s
}
