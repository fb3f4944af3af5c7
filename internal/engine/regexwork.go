package engine

import (
	"regexp"
	"regexp/syntax"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// MaxRegexWork bounds the regexp work a service runs for one trace: the
// bytes of the texts matched times the compiled instructions of the
// patterns matched against them (RegexSizes.RegexWork for a contract's
// and forbidden rules' $regex patterns, and the same measure for the
// regex conditions of OpenTelemetry grading rules). Go's regexp never
// backtracks, but it costs that product, and one match cannot be
// interrupted when an evaluation's timeout fires: `[a-z]{1,1000}x`
// against 1 MB of "a" runs for tens of seconds. 20,000,000 is a few
// hundred milliseconds at most, and far above what real contracts need
// (a 30-instruction pattern against 600 KB of a tool's arguments).
const MaxRegexWork = 20_000_000

// RegexSizes are, per tool name, the compiled instructions of the $regex
// patterns in the arguments of a contract's expected calls or forbidden
// rules for that tool (patterns that are a plain string test count 0).
// Go's regexp runs in time proportional to the text's length times the
// pattern's instructions, so RegexWork bounds what matching them against
// a trace costs.
type RegexSizes map[string]int

// RegexSizes returns the sizes of the $regex patterns in c's required,
// alternative and optional calls and its forbidden rules; nil when it has
// none.
func (c *Contract) RegexSizes() RegexSizes {
	var s RegexSizes
	add := func(tool string, args Args) {
		if n := args.compiled().regexSize(); n > 0 {
			if s == nil {
				s = RegexSizes{}
			}
			s[tool] += n
		}
	}
	for _, st := range c.Required {
		if st.Call != nil {
			add(st.Call.Tool, st.Call.Args)
		}
		if st.Group != nil {
			for _, opt := range st.Group.Options {
				for _, e := range opt {
					add(e.Tool, e.Args)
				}
			}
		}
	}
	for _, e := range c.Optional {
		add(e.Tool, e.Args)
	}
	s = s.addForbidden(c.Forbidden)
	return s
}

// ForbiddenRegexSizes returns the sizes of the $regex patterns in
// forbidden rules (Options.Forbidden); nil when they have none.
func ForbiddenRegexSizes(rules []ForbiddenCall) RegexSizes {
	var s RegexSizes
	return s.addForbidden(rules)
}

// RegexWorkWith returns RegexWork of t for s (contract, a contract's
// RegexSizes) and for the forbidden rules given apart from it
// (Options.Forbidden, forbidden), the two bounds separately.
func (s RegexSizes) RegexWorkWith(forbidden []ForbiddenCall, t *Trace) (contract, forbiddenWork int64) {
	contract = s.RegexWork(t)
	if len(forbidden) > 0 {
		forbiddenWork = ForbiddenRegexSizes(forbidden).RegexWork(t)
	}
	return contract, forbiddenWork
}

func (s RegexSizes) addForbidden(rules []ForbiddenCall) RegexSizes {
	for _, f := range rules {
		if n := f.Args.compiled().regexSize(); n > 0 {
			if s == nil {
				s = RegexSizes{}
			}
			s[f.Tool] += n
		}
	}
	return s
}

// RegexWork returns an upper bound of the regexp work (text bytes times
// pattern instructions) of grading t's calls against patterns of sizes s:
// for each call of a tool in s, the bytes of every string in its
// arguments times the tool's pattern instructions. The scorer matches a
// pattern only against the values of calls of its own tool, at most once
// per pair it compares, so the bound holds for every combination.
func (s RegexSizes) RegexWork(t *Trace) int64 {
	if len(s) == 0 {
		return 0
	}
	var w int64
	for i := range t.Calls {
		c := &t.Calls[i]
		if n := s[c.Tool]; n > 0 {
			w += int64(n) * int64(stringBytes(c.Args))
		}
	}
	return w
}

// stringBytes is the total length of the strings in v (keys excluded).
func stringBytes(v jsondoc.Value) int {
	switch v.Kind() {
	case jsondoc.String:
		s, _ := v.Str()
		return len(s)
	case jsondoc.Array:
		n := 0
		for _, e := range v.Elems() {
			n += stringBytes(e)
		}
		return n
	case jsondoc.Object:
		n := 0
		for _, e := range v.Members() {
			n += stringBytes(e)
		}
		return n
	}
	return 0
}

// regexSize is regexSizeOf of the expected value e was compiled from (0
// for nil).
func (e *cval) regexSize() int {
	if e == nil {
		return 0
	}
	switch e.op {
	case copObject, copArray, copContains, copOneOf:
		n := 0
		for i := range e.kids {
			n += e.kids[i].regexSize()
		}
		return n
	case copRegex, copRegexLit:
		return e.x.re.size()
	case copMatcher:
		return regexSizeOf(e.x.m)
	}
	return 0
}

// regexSizeOf sums the instructions of the general $regex patterns in an
// expected value.
func regexSizeOf(v any) int {
	switch x := v.(type) {
	case map[string]any:
		n := 0
		for _, e := range x {
			n += regexSizeOf(e)
		}
		return n
	case []any:
		n := 0
		for _, e := range x {
			n += regexSizeOf(e)
		}
		return n
	case *Regex:
		return x.size()
	case *OneOf:
		return regexSizeOf(x.Candidates)
	case *Contains:
		return regexSizeOf(x.Value)
	case *redactedMatcher:
		return regexSizeOf(x.m)
	case *opMatcher:
		return regexSizeOf(x.m)
	}
	return 0
}

// size is the number of instructions of the compiled pattern, 0 for a
// pattern matched as a plain string test.
func (m *Regex) size() int {
	if m.kind != regexGeneral {
		return 0
	}
	return RegexInstructions(m.re)
}

// RegexInstructions is the number of instructions of re's compiled
// program, the factor of the text's length that bounds matching re
// against a text; 0 when re's pattern does not compile again (never for
// a pattern compiled with regexp.Compile).
func RegexInstructions(re *regexp.Regexp) int {
	p, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return 0
	}
	prog, err := syntax.Compile(p.Simplify())
	if err != nil {
		return 0
	}
	return len(prog.Inst)
}
