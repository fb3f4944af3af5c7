package engine

// MaxScoringCells bounds the scoring cells (Contract.ScoringCells) a
// service grades one trace with. Evaluate keeps a figure of four bytes
// for each cell, allocated and cleared before any scoring, so the bound
// is 64 MB of memory; it is far above what real pairings need (40
// expected calls in 8 two-option groups against 50 calls are 2,000
// cells) and a 1 MiB request body can ask for over a billion.
const MaxScoringCells = 16_000_000

// ScoringCells returns the number of (expected call, trace call) pairs
// Evaluate keeps a figure for when grading a trace of traceCalls calls
// against c: every expected call of c's required steps and of every
// option of its alternatives groups (each counted once, however many
// combinations hold it), times traceCalls. Optional calls and forbidden
// rules are not counted: they are matched against each trace call
// without such a table. 0 for traceCalls <= 0.
func (c *Contract) ScoringCells(traceCalls int) int64 {
	if traceCalls <= 0 {
		return 0
	}
	return int64(c.ExpectedCallCount()) * int64(traceCalls)
}

// ExpectedCallCount returns the number of expected calls of c's required
// steps and of every option of its alternatives groups: a plain call
// counts one, a group the calls of all its options.
func (c *Contract) ExpectedCallCount() int {
	n := 0
	for _, st := range c.Required {
		if st.Call != nil {
			n++
			continue
		}
		if st.Group != nil {
			for _, opt := range st.Group.Options {
				n += len(opt)
			}
		}
	}
	return n
}
