package api

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestMarshalOptions compares marshalOptions with json.Marshal on every
// combination of the options' fields.
func TestMarshalOptions(t *testing.T) {
	zero, half, tiny := 0.0, 0.5, 1e-7
	for _, strict := range []bool{false, true} {
		for _, gate := range []bool{false, true} {
			for _, format := range []string{"", "openai", "auto", "a<b>&\"c\u2028"} {
				for _, forbidden := range []json.RawMessage{nil, json.RawMessage(` [ {"tool": "x<y>"} ] `)} {
					for _, weights := range []map[string]float64{nil, {}, {"b": 1, "a": 0.25}} {
						for _, min := range []*float64{nil, &zero, &half, &tiny} {
							o := evalOptions{Strict: strict, SafetyGate: gate, Format: format, Forbidden: forbidden, Weights: weights, MinScore: min}
							want, err := json.Marshal(o)
							if err != nil {
								t.Fatal(err)
							}
							if got := marshalOptions(o); !bytes.Equal(got, want) {
								t.Errorf("marshalOptions(%+v) = %s, want %s", o, got, want)
							}
						}
					}
				}
			}
		}
	}
}
