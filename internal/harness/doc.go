// Package harness runs an agent over a suite of tasks and grades each
// task's trace with the task's own contract (issue 7).
//
// # Suites
//
// A suite (schemas/suite.schema.json, JSON or YAML) names a list of
// tasks; each has an input (a prompt or chat messages), the tools offered
// to the agent, and exactly one of an inline Contract v2, an inline gold
// file or a registry contract_ref. [ParseSuite] validates the whole suite,
// every embedded contract included, before any agent is asked, and
// reports every problem with its JSON pointer ([SuiteError]).
//
// # Agents
//
// A [Runner] reaches the agent: [HTTPRunner] POSTs a [Request] to a URL,
// [CommandRunner] runs a command with the request on stdin, and
// [RecordedRunner] reads recorded traces from a directory. The answer is a
// trace in any format the engine reads ([ParseAnswer]).
//
// # Runs
//
// [Run] asks the agent for every task with bounded concurrency, a
// per-attempt timeout and retries with exponential backoff on transport
// failures only (see [Transient]); an agent that answered is never asked
// again. Each answer is graded with the engine (SPEC sections 3-6), or by
// a toolscore service through [Service], which also stores it under the
// run's id. A task whose agent failed is [OutcomeError] with the reason;
// the run goes on. The [Report] lists the tasks in suite order with a
// [Summary], and is written by [WriteText], [WriteJSON] and [WriteJUnit]
// (the Markdown and HTML reports, with a baseline's comparison, are
// internal/report's).
package harness
