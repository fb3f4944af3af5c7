// Package report writes and reads what a CI job keeps of a grading run
// (issue 15): saved evaluation results with their format version, the
// comparison of a run with a baseline, and the Markdown and HTML reports
// of one trace, of many traces and of a harness run.
//
// # Saved results
//
// `toolscore eval --json` writes an engine.EvaluationResult with a few
// members of its own in front (see [Header]): format_version (the
// version of this shape, [FormatVersion]), expectation_sha256 (which
// contract or gold file graded it), and, for one of many traces, source
// (the file, or file:line, it came from) or error (why it could not be
// graded). A result without format_version is version 1: results written
// before the field existed have the same shape. A version newer than
// FormatVersion is refused with an error naming it, so an old toolscore
// never misreads a newer file; a future version 2 will keep a reader for
// version 1, so baselines saved today stay readable. [ReadSavedValues]
// is the one reader of saved results (eval --baseline, through
// [ReadSaved] and [ReadBatchBaseline], and regrade): its errors are
// [*SavedError], placing what is wrong by line, column and JSON pointer.
package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"github.com/toolscore/toolscore/internal/resultjson"
)

// FormatVersion is the version of the saved-result format (and of the
// harness report's JSON) that this toolscore writes and the newest it
// reads.
const FormatVersion = 1

// Header is what a saved result carries besides the EvaluationResult.
type Header struct {
	// FormatVersion is the format's version (FormatVersion when written;
	// 1 when a file read has none).
	FormatVersion int `json:"format_version"`
	// ExpectationSHA256 is ExpectationSHA256 of the contract or gold file
	// that graded the trace; "" in results written before it existed.
	ExpectationSHA256 string `json:"expectation_sha256,omitempty"`
	// Source names the trace among many: a path, or path:line for JSON
	// Lines; "" for a single trace.
	Source string `json:"source,omitempty"`
	// Error says why the trace could not be graded; the result is then
	// absent.
	Error string `json:"error,omitempty"`
}

// ExpectationSHA256 returns the hex SHA-256 of a contract's or gold
// file's canonical JSON (jsondoc.Canonical: object keys sorted, no
// insignificant white space, numbers as written), the identity the
// contract registry gives a body: reformatting the file keeps it, any
// change of content does not. data must be one JSON document (as
// engine.ParseContract accepted it).
func ExpectationSHA256(data []byte) (string, error) {
	_, sum, err := jsondoc.Canonical(data)
	if err != nil {
		return "", fmt.Errorf("expectation is not JSON: %w", err)
	}
	return sum, nil
}

// AppendSaved appends one saved result to dst on one line (no trailing
// newline): h's members, then res's, as one JSON object. res nil writes
// the header alone (an error line). HTML characters are not escaped.
func AppendSaved(dst []byte, h Header, res *engine.EvaluationResult) ([]byte, error) {
	return AppendSavedWith(dst, h, res, nil)
}

// AppendSavedWith is AppendSaved with res written by w, which keeps what
// the results of one contract share (their expected calls, the JSON of
// their texts); w.Mode must be resultjson.NoHTML. A nil w writes as
// AppendSaved.
func AppendSavedWith(dst []byte, h Header, res *engine.EvaluationResult, w *resultjson.Writer) ([]byte, error) {
	h.FormatVersion = FormatVersion
	dst = append(dst, `{"format_version":`...)
	dst = strconv.AppendInt(dst, int64(h.FormatVersion), 10)
	for _, m := range []struct{ key, val string }{
		{"expectation_sha256", h.ExpectationSHA256},
		{"source", h.Source},
		{"error", h.Error},
	} {
		if m.val == "" {
			continue
		}
		dst = append(dst, `,"`...)
		dst = append(dst, m.key...)
		dst = append(dst, `":`...)
		dst = jsondoc.AppendStringNoHTML(dst, m.val)
	}
	if res == nil {
		return append(dst, '}'), nil
	}
	// res's members after h's: its object without the opening brace.
	start := len(dst)
	var out []byte
	var err error
	switch {
	case w == nil:
		out, err = resultjson.NoHTML.AppendResult(dst, res)
	case w.Mode != resultjson.NoHTML:
		return dst, errors.New("encode result: a saved result is written in mode NoHTML")
	default:
		out, err = w.AppendResult(dst, res)
	}
	if err != nil {
		return dst, fmt.Errorf("encode result: %w", err)
	}
	out[start] = ','
	return out, nil
}

// WriteSavedIndented writes one saved result as indented JSON (two
// spaces) followed by a newline, as `toolscore eval --json` prints one
// trace's result.
func WriteSavedIndented(w io.Writer, h Header, res *engine.EvaluationResult) error {
	line, err := AppendSaved(nil, h, res)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, line, "", "  "); err != nil {
		return fmt.Errorf("indent result: %w", err)
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}
