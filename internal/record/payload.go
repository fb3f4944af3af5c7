package record

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// ScoredCalls rebuilds an EvaluationResult's scored_calls from its
// trace_calls (a JSON array of tool calls) and scored_indexes (a JSON array
// of indexes into it): the elements of traceCalls at those indexes, in the
// order of scoredIndexes, each copied byte for byte and joined with ",".
// The engine builds scored_calls exactly so (SPEC section 6: the calls S
// the score compared, in trace order), and the server encodes both arrays
// from the same element encodings, so the result is the bytes the API
// returned when the result was created. The store keeps only
// trace_calls and scored_indexes (migration 00007).
//
// Errors: traceCalls or scoredIndexes is not a JSON array of the right
// kind, or an index is out of range.
func ScoredCalls(traceCalls, scoredIndexes json.RawMessage) (json.RawMessage, error) {
	iv, err := jsondoc.Parse(scoredIndexes)
	if err != nil || iv.Kind() != jsondoc.Array {
		return nil, fmt.Errorf("scored_indexes: not a JSON array of indexes")
	}
	idx := make([]int, 0, iv.Len())
	for _, e := range iv.Elems() {
		n, _ := e.Num()
		i, err := strconv.Atoi(n)
		if err != nil {
			return nil, fmt.Errorf("scored_indexes: %s is not an index", e.Raw())
		}
		idx = append(idx, i)
	}
	if len(idx) == 0 {
		return json.RawMessage("[]"), nil
	}
	calls, ok := jsondoc.Elements(string(traceCalls))
	if !ok {
		return nil, fmt.Errorf("trace_calls: not a JSON array")
	}
	size := 2
	for _, i := range idx {
		if i < 0 || i >= len(calls) {
			return nil, fmt.Errorf("scored_indexes: index %d outside trace_calls (%d calls)", i, len(calls))
		}
		size += len(calls[i]) + 1
	}
	b := make([]byte, 0, size)
	b = append(b, '[')
	for k, i := range idx {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, calls[i]...)
	}
	return append(b, ']'), nil
}

// FirstElement returns the first element of the JSON array arr, byte for
// byte, or nil when arr is empty, null or absent. Only that element is
// read.
//
// Errors: arr is not a JSON array, or its first element is malformed.
func FirstElement(arr json.RawMessage) (json.RawMessage, error) {
	s := strings.TrimRight(string(arr), " \t\r\n")
	i := jsondoc.SkipSpace(s, 0)
	if s[i:] == "" || s[i:] == "null" {
		return nil, nil
	}
	if s[i] != '[' {
		return nil, fmt.Errorf("not a JSON array")
	}
	i = jsondoc.SkipSpace(s, i+1)
	if i < len(s) && s[i] == ']' {
		return nil, nil
	}
	end, ok := jsondoc.SkipValue(s, i)
	if !ok {
		return nil, fmt.Errorf("the first element of the array is not valid JSON")
	}
	return json.RawMessage(s[i:end]), nil
}
