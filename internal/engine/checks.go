package engine

// checks runs the evidence checks of SPEC section 5.
// TODO(issue 3): replaced by the real checks.
func (ev *evaluation) checks() Checks { return Checks{Items: []Check{}} }

// issues builds the ranked "top issues to fix" list.
// TODO(issue 3): replaced by the real list.
func (ev *evaluation) issues() []Issue { return []Issue{} }

// redact fills res.TraceCalls, res.ScoredCalls and res.FinalAnswer from
// the trace, replacing detected secrets unless Options.KeepSecrets.
// TODO(issue 3): replaced by the real redaction.
func (ev *evaluation) redact(res *EvaluationResult) {
	res.TraceCalls = ev.trace.Calls
	res.ScoredCalls = make([]ToolCall, len(ev.scored))
	for i, j := range ev.scored {
		res.ScoredCalls[i] = ev.trace.Calls[j]
	}
	res.FinalAnswer = ev.trace.FinalAnswer
}
