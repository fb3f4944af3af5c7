// Package format reads agent traces in every supported format (SPEC section
// 7) and normalises them to an engine.Trace.
package format

import (
	"fmt"

	"github.com/toolscore/toolscore/internal/engine"
)

// Parsed is a trace read from one document: the format it was read as,
// why that format was chosen, and the normalised trace.
type Parsed struct {
	// Format is the adapter's name, such as "plain", "openai", "anthropic".
	Format string `json:"format"`
	// Reason says why the format was detected (or that it was forced).
	Reason string `json:"reason"`
	// Trace is the normalised trace.
	Trace engine.Trace `json:"trace"`
}

// Names lists the format names Parse accepts besides "auto".
func Names() []string { return []string{"plain"} }

// Parse reads a trace from data. name is "auto" (or "") to detect the
// format, or one of Names() to force it. Errors wrap engine.ErrInvalidTrace.
func Parse(data []byte, name string) (*Parsed, error) {
	return nil, fmt.Errorf("%w: not implemented yet", engine.ErrInvalidTrace)
}
