package harness

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/format"
	"github.com/toolscore/toolscore/internal/secrets"
)

// Defaults of Options.
const (
	DefaultConcurrency = 4
	DefaultTimeout     = 60 * time.Second
	DefaultAttempts    = 3
	DefaultBackoff     = 250 * time.Millisecond
	// MaxBackoff caps the wait between two attempts.
	MaxBackoff = 10 * time.Second
)

// Options tune a run. The zero value is usable: every field has a default.
type Options struct {
	// Concurrency is the number of tasks in flight at once; 0 means
	// DefaultConcurrency (4).
	Concurrency int
	// Timeout bounds each attempt at the agent (and each call to the
	// Service); 0 means DefaultTimeout (60s). An attempt that runs out of
	// time is a transient failure.
	Timeout time.Duration
	// Attempts is the most times one task's agent is asked when it fails
	// transiently (see Transient), the first attempt included; 0 means
	// DefaultAttempts (3). An agent that answered is never asked again,
	// whatever the grade.
	Attempts int
	// Backoff is the wait after the first failed attempt; it doubles after
	// each further one, up to MaxBackoff. 0 means DefaultBackoff (250ms).
	Backoff time.Duration
	// Service, when set, grades and stores every task's trace in a
	// toolscore service under RunID; its results are the ones reported.
	// Nil means grading locally with the engine (contract_ref tasks then
	// cannot be graded).
	Service Service
	// RunID names the run; "" means a new random UUID.
	RunID string
	// Agent names the agent in results stored by Service ("" for none).
	Agent string
	// OnResult, when set, is called once per task as it finishes (in
	// finishing order, never concurrently), for progress display.
	OnResult func(*TaskResult)
	// SecretScanner finds secrets when grading locally (Service nil); nil
	// means a default one (package secrets) made for the run, or for each
	// RunTask call: pass one to share what it builds.
	SecretScanner engine.SecretScanner
	// MaxScoringCells, when > 0, bounds the scoring cells
	// (engine.Contract.ScoringCells) of grading locally (Service nil): a
	// task whose contract and trace need more is an error saying the
	// counts and the bound, not graded (the service sets
	// engine.MaxScoringCells). 0 means no bound.
	MaxScoringCells int64
	// MaxRegexWork, when > 0, bounds the regexp work of grading locally
	// (Service nil): the trace's argument bytes times the instructions of
	// the $regex patterns of its tools (engine.RegexSizes.RegexWork). A
	// task over it is an error saying the work and the bound, not graded
	// (the service sets engine.MaxRegexWork). 0 means no bound.
	MaxRegexWork int64
	// Grade, when set, grades each trace locally (Service nil) in place of
	// engine.Evaluate, after the MaxScoringCells and MaxRegexWork checks:
	// a front end's own bounds on grading. Its error fails the task, as
	// Evaluate's does.
	Grade func(ctx context.Context, c *engine.Contract, t engine.Trace, opts engine.Options) (*engine.EvaluationResult, error)
}

func (o *Options) withDefaults() Options {
	x := *o
	if x.Concurrency <= 0 {
		x.Concurrency = DefaultConcurrency
	}
	if x.Timeout <= 0 {
		x.Timeout = DefaultTimeout
	}
	if x.Attempts <= 0 {
		x.Attempts = DefaultAttempts
	}
	if x.Backoff <= 0 {
		x.Backoff = DefaultBackoff
	}
	if x.RunID == "" {
		x.RunID = newRunID()
	}
	if x.SecretScanner == nil {
		x.SecretScanner = secrets.New()
	}
	return x
}

