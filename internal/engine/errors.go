package engine

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors of the engine. Callers test with errors.Is.
var (
	// ErrInvalidContract wraps every contract or gold-file validation
	// failure; the error is a *ValidationError.
	ErrInvalidContract = errors.New("invalid contract")
	// ErrInvalidTrace wraps every trace that cannot be read.
	ErrInvalidTrace = errors.New("invalid trace")
	// ErrInvalidOptions wraps invalid evaluation options (weights, min
	// score).
	ErrInvalidOptions = errors.New("invalid options")
)

// FieldError is one problem at one place of a JSON document. Pointer is an
// RFC 6901 JSON pointer ("" for the whole document).
type FieldError struct {
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

// ValidationError lists every problem found in a document. It matches
// ErrInvalidContract with errors.Is when Kind is "contract" and
// ErrInvalidOptions when Kind is "options".
type ValidationError struct {
	// Kind is "contract" or "options".
	Kind string
	// Errors are the problems, in document order where known.
	Errors []FieldError
}

// Error formats the problems as "invalid contract: /ptr: message; ...".
func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid %s", e.Kind)
	for i, fe := range e.Errors {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		p := fe.Pointer
		if p == "" {
			p = "/"
		}
		fmt.Fprintf(&b, "%s: %s", p, fe.Message)
	}
	return b.String()
}

// Is reports whether target is the sentinel for e's Kind.
func (e *ValidationError) Is(target error) bool {
	switch e.Kind {
	case "contract":
		return target == ErrInvalidContract
	case "options":
		return target == ErrInvalidOptions
	}
	return false
}
