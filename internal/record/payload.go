package record

import (
	"bytes"
	"encoding/json"
	"fmt"
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
	var idx []int
	if err := json.Unmarshal(scoredIndexes, &idx); err != nil {
		return nil, fmt.Errorf("scored_indexes: %w", err)
	}
	if len(idx) == 0 {
		return json.RawMessage("[]"), nil
	}
	var calls []json.RawMessage
	if err := json.Unmarshal(traceCalls, &calls); err != nil {
		return nil, fmt.Errorf("trace_calls: %w", err)
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
// decoded.
//
// Errors: arr is not a JSON array, or its first element is malformed.
func FirstElement(arr json.RawMessage) (json.RawMessage, error) {
	t := bytes.TrimSpace(arr)
	if len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("not a JSON array")
	}
	if !dec.More() {
		return nil, nil
	}
	var first json.RawMessage
	if err := dec.Decode(&first); err != nil {
		return nil, err
	}
	return first, nil
}
