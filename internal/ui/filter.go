package ui

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/record"
)

// The console's filters are query parameters, as the forms send them: an
// empty value means the filter is not set (a form sends every field), a
// parameter a page does not read, a repeated one that takes one value, or
// a value that cannot be what it names is a 400 page naming it.

// namePattern is a registry contract name (api's namePattern).
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// maxFilterText bounds a text filter's length.
const maxFilterText = 256

// checkParams refuses parameters outside allowed, repeats of those not in
// repeatable, and values that are not UTF-8 text without NUL.
func checkParams(r *http.Request, allowed, repeatable []string) error {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return &pageError{status: http.StatusBadRequest, title: "Bad filter", detail: "The query string is malformed: " + err.Error() + "."}
	}
	names := make([]string, 0, len(q))
	for k := range q {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if !slices.Contains(allowed, k) {
			if len(allowed) == 0 {
				return badParam(k, "this page takes no filter")
			}
			return badParam(k, "this page has no such filter; it takes %s", strings.Join(allowed, ", "))
		}
		if len(q[k]) > 1 && !slices.Contains(repeatable, k) {
			return badParam(k, "it is given %d times and takes one value", len(q[k]))
		}
		for _, v := range q[k] {
			if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
				return badParam(k, "the value is not UTF-8 text without NUL")
			}
			if len(v) > maxFilterText && k != "cursor" {
				return badParam(k, "the value is longer than %d bytes", maxFilterText)
			}
		}
	}
	return nil
}

// parseContract reads "name" or "name@N" (N >= 1).
func parseContract(param, v string) (name string, version int, err error) {
	name, ver, hasVersion := strings.Cut(v, "@")
	if !namePattern.MatchString(name) {
		return "", 0, badParam(param, "%q is not a contract name (letters, digits, '.', '_' and '-', up to 128)", name)
	}
	if hasVersion {
		n, err := strconv.Atoi(ver)
		if err != nil || n < 1 {
			return "", 0, badParam(param, "the version of %q must be a number from 1 (name@N), or leave it out for every version", v)
		}
		version = n
	}
	return name, version, nil
}

// parseLabels reads repeated label=key or label=key=value filters.
func parseLabels(vs []string) ([]record.LabelFilter, error) {
	var out []record.LabelFilter
	for _, l := range vs {
		if l == "" {
			continue
		}
		k, v, hasValue := strings.Cut(l, "=")
		if k == "" {
			return nil, badParam("label", "%q must be key or key=value", l)
		}
		out = append(out, record.LabelFilter{Key: k, Value: v, HasValue: hasValue})
	}
	return out, nil
}

// parseTime reads an RFC 3339 time, or the "2026-11-20T10:00" of a
// datetime-local field or a "2026-11-20" date, both read as UTC.
func parseTime(param, v string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, badParam(param, "%q is not a time: give 2026-11-20, 2026-11-20T10:00 (UTC) or an RFC 3339 time", v)
}

// parseRegrades reads the regrades filter, def when empty.
func parseRegrades(v string, def record.RegradesFilter) (record.RegradesFilter, error) {
	if v == "" {
		return def, nil
	}
	f := record.RegradesFilter(v)
	if f != record.RegradesInclude && f != record.RegradesExclude && f != record.RegradesOnly {
		return "", badParam("regrades", "%q must be include, exclude or only", v)
	}
	return f, nil
}

// textParam reads a text filter, white space around it trimmed.
func textParam(q url.Values, name string) string { return strings.TrimSpace(q.Get(name)) }

// cursor is the opaque position of a listing page: base64url of JSON,
// like the API's.
type cursor struct {
	T  time.Time `json:"t"`
	ID uuid.UUID `json:"id"`
}

func encodeCursor(c record.Cursor) string {
	b, _ := json.Marshal(cursor{T: c.CreatedAt, ID: c.ID})
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor reads ?cursor=, nil when absent.
func decodeCursor(q url.Values) (*record.Cursor, error) {
	v := q.Get("cursor")
	if v == "" {
		return nil, nil
	}
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || json.Unmarshal(b, &c) != nil || c.T.IsZero() || c.ID == uuid.Nil {
		return nil, badParam("cursor", "it is not a position this console made; start from the first page")
	}
	return &record.Cursor{CreatedAt: c.T, ID: c.ID}, nil
}

// parseLimit reads ?limit= among the page sizes offered.
func parseLimit(q url.Values) (int, error) {
	v := q.Get("limit")
	if v == "" {
		return defaultLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxLimit {
		return 0, badParam("limit", "%q must be a number from 1 to %d", v, maxLimit)
	}
	return n, nil
}

// Page sizes of the listings.
const (
	defaultLimit = 50
	maxLimit     = 200
)

// pathUUID reads an {id} path parameter; anything but a UUID is a 404
// page (no such page exists).
func pathUUID(noun, v string) (uuid.UUID, error) {
	id, err := uuid.Parse(v)
	if err != nil {
		return id, notFound("There is no %s %q: an id is a UUID such as 0193c6a1-0000-7000-8000-000000000001.", noun, v)
	}
	return id, nil
}

// nonEmpty returns the values that are not empty (a form's empty fields).
func nonEmpty(vs []string) []string {
	var out []string
	for _, v := range vs {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}
