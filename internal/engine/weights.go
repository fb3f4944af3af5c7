package engine

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Weights are the composite-score weights of SPEC section 3, one per
// metric, under their JSON names. Effective weights sum to 1.
type Weights struct {
	SelectionAccuracy  float64 `json:"selection_accuracy"`
	ArgumentF1         float64 `json:"argument_f1"`
	SequenceAccuracy   float64 `json:"sequence_accuracy"`
	RedundantRate      float64 `json:"redundant_rate"`
	RequiredCallRecall float64 `json:"required_call_recall"`
}

// DefaultWeights are the reference weights: 0.4, 0.3, 0.2, 0.1 and 0 for
// required_call_recall.
var DefaultWeights = Weights{
	SelectionAccuracy: 0.4,
	ArgumentF1:        0.3,
	SequenceAccuracy:  0.2,
	RedundantRate:     0.1,
}

// WeightNames lists the valid weight keys in summation order.
var WeightNames = []string{"selection_accuracy", "argument_f1", "sequence_accuracy", "redundant_rate", "required_call_recall"}

func (w *Weights) field(name string) *float64 {
	switch name {
	case "selection_accuracy":
		return &w.SelectionAccuracy
	case "argument_f1":
		return &w.ArgumentF1
	case "sequence_accuracy":
		return &w.SequenceAccuracy
	case "redundant_rate":
		return &w.RedundantRate
	case "required_call_recall":
		return &w.RequiredCallRecall
	}
	return nil
}

// CheckWeights validates a partial weights map: every key must be one of
// WeightNames and every value finite and non-negative. It returns one
// FieldError per problem, with pointers below prefix (e.g. "/weights").
func CheckWeights(prefix string, m map[string]float64) []FieldError {
	var errs []FieldError
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		p := prefix + "/" + escapePointer(k)
		switch {
		case (&Weights{}).field(k) == nil:
			errs = append(errs, FieldError{p, fmt.Sprintf("unknown weight %q (valid: %s)", k, strings.Join(WeightNames, ", "))})
		case math.IsNaN(v) || math.IsInf(v, 0):
			errs = append(errs, FieldError{p, "weight must be a finite number"})
		case v < 0:
			errs = append(errs, FieldError{p, fmt.Sprintf("weight must not be negative, got %v", v)})
		}
	}
	return errs
}

// effectiveWeights merges the given layers over DefaultWeights and
// renormalises them to sum 1. With no layer at all the defaults are used
// as they are, which is what the reference does (their float sum is
// 0.9999999999999999, and dividing by it would move scores by an ulp).
func effectiveWeights(layers ...map[string]float64) (Weights, error) {
	w := DefaultWeights
	given := false
	for _, l := range layers {
		if len(l) == 0 {
			continue
		}
		if errs := CheckWeights("/weights", l); len(errs) > 0 {
			return Weights{}, &ValidationError{Kind: "options", Errors: errs}
		}
		for k, v := range l {
			*w.field(k) = v
			given = true
		}
	}
	if !given {
		return w, nil
	}
	total := w.SelectionAccuracy + w.ArgumentF1 + w.SequenceAccuracy + w.RedundantRate + w.RequiredCallRecall
	if math.IsInf(total, 0) {
		return Weights{}, &ValidationError{Kind: "options", Errors: []FieldError{{"/weights", "weights are too large: their sum overflows"}}}
	}
	if total <= 0 {
		return Weights{}, &ValidationError{Kind: "options", Errors: []FieldError{{"/weights", "weights must not all be zero"}}}
	}
	w.SelectionAccuracy /= total
	w.ArgumentF1 /= total
	w.SequenceAccuracy /= total
	w.RedundantRate /= total
	w.RequiredCallRecall /= total
	return w, nil
}

// composite is Σ w_k·m_k summed in the reference's order.
func (w *Weights) composite(sel, f1, seq, redundantRate, recall float64) float64 {
	s := w.SelectionAccuracy * sel
	s += w.ArgumentF1 * f1
	s += w.SequenceAccuracy * seq
	s += w.RedundantRate * (1 - redundantRate)
	s += w.RequiredCallRecall * recall
	return s
}

// escapePointer escapes one JSON pointer reference token (RFC 6901).
func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
