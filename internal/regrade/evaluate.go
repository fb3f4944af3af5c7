package regrade

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/regrade/reeval"
	"github.com/toolscore/toolscore/internal/resultjson"
)

// regradeOne re-evaluates one stored original against contract c (target
// identifies it; sizes are c.RegexSizes()) for regrade regradeID and returns the new result, id id,
// created at now and linked to o and the regrade as WriteRegradeChunk
// stores it, or the reason the stored row cannot be regraded; scanner
// finds secrets; rd reads the stored calls (the calls of the previous
// original it read are no longer used). Only ctx ending is an error. The
// original's failed credentials check carries over (reeval.Evaluate). An
// original whose regexp work against c and its stored forbidden rules
// could exceed engine.MaxRegexWork is not graded (the bound the service
// puts on an evaluation, which a regrade's new contract could cross);
// nor is one whose calls against c need more than
// engine.MaxScoringCells scoring cells (Contract.ScoringCells), that
// bound's likewise.
func regradeOne(ctx context.Context, scanner engine.SecretScanner, rd *reeval.Reader, c *engine.Contract, sizes engine.RegexSizes, target record.ContractRef, o *record.RegradeOriginal, regradeID, id uuid.UUID, now time.Time, expected *resultjson.ExpectedCache) (record.RegradeOutcome, error) {
	out := record.RegradeOutcome{Original: o.ResultSummary, OriginalIssue: o.FirstIssue}
	fail := func(reason string) (record.RegradeOutcome, error) {
		out.Failure = reason
		return out, nil
	}
	if o.Unreadable != "" {
		return fail(o.Unreadable)
	}
	opts, err := reeval.Options(o.Options)
	if err != nil {
		return fail(err.Error())
	}
	calls, err := rd.Calls(o.TraceCalls)
	if err != nil {
		return fail(err.Error())
	}
	if cells := c.ScoringCells(len(calls)); cells > engine.MaxScoringCells {
		return fail(fmt.Sprintf("the contract's %d expected calls (required and every alternative's) against this result's %d calls need %d scoring cells, over the limit of %d", c.ExpectedCallCount(), len(calls), cells, engine.MaxScoringCells))
	}
	w, fw := sizes.RegexWorkWith(opts.Forbidden, &engine.Trace{Calls: calls})
	if work := w + fw; work > engine.MaxRegexWork {
		return fail(fmt.Sprintf("matching the $regex patterns of the contract and the stored forbidden rules against this result's arguments could take %d steps (argument bytes times pattern instructions), over the limit of %d", work, engine.MaxRegexWork))
	}
	var failed *engine.Check
	if len(o.FailedCredentials) > 0 {
		failed = &engine.Check{}
		if err := json.Unmarshal(o.FailedCredentials, failed); err != nil {
			return fail("checks: credentials: " + err.Error())
		}
	}
	opts.SecretScanner = scanner
	res, err := reeval.Evaluate(ctx, c, calls, o.FinalAnswer, opts, failed)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return out, ctxErr
		}
		return fail("evaluate: " + err.Error())
	}
	r := &record.Result{
		ResultSummary: record.ResultSummary{
			ID: id, ProjectID: o.ProjectID, CreatedAt: now, Contract: target,
			TaskID: o.TaskID, RunID: o.RunID, Agent: o.Agent, Labels: o.Labels, Format: o.Format,
			Score: res.Score, Grade: string(res.Grade), Passed: res.Passed, MinScore: res.MinScore, SafetyGate: res.SafetyGate,
			RegradeOf: o.ID, RegradeID: regradeID,
		},
		Options:     o.Options,
		FinalAnswer: res.FinalAnswer,
	}
	// Encoding is most of a regrade's CPU: reuse what is known to be the
	// same JSON. Without a credential finding the engine returns the
	// stored calls unchanged (redaction is the only change it makes), and
	// the expected calls depend only on the contract and the chosen
	// combination (expected leaves out the results with a finding), so
	// the store keeps one copy of them per regrade and combination.
	if !resultjson.SecretFound(res) {
		r.TraceCalls, r.SharesTrace = o.TraceCalls, true
	} else {
		r.TraceCalls = resultjson.Marshal.AppendToolCalls(nil, res.TraceCalls)
	}
	if r.ExpectedCalls, r.ExpectedKey, r.SharesExpected, err = expected.ExpectedCallsKey(resultjson.Marshal, res); err != nil {
		return fail("encode result: " + err.Error())
	}
	// Byte-identical to json.Marshal (nil lists as []); only the metrics
	// can fail, with json.Marshal's error.
	r.ScoredIndexes = resultjson.AppendInts(nil, res.ScoredIndexes)
	if r.Metrics, err = resultjson.Marshal.AppendMetrics(nil, &res.Metrics); err != nil {
		return fail("encode result: " + err.Error())
	}
	r.Checks = resultjson.Marshal.AppendChecks(nil, &res.Checks)
	r.Issues = resultjson.Marshal.AppendIssues(nil, res.Issues)
	out.Result = r
	return out, nil
}
