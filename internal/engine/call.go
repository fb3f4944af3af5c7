package engine

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// ToolCall is one call made by the agent, normalised from any trace format
// (SPEC section 1).
//
// Args holds the arguments: a JSON object, as a value of the document the
// trace was read from (numbers keep their exact literals), compared and
// searched without being decoded into Go maps. The trace adapters give an
// empty object when the trace gave no arguments; the zero Value (as from a
// caller's own ToolCall; jsondoc.FromAny builds a Value from Go values)
// counts as {} too. When the arguments could not be read Args is the zero
// Value, ArgsRaw keeps the original text and ArgsError says why, and the
// call never satisfies an expected call's arguments (SPEC section 7).
// Result is the tool's result, any JSON value; the zero Value when the
// trace carries none (JSON null reads as none).
type ToolCall struct {
	// Tool is the tool's name as the agent called it.
	Tool string `json:"tool"`
	// Args are the call's arguments; see the type comment.
	Args jsondoc.Value `json:"args"`
	// ID is the call id of formats that carry one ("" otherwise).
	ID string `json:"id,omitempty"`
	// Result is the tool's result when the trace carries it (the zero
	// Value otherwise).
	Result jsondoc.Value `json:"result,omitzero"`
	// Error is non-empty when the tool's result was an error; its text is
	// the error message, or "true" when the format only flags the error.
	Error CallError `json:"error,omitempty"`
	// ArgsRaw is the original argument text when it could not be decoded.
	ArgsRaw string `json:"args_raw,omitempty"`
	// ArgsError says why ArgsRaw could not be decoded as one JSON object.
	ArgsError string `json:"args_error,omitempty"`
}

// Failed reports whether the call's result was an error.
func (c *ToolCall) Failed() bool { return c.Error != "" }

// HasResult reports whether the trace carries the call's result.
func (c *ToolCall) HasResult() bool { return c.Result.Exists() && !c.Result.IsNull() }

// CallError is a tool call's error: "" for none, else the error text. In
// JSON it reads true (as "true"), false (as ""), or a string, and it is
// written as a string.
type CallError string

// UnmarshalJSON implements json.Unmarshaler for the bool|string JSON forms.
func (e *CallError) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("true")):
		*e = "true"
	case bytes.Equal(b, []byte("false")), bytes.Equal(b, []byte("null")):
		*e = ""
	default:
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("error must be a boolean or a string")
		}
		*e = CallError(s)
	}
	return nil
}

// Trace is an ordered list of tool calls plus the agent's optional final
// answer (nil when there is none), normalised from any supported format.
type Trace struct {
	// Calls are the tool calls in the order the agent made them.
	Calls []ToolCall `json:"calls"`
	// FinalAnswer is the agent's final answer text, nil when absent.
	FinalAnswer *string `json:"final_answer"`
}