// Run asks runner to perform every task of s, at most opts.Concurrency at
// once, and grades each answer with the task's contract (SPEC sections
// 3-6). A task whose agent failed (unreachable, timeout, 5xx after the
// retries, an unreadable trace) gets OutcomeError with the reason and the
// run goes on. The report lists the tasks in suite order whatever the
// finishing order.
//
// Errors: a *SuiteError (before any agent is asked) when a task has a
// contract_ref and opts.Service is nil; ctx.Err() when ctx ends first, in
// which case the report is still returned, unfinished tasks having
// OutcomeError "run cancelled".
func Run(ctx context.Context, s *Suite, runner Runner, opts Options) (*Report, error) {
	o := opts.withDefaults()
	if o.Service == nil {
		var errs []engine.FieldError
		for _, t := range s.Tasks {
			if t.ContractRef != "" {
				errs = append(errs, engine.FieldError{
					Pointer: t.Pointer() + "/contract_ref",
					Message: fmt.Sprintf("contract %q is in a registry: it needs a toolscore service (--server URL)", t.ContractRef),
				})
			}
		}
		if len(errs) > 0 {
			return nil, &SuiteError{Errors: errs}
		}
	}
	if o.Service == nil {
		warmUp(ctx, s, o.SecretScanner)
	}
	start := time.Now()
	rep := &Report{Suite: s.Name, RunID: o.RunID, StartedAt: start.UTC(), Tasks: make([]TaskResult, len(s.Tasks))}
	var mu sync.Mutex // serialises OnResult
	done := func(i int) {
		if o.OnResult != nil {
			mu.Lock()
			o.OnResult(&rep.Tasks[i])
			mu.Unlock()
		}
	}
	var g errgroup.Group
	g.SetLimit(o.Concurrency)
	for i, t := range s.Tasks {
		if ctx.Err() != nil {
			rep.Tasks[i] = cancelled(t)
			done(i)
			continue
		}
		g.Go(func() error {
			if ctx.Err() != nil { // cancelled while waiting for a slot
				rep.Tasks[i] = cancelled(t)
			} else {
				rep.Tasks[i] = runTask(ctx, t, runner, &o)
			}
			done(i)
			return nil
		})
	}
	_ = g.Wait() // tasks report failures as outcomes, never as errors
	rep.Duration = time.Since(start)
	rep.Summary = Summarize(rep.Tasks)
	return rep, ctx.Err()
}

// warmUp grades an empty trace once, before the clock starts, so that the
// engine's one-time set-up (loading the secret-detection rules takes a
// few hundred milliseconds) is not charged to the first tasks' times.
func warmUp(ctx context.Context, s *Suite, scanner engine.SecretScanner) {
	for _, t := range s.Tasks {
		if t.Contract != nil {
			_, _ = engine.Evaluate(ctx, t.Contract, engine.Trace{}, engine.Options{MinScore: t.MinScore, SecretScanner: scanner})
			return
		}
	}
}

// cancelled is the result of a task never started because the run ended.
func cancelled(t *Task) TaskResult {
	return TaskResult{ID: t.ID, Outcome: OutcomeError, Reason: "run cancelled", Labels: t.Labels}
}

// runTask asks the agent for one task and grades its answer.
func runTask(ctx context.Context, t *Task, runner Runner, o *Options) TaskResult {
	start := time.Now()
	tr := TaskResult{ID: t.ID, Labels: t.Labels}
	fail := func(reason string) TaskResult {
		tr.Outcome, tr.Reason, tr.Duration = OutcomeError, reason, time.Since(start)
		return tr
	}
	req := &Request{TaskID: t.ID, Input: t.Input, Tools: t.Tools}
	answer, attempts, err := retry(ctx, o, func(ctx context.Context) ([]byte, error) { return runner.Run(ctx, req) })
	tr.Attempts = attempts
	if err != nil {
		return fail(err.Error())
	}
	parsed, doc, err := parseAnswer(answer)
	if err != nil {
		return fail("unreadable trace: " + err.Error())
	}
	tr.Format, tr.FormatWarning = parsed.Format, parsed.Warning
	if o.Service != nil {
		ereq := &EvaluationRequest{
			RunID: o.RunID, TaskID: t.ID, Agent: o.Agent, ContractRef: t.ContractRef,
			Trace: parsed.Trace, MinScore: t.MinScore, Labels: t.Labels,
		}
		if json.Valid(doc) {
			// The agent's own document, so the service records its format.
			ereq.Document, ereq.Format = doc, parsed.Format
		}
		if t.Contract != nil && t.Contract.Gold {
			ereq.Gold = t.ContractJSON
		} else {
			ereq.Contract = t.ContractJSON
		}
		var stored *StoredResult
		_, _, err = retry(ctx, o, func(ctx context.Context) ([]byte, error) {
			var err error
			stored, err = o.Service.Evaluate(ctx, ereq)
			return nil, err
		})
		if err != nil {
			return fail("grading: " + err.Error())
		}
		tr.EvaluationID, tr.Result = stored.ID, stored.Result
	} else {
		if cells := t.Contract.ScoringCells(len(parsed.Trace.Calls)); o.MaxScoringCells > 0 && cells > o.MaxScoringCells {
			return fail(fmt.Sprintf("grading: the contract's %d expected calls (required and every alternative's) against the trace's %d calls need %d scoring cells, over the limit of %d", t.Contract.ExpectedCallCount(), len(parsed.Trace.Calls), cells, o.MaxScoringCells))
		}
		if o.MaxRegexWork > 0 {
			if work := t.Contract.RegexSizes().RegexWork(&parsed.Trace); work > o.MaxRegexWork {
				return fail(fmt.Sprintf("grading: matching the contract's $regex patterns against the trace's arguments could take %d steps (argument bytes times pattern instructions), over the limit of %d", work, o.MaxRegexWork))
			}
		}
		grade := engine.Evaluate
		if o.Grade != nil {
			grade = o.Grade
		}
		res, err := grade(ctx, t.Contract, parsed.Trace, engine.Options{MinScore: t.MinScore, SecretScanner: o.SecretScanner})
		if err != nil {
			return fail("grading: " + err.Error())
		}
		tr.Result = res
	}
	tr.Outcome = OutcomeFail
	if tr.Result.Passed {
		tr.Outcome = OutcomePass
	}
	tr.Duration = time.Since(start)
	return tr
}

