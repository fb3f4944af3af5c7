package harness

import (
	"context"
	"encoding/json"
	"errors"
)

// Request is what an agent is asked to do for one task. Its JSON form,
// {"task_id", "input", "tools"}, is the body POSTed to an HTTP agent and
// the stdin of a command agent.
type Request struct {
	// TaskID is the task's id.
	TaskID string `json:"task_id"`
	// Input is a prompt (JSON string) or a list of chat messages (JSON
	// array), as written in the suite.
	Input json.RawMessage `json:"input"`
	// Tools is the JSON array of tool definitions offered to the agent,
	// "[]" when none.
	Tools json.RawMessage `json:"tools"`
}

// Runner reaches an agent. Run asks it to perform one task and returns its
// answer: a trace document in any format the engine reads (see
// ParseAnswer). Run must honour ctx, which carries the per-attempt
// timeout, and must be safe for concurrent use.
//
// A failure worth asking again (connection refused or reset, 5xx) is
// returned wrapped with Transient; any other error is final for the task.
// The harness itself treats an attempt whose ctx deadline passed as a
// transient timeout.
type Runner interface {
	Run(ctx context.Context, req *Request) ([]byte, error)
}

// RunnerFunc adapts a function to the Runner interface.
type RunnerFunc func(ctx context.Context, req *Request) ([]byte, error)

// Run calls f(ctx, req).
func (f RunnerFunc) Run(ctx context.Context, req *Request) ([]byte, error) { return f(ctx, req) }

// transientError marks an error as worth retrying.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// Transient marks err as a transport failure worth retrying with backoff
// (connection refused or reset, timeout, 5xx). Transient(nil) is nil.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return &transientError{err}
}

// IsTransient reports whether err, or an error it wraps, was marked with
// Transient.
func IsTransient(err error) bool {
	var te *transientError
	return errors.As(err, &te)
}
