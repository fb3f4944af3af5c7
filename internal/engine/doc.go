// Package engine grades an agent's tool calls: it compares a [Trace] with a
// gold file or a Contract v2 and returns an [EvaluationResult]. It is the
// one place grading logic lives; the CLI, the service, regrades and the
// harness all call it. docs/grading.md is the specification every figure
// follows (its sections are cited as "SPEC section N").
//
// # Inputs
//
// [ParseContract] reads a contract or a gold file (a gold file is a
// contract whose required list is the gold list and nothing else). It
// validates contracts against the embedded JSON Schema
// (schemas/contract-v2.schema.json) and reports every problem with a JSON
// pointer in a [*ValidationError]. Traces come from package
// engine/format, which reads every supported trace format into a [Trace].
//
// # Evaluation
//
// [Evaluate] enumerates the combinations of the contract's alternatives
// groups (at most [MaxCombinations]), and for each one:
//
//   - fills the expected calls G from the trace (the k-th call of a tool
//     fills the k-th expected call of that tool), leaves out leftover calls
//     that match an optional entry, and scores the rest S;
//   - computes the metrics of SPEC section 3 ([Metrics]) and the composite
//     score with the effective [Weights].
//
// The highest score wins (ties within 1e-12 go to the earlier
// combination). The winner's metrics, the [Grade], the verdict, the
// evidence [Checks] and the ranked [Issue] list make the result.
//
// # Comparison and matchers
//
// Arguments are compared by [Compare]: numbers numerically (integer
// literals exactly at any size), strings after trimming Unicode white
// space, unless [CompareOptions].Strict. Expected values may hold a
// [Matcher] at any depth: the JSON operators $regex, $contains, $one_of,
// $any, $type and $approx become [Regex], [Contains], [OneOf], [Any],
// [Type] and [Approx]. Callers add their own: a Matcher value placed in
// the map of an [ExpectedCall]'s [Args] ([NewArgs]), or a custom operator ("$iata") that
// [ParseContractWith] reads with the [MatcherFunc] given in
// [ParseOptions] (injected per call: there is no registry).
//
// # Purity
//
// The engine does no I/O, starts no goroutines, reads no clock, logs
// nothing and changes no global state: the same inputs always give the
// same result, which is what makes regrades reproducible. It imports the
// standard library, the contract schema's validator and project packages
// that obey the same rule only (TestEngineIsPure). What it needs beyond
// that the caller injects: secret detection for the credentials check is
// a [SecretScanner] in [Options] (package secrets is the default, with
// gitleaks' rules). A [Contract] is immutable once parsed and may be
// shared by concurrent evaluations.
package engine
