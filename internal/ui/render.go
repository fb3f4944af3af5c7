package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/toolscore/toolscore/internal/engine"
)

// page is what every template renders: the layout's fields and the page's
// own data.
type page struct {
	// Title is the page's title (after "toolscore console: ").
	Title string
	// Nav is the navigation entry to mark: overview, evaluations,
	// contracts, regrades, runs.
	Nav string
	// Static is the version of the static files' URLs.
	Static string
	// Session is the signed-in session (nil with authentication off or
	// before signing in).
	Session *sessionView
	// Data is the page's own view.
	Data any
}

// templates are the pages' templates by file name, each parsed with the
// layout.
var templates = parseTemplates()

var funcs = template.FuncMap{
	"pct":     pct,
	"score":   score3,
	"signed":  signed,
	"num":     func(n int64) string { return groupDigits(n) },
	"int":     func(n int) string { return groupDigits(int64(n)) },
	"when":    when,
	"day":     func(t time.Time) string { return t.UTC().Format("2006-01-02") },
	"verdict": verdict,
	"lower":   strings.ToLower,
	"join":    strings.Join,
	"add":     func(a, b int) int { return a + b },
	"dur":     duration,
	"list":    func(s ...string) []string { return s },
}

func parseTemplates() map[string]*template.Template {
	layout := template.Must(template.New("layout.tmpl").Funcs(funcs).ParseFS(files, "templates/layout.tmpl"))
	pages, err := fs.Glob(files, "templates/*.tmpl")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, p := range pages {
		name := strings.TrimPrefix(p, "templates/")
		if name == "layout.tmpl" {
			continue
		}
		out[name] = template.Must(template.Must(layout.Clone()).ParseFS(files, p))
	}
	return out
}

// render writes a page with status 200.
func (c *Console) render(w http.ResponseWriter, r *http.Request, name, nav, title string, data any) error {
	return c.renderStatus(w, r, http.StatusOK, name, nav, title, data)
}

func (c *Console) renderStatus(w http.ResponseWriter, r *http.Request, status int, name, nav, title string, data any) error {
	t, ok := templates[name]
	if !ok {
		return fmt.Errorf("no template %s", name)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", page{Title: title, Nav: nav, Static: c.staticVersion, Data: data, Session: sessionOf(r)}); err != nil {
		return fmt.Errorf("render %s: %w", name, err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
	return nil
}

// pageError is an error shown as a page: 404 for an unknown id, 400 for a
// bad filter (naming it), 503 when a part of the server is off.
type pageError struct {
	status int
	title  string
	detail string
	// param is the query parameter (filter) that is wrong, "" for none.
	param string
	cause error
}

func (e *pageError) Error() string {
	if e.cause != nil {
		return e.detail + ": " + e.cause.Error()
	}
	return e.detail
}

func (e *pageError) Unwrap() error { return e.cause }

func notFound(format string, args ...any) *pageError {
	return &pageError{status: http.StatusNotFound, title: "Not found", detail: fmt.Sprintf(format, args...)}
}

// badParam is the 400 page of a wrong query parameter.
func badParam(name, format string, args ...any) *pageError {
	return &pageError{status: http.StatusBadRequest, title: "Bad filter", param: name,
		detail: fmt.Sprintf("The filter %q is wrong: %s.", name, fmt.Sprintf(format, args...))}
}

// errorView is what error.tmpl shows.
type errorView struct {
	Status int
	Title  string
	Detail string
	Param  string
	Back   string
}

// handle adapts a handlerFunc, writing its error as a page.
func (c *Console) handle(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			c.writeError(w, r, err)
		}
	}
}

// writeError shows err as a page: its own status for a pageError, 404 for
// engine.ErrNotFound, 503 for engine.ErrUnavailable, else a logged 500
// that shows no detail.
func (c *Console) writeError(w http.ResponseWriter, r *http.Request, err error) {
	pe := &pageError{}
	switch {
	case errors.As(err, &pe):
	case errors.Is(err, engine.ErrNotFound):
		pe = notFound("Nothing is stored at %s.", r.URL.Path)
	case errors.Is(err, engine.ErrUnavailable):
		pe = &pageError{status: http.StatusServiceUnavailable, title: "Database unavailable",
			detail: "The database does not answer; try again in a moment."}
	default:
		c.log.Error("console page failed", zap.String("path", r.URL.Path), zap.Error(err))
		pe = &pageError{status: http.StatusInternalServerError, title: "Internal error",
			detail: "The page could not be made; the server log says why."}
	}
	back := ""
	if pe.param != "" {
		q := r.URL.Query()
		q.Del(pe.param)
		q.Del("cursor")
		back = r.URL.Path
		if len(q) > 0 {
			back += "?" + q.Encode()
		}
	}
	v := errorView{Status: pe.status, Title: pe.title, Detail: pe.detail, Param: pe.param, Back: back}
	if rerr := c.renderStatus(w, r, pe.status, "error.tmpl", "", pe.title, v); rerr != nil {
		c.log.Error("console error page failed", zap.Error(rerr))
		http.Error(w, pe.title, pe.status)
	}
}

// writeJSON sends v as JSON (the progress endpoints).
func writeJSON(w http.ResponseWriter, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
	return nil
}

// pct formats a fraction in [0,1] as a percentage with one decimal.
func pct(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return strconv.FormatFloat(100*x, 'f', 1, 64) + "%"
}

// score3 formats a score with three decimals.
func score3(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }

// signed formats a delta with its sign and three decimals.
func signed(x float64) string {
	s := strconv.FormatFloat(x, 'f', 3, 64)
	if x >= 0 && !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	if s == "-0.000" {
		s = "+0.000"
	}
	return s
}

// groupDigits writes n with thin spaces between groups of three digits.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, d := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString(",")
		}
		b.WriteRune(d)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// when formats a time in UTC to the second.
func when(t any) string {
	switch t := t.(type) {
	case time.Time:
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	case *time.Time:
		if t == nil {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	}
	return ""
}

// duration formats a duration rounded to the millisecond.
func duration(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

func verdict(passed bool) string {
	if passed {
		return "PASS"
	}
	return "FAIL"
}

// withQuery returns path with the query q (none when empty).
func withQuery(path string, q url.Values) string {
	if e := q.Encode(); e != "" {
		return path + "?" + e
	}
	return path
}

// notFoundAs turns engine.ErrNotFound into the 404 page of a noun and id;
// other errors pass through.
func notFoundAs(noun string, id fmt.Stringer, err error) error {
	if errors.Is(err, engine.ErrNotFound) {
		return notFound("There is no %s %s in this project.", noun, id)
	}
	return err
}

func itoa(n int) string { return strconv.Itoa(n) }

// sessionOf returns the request's signed-in session, nil when none.
func sessionOf(r *http.Request) *sessionView {
	sv, _ := r.Context().Value(sessionKey{}).(*sessionView)
	return sv
}