// retry calls fn with a per-attempt timeout until it succeeds, fails with
// an error that is not transient, or o.Attempts attempts have failed,
// waiting o.Backoff, then twice as long each time, between attempts. An
// attempt whose own deadline passed counts as a transient timeout. It
// returns fn's value, the number of attempts made and the last error.
func retry(ctx context.Context, o *Options, fn func(context.Context) ([]byte, error)) ([]byte, int, error) {
	wait := o.Backoff
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, o.Timeout)
		v, err := fn(actx)
		timedOut := errors.Is(actx.Err(), context.DeadlineExceeded)
		cancel()
		if err == nil {
			return v, attempt, nil
		}
		if ctx.Err() != nil {
			return nil, attempt, errors.New("run cancelled")
		}
		if timedOut {
			err = Transient(fmt.Errorf("no answer within %s", o.Timeout))
		}
		if !IsTransient(err) {
			return nil, attempt, err
		}
		if attempt >= o.Attempts {
			if attempt > 1 {
				err = fmt.Errorf("%w (after %d attempts)", err, attempt)
			}
			return nil, attempt, err
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, attempt, errors.New("run cancelled")
		case <-timer.C:
		}
		wait = min(2*wait, MaxBackoff)
	}
}

// ParseAnswer reads an agent's answer: a trace document in any format the
// engine reads (format.Parse with auto-detection). An answer that is a
// JSON object with a "trace" member is an envelope {"trace": DOC,
// "final_answer"?: string, "format"?: name}: DOC is read, as the named
// format when one is given. A string "final_answer" member, in the
// envelope or at the top of the document, is the trace's final answer and
// takes precedence over one the format carries.
//
// Errors wrap engine.ErrInvalidTrace.
func ParseAnswer(answer []byte) (*format.Parsed, error) {
	p, _, err := parseAnswer(answer)
	return p, err
}

// parseAnswer is ParseAnswer that also returns the trace document read
// (the envelope's "trace", or the whole answer).
func parseAnswer(answer []byte) (*format.Parsed, []byte, error) {
	doc, name := answer, "auto"
	var finalAnswer *string
	if t := bytes.TrimSpace(answer); len(t) > 0 && t[0] == '{' {
		var top struct {
			Trace       json.RawMessage `json:"trace"`
			Format      *string         `json:"format"`
			FinalAnswer json.RawMessage `json:"final_answer"`
		}
		// A failure here is left for format.Parse to report with its
		// location.
		if json.Unmarshal(t, &top) == nil {
			if top.Trace != nil {
				doc = top.Trace
				if top.Format != nil && *top.Format != "" {
					name = *top.Format
				}
			}
			if len(top.FinalAnswer) > 0 && top.FinalAnswer[0] == '"' {
				var s string
				if json.Unmarshal(top.FinalAnswer, &s) == nil {
					finalAnswer = &s
				}
			}
		}
	}
	p, err := format.Parse(doc, name)
	if err != nil {
		return nil, nil, err
	}
	if finalAnswer != nil {
		p.Trace.FinalAnswer = finalAnswer
	}
	return p, doc, nil
}

// newRunID returns a random (version 4) UUID.
func newRunID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
