package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolscore/toolscore/internal/engine/internal/jsonvalue"
)

// SyntaxError is a JSON document that does not parse, located by byte
// offset and by 1-based line and column (columns count bytes).
type SyntaxError struct {
	Offset int64
	Line   int
	Column int
	Msg    string
}

// Error formats the error as "line L:C: msg".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d:%d: %s", e.Line, e.Column, e.Msg)
}

// DecodeJSON decodes one JSON document with numbers kept as json.Number.
// Trailing data other than white space is an error. Syntax errors are
// *SyntaxError with a line and column.
//
// Strings in the result may share memory with one copy of data, which
// therefore lives as long as any of them.
func DecodeJSON(data []byte) (any, error) {
	// The fast decoder accepts exactly what encoding/json accepts, with
	// equal values; a document it rejects is decoded again with
	// encoding/json for the error, whose wording callers and tests rely on.
	var d jsonvalue.Decoder
	d.Reset(string(data), 0)
	if v, err := d.Document(); err == nil {
		return v, nil
	}
	return decodeStd(data)
}

// decodeStd is DecodeJSON with encoding/json.
func decodeStd(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if err == io.EOF {
			return nil, &SyntaxError{Line: 1, Column: 1, Msg: "empty document"}
		}
		return nil, locate(data, err, dec.InputOffset())
	}
	if _, err := dec.Token(); err != io.EOF {
		off := dec.InputOffset()
		line, col := lineCol(data, off)
		return nil, &SyntaxError{Offset: off, Line: line, Column: col, Msg: "unexpected data after the JSON document"}
	}
	return v, nil
}

// locate turns an encoding/json error into a *SyntaxError.
func locate(data []byte, err error, fallback int64) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	off := fallback
	msg := err.Error()
	switch {
	case errors.As(err, &se):
		off = se.Offset
		if off > 0 {
			off-- // Offset is just after the offending byte.
		}
		msg = se.Error()
		// encoding/json quotes the offending byte, not the character:
		// name the whole UTF-8 character instead.
		if off < int64(len(data)) && strings.HasPrefix(msg, "invalid character '") {
			r, _ := utf8.DecodeRune(data[off:])
			if end := strings.Index(msg[len("invalid character '"):], "' "); end >= 0 {
				msg = "invalid character " + strconv.QuoteRune(r) + msg[len("invalid character '")+end+1:]
			}
		}
	case errors.As(err, &te):
		off = te.Offset
	case errors.Is(err, io.ErrUnexpectedEOF):
		off = int64(len(data))
		msg = "unexpected end of JSON input"
	}
	line, col := lineCol(data, off)
	return &SyntaxError{Offset: off, Line: line, Column: col, Msg: msg}
}

// lineCol converts a byte offset into a 1-based line and column.
func lineCol(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line, col := 1, 1
	for _, b := range data[:off] {
		if b == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}
