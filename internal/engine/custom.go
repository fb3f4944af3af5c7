package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// MatcherFunc builds the Matcher of a custom JSON matcher operator (see
// ParseOptions.Matchers) from the operator's argument: the value of
// {"$op": arg}, read as an expected value is (numbers as json.Number,
// objects map[string]any, arrays []any, matcher objects inside it already
// Matchers). A non-nil error, or a nil Matcher, makes the contract
// invalid; the error's text is reported at the argument's JSON pointer.
// It is called once per occurrence of the operator, while the contract is
// read.
type MatcherFunc func(arg any) (Matcher, error)

// ParseOptions tune ParseContractWith. The zero value reads contracts as
// ParseContract does.
type ParseOptions struct {
	// Matchers are custom JSON matcher operators by name, each starting
	// with "$" ("$iata"), read beside the built-in ones wherever a matcher
	// object may stand. A built-in name, a name without the "$" or with
	// nothing after it, and a nil function are ErrInvalidOptions errors.
	// A Matcher that does not implement json.Marshaler is shown in results
	// as the operator object it was read from.
	Matchers map[string]MatcherFunc
}

// ParseContractWith is ParseContract with custom matcher operators
// (opts.Matchers). Errors are ParseContract's, and a *ValidationError
// (errors.Is ErrInvalidOptions) with the pointer /matchers/NAME for an
// invalid opts.Matchers entry.
func ParseContractWith(data []byte, opts ParseOptions) (*Contract, error) {
	if err := checkMatcherFuncs(opts.Matchers); err != nil {
		return nil, err
	}
	doc, err := jsondoc.Parse(data)
	if err != nil {
		return nil, err
	}
	p := contractParser{custom: opts.Matchers}
	return p.contract(doc)
}

// checkMatcherFuncs validates ParseOptions.Matchers, listing every bad
// entry in name order.
func checkMatcherFuncs(m map[string]MatcherFunc) error {
	var errs []FieldError
	for _, name := range sortedKeys(m) {
		var msg string
		switch {
		case !strings.HasPrefix(name, "$") || len(name) == 1:
			msg = fmt.Sprintf("custom matcher name %q must be \"$\" followed by a name", name)
		case slices.Contains(matcherKeys, name):
			msg = fmt.Sprintf("custom matcher %q is a built-in matcher", name)
		case m[name] == nil:
			msg = fmt.Sprintf("custom matcher %q has no function", name)
		default:
			continue
		}
		errs = append(errs, FieldError{"/matchers/" + escapePointer(name), msg})
	}
	if len(errs) > 0 {
		return &ValidationError{Kind: "options", Errors: errs}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// customMatcher reads {op: arg} with the custom operator's function f.
func (p *contractParser) customMatcher(op string, arg jsondoc.Value, f MatcherFunc) any {
	n := len(p.errs)
	x := p.expected(arg)
	if len(p.errs) > n {
		return nil
	}
	m, err := f(x)
	switch {
	case err != nil:
		p.fail(arg, op+": "+err.Error())
		return nil
	case m == nil:
		p.fail(arg, op+": the matcher function returned no matcher")
		return nil
	}
	if _, ok := m.(json.Marshaler); !ok {
		m = &opMatcher{op: op, arg: x, m: m}
	}
	return m
}

// validMatcherNames lists the built-in operators and the parser's custom
// ones, for the unknown-matcher message.
func (p *contractParser) validMatcherNames() string {
	names := matcherKeys
	if len(p.custom) > 0 {
		names = append(slices.Clip(matcherKeys), sortedKeys(p.custom)...)
		slices.Sort(names)
	}
	return strings.Join(names, ", ")
}

// opMatcher is a custom operator's Matcher that has no JSON form of its
// own: it matches as m does and is written as {op: arg}.
type opMatcher struct {
	op  string
	arg any
	m   Matcher
}

// Match implements Matcher.
func (m *opMatcher) Match(actual any, opts CompareOptions) bool { return m.m.Match(actual, opts) }

// MarshalJSON writes {op: arg}.
func (m *opMatcher) MarshalJSON() ([]byte, error) { return matcherJSON(m.op, m.arg) }
