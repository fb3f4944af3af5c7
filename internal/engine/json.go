package engine

import "github.com/toolscore/toolscore/internal/jsondoc"

// SyntaxError is a JSON document that does not read: the byte offset, the
// 1-based line and column (columns count bytes) and the JSON pointer of
// the place, and what is wrong. It is jsondoc's error, the one every
// reader of toolscore reports.
type SyntaxError = jsondoc.SyntaxError

// DecodeJSON decodes one JSON document with numbers kept as json.Number
// (map[string]any, []any, string, json.Number, bool, nil). Trailing data
// other than white space is an error. Syntax errors are *SyntaxError.
//
// Strings in the result share memory with one copy of data, which
// therefore lives as long as any of them.
func DecodeJSON(data []byte) (any, error) {
	v, err := jsondoc.Parse(data)
	if err != nil {
		return nil, err
	}
	return v.Any(), nil
}
