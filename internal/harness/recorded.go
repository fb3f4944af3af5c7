package harness

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// RecordedExtensions are the file extensions a RecordedRunner looks for,
// in order.
var RecordedExtensions = []string{".json", ".jsonl", ".sse"}

// RecordedRunner grades recorded traces offline: the answer for task ID is
// the file ID.json, ID.jsonl or ID.sse in Dir. A task with no file, or with
// more than one, is a final error. It is safe for concurrent use.
type RecordedRunner struct {
	// Dir holds the trace files.
	Dir string
	// MaxAnswerBytes caps a file's size; 0 means DefaultMaxAnswerBytes.
	MaxAnswerBytes int64
}

// NewRecordedRunner returns a RecordedRunner for dir, which must be a
// readable directory.
func NewRecordedRunner(dir string) (*RecordedRunner, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("traces directory: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("traces directory: %s is not a directory", dir)
	}
	return &RecordedRunner{Dir: dir}, nil
}

// Run reads the recorded trace of req.TaskID.
func (r *RecordedRunner) Run(ctx context.Context, req *Request) ([]byte, error) {
	if !filepath.IsLocal(req.TaskID) || strings.ContainsAny(req.TaskID, `/\`) {
		return nil, fmt.Errorf("task id %q cannot name a file", req.TaskID)
	}
	var found []string
	for _, ext := range RecordedExtensions {
		p := filepath.Join(r.Dir, req.TaskID+ext)
		if _, err := os.Stat(p); err == nil {
			found = append(found, p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no recorded trace %s{%s} in %s", req.TaskID, strings.Join(RecordedExtensions, ","), r.Dir)
	case 1:
	default:
		return nil, fmt.Errorf("more than one recorded trace for the task: %s", strings.Join(found, ", "))
	}
	limit := limitOr(r.MaxAnswerBytes)
	fi, err := os.Stat(found[0])
	if err != nil {
		return nil, err
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", found[0], limit)
	}
	return os.ReadFile(found[0])
}
