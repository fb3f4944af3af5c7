package api

import (
	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// This file holds the request hot path's JSON encoding that encoding/json
// does slowly through reflection, on the JSON layer (internal/jsondoc):
// encoding trace calls, exactly as encoding/json does (tests compare
// them). Requests are read by request.go.

// appendToolCall appends c as encoding/json encodes an engine.ToolCall
// (TestAppendToolCall keeps the two in step, field by field).
func appendToolCall(b []byte, c *engine.ToolCall) ([]byte, error) {
	var err error
	b = append(b, `{"tool":`...)
	b = jsondoc.AppendString(b, c.Tool)
	b = append(b, `,"args":`...)
	if b, err = jsondoc.AppendAny(b, c.Args); err != nil {
		return nil, err
	}
	if c.ID != "" {
		b = append(b, `,"id":`...)
		b = jsondoc.AppendString(b, c.ID)
	}
	if c.HasResult() {
		b = append(b, `,"result":`...)
		if b, err = jsondoc.AppendAny(b, c.Result); err != nil {
			return nil, err
		}
	}
	if c.Error != "" {
		b = append(b, `,"error":`...)
		b = jsondoc.AppendString(b, string(c.Error))
	}
	if c.ArgsRaw != "" {
		b = append(b, `,"args_raw":`...)
		b = jsondoc.AppendString(b, c.ArgsRaw)
	}
	if c.ArgsError != "" {
		b = append(b, `,"args_error":`...)
		b = jsondoc.AppendString(b, c.ArgsError)
	}
	return append(b, '}'), nil
}
