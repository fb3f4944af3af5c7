package secretrules

import (
	"fmt"
	"math"
	"slices"
)

// KeywordAutomaton tells which rules carry a keyword that occurs in a
// text: an Aho-Corasick automaton over the rules' lower-case keywords,
// compiled into a dense DFA over byte classes. It stands in for gitleaks'
// own keyword prefilter (an Aho-Corasick trie over the same keywords,
// matched against the lower-cased text) and gives the same answers.
// Keywords (rules.go) is the one for Rules, generated with them, so a
// process pays nothing to build it. It is read-only and safe for
// concurrent use.
type KeywordAutomaton struct {
	// Class maps a byte to its class: 0 for bytes in no keyword, else
	// 1..NumClasses-1.
	Class [256]uint8
	// NumClasses is the number of byte classes.
	NumClasses int
	// Next is the transition table: Next[s*NumClasses+c] is the state
	// after reading a byte of class c in state s (state 0 is the start).
	Next []uint16
	// OutStart indexes Outs: the rules whose keywords end at state s (its
	// own keyword and every keyword that is a suffix of it) are
	// Outs[OutStart[s]:OutStart[s+1]], in increasing order.
	OutStart []uint32
	// Outs are the rule indexes (into the rules the automaton was built
	// for) of every state, one after the other.
	Outs []uint16
}

// NewKeywordAutomaton builds the automaton for the keywords of rules
// (lower-case, as gitleaks matches them); the rule indexes it reports are
// indexes into rules. The error is non-nil when a keyword is empty or the
// keywords need more states, byte classes or rules than the table holds
// (65535, 254 and 65535).
func NewKeywordAutomaton(rules []Rule) (*KeywordAutomaton, error) {
	if len(rules) > math.MaxUint16 {
		return nil, fmt.Errorf("%d rules, more than %d", len(rules), math.MaxUint16)
	}
	// The distinct keywords, in order of first appearance, and the rules
	// that carry each.
	index := map[string]int{}
	var keywords []string
	var rulesOf [][]uint16
	for i, r := range rules {
		for _, k := range r.Keywords {
			j, ok := index[k]
			if !ok {
				j = len(keywords)
				index[k] = j
				keywords = append(keywords, k)
				rulesOf = append(rulesOf, nil)
			}
			rulesOf[j] = append(rulesOf[j], uint16(i))
		}
	}
	ka := &KeywordAutomaton{NumClasses: 1}
	// The trie has a state per distinct keyword prefix (and the start).
	sorted := slices.Sorted(slices.Values(keywords))
	size := 1
	for i, k := range sorted {
		if k == "" {
			return nil, fmt.Errorf("empty keyword")
		}
		lcp := 0
		if i > 0 {
			p := sorted[i-1]
			for lcp < len(p) && lcp < len(k) && p[lcp] == k[lcp] {
				lcp++
			}
		}
		size += len(k) - lcp
		for i := 0; i < len(k); i++ {
			if ka.Class[k[i]] == 0 {
				if ka.NumClasses == math.MaxUint8 {
					return nil, fmt.Errorf("keywords use more than %d distinct bytes", math.MaxUint8-1)
				}
				ka.Class[k[i]] = uint8(ka.NumClasses)
				ka.NumClasses++
			}
		}
	}
	if size > math.MaxUint16 {
		return nil, fmt.Errorf("keywords need %d automaton states, more than %d", size, math.MaxUint16)
	}
	n := ka.NumClasses
	// The trie: next holds only child links (0: none; the start state is
	// nobody's child), out the rules of the keywords ending at each
	// state.
	next := make([]uint16, size*n)
	out := make([][]uint16, 1, size)
	states := 1
	for i, k := range keywords {
		s := 0
		for j := 0; j < len(k); j++ {
			t := &next[s*n+int(ka.Class[k[j]])]
			if *t == 0 {
				*t = uint16(states)
				states++
				out = append(out, nil)
			}
			s = int(*t)
		}
		out[s] = append(out[s], rulesOf[i]...)
	}
	// Breadth first, turn the trie into the DFA: a missing child link
	// becomes the transition of the state's failure state (the longest
	// proper suffix of its path that is a trie state), already final
	// since it is shallower; each state inherits the failure state's
	// rules.
	fail := make([]uint16, states)
	queue := make([]uint16, 0, states)
	for c := range n {
		if u := next[c]; u != 0 {
			queue = append(queue, u)
		}
	}
	for qi := 0; qi < len(queue); qi++ {
		s := int(queue[qi])
		f := int(fail[s])
		for c := range n {
			u := next[s*n+c]
			if u == 0 {
				next[s*n+c] = next[f*n+c]
				continue
			}
			fu := next[f*n+c]
			fail[u] = fu
			out[u] = append(out[u], out[fu]...)
			queue = append(queue, u)
		}
	}
	ka.Next = next
	ka.OutStart = make([]uint32, states+1)
	for s, rs := range out {
		slices.Sort(rs)
		rs = slices.Compact(rs)
		ka.Outs = append(ka.Outs, rs...)
		ka.OutStart[s+1] = uint32(len(ka.Outs))
	}
	return ka, nil
}

// Match calls mark with every rule that carries a keyword occurring in
// text (lower-cased as gitleaks matches it), once per occurrence.
func (ka *KeywordAutomaton) Match(text []byte, mark func(rule int)) {
	next, n, outStart := ka.Next, ka.NumClasses, ka.OutStart
	s := 0
	for _, b := range text {
		s = int(next[s*n+int(ka.Class[b])])
		if lo, hi := outStart[s], outStart[s+1]; lo != hi {
			for _, r := range ka.Outs[lo:hi] {
				mark(int(r))
			}
		}
	}
}
