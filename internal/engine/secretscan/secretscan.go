// Package secretscan is the contract between the engine's credentials
// check (SPEC section 5; docs/checks.md "credentials") and a secret
// scanner: the engine hands the scanner every text of a trace that may
// hold a secret, in one call, and the scanner says which secrets it found
// in which text. The engine re-exports both types as engine.SecretScanner
// and engine.SecretFinding; they live in this package of their own, which
// imports nothing but the standard library, so that a scanner need not
// import the engine (package secrets, the default scanner, does not), as
// database/sql/driver does for database/sql.
package secretscan

import (
	"cmp"
	"context"
	"slices"
	"strings"
)

// Scanner finds secrets in texts. The engine calls it with what the
// credentials check examines: for an evaluation, every non-empty string
// value of every call's arguments (at any depth), the args_raw text of
// every call that has one, and the final answer, all in one call; for a
// contract, each string in its expected arguments (to hide secrets
// written there). The same call for an evaluation also gets the
// argument keys, every string value and key of every tool result, and
// every call's error text: their secrets are redacted in what the result
// shows, and are no findings of the check. Tool names and call ids are
// not scanned (they are redacted where a secret found elsewhere occurs
// in them).
//
// A Scanner must be safe for concurrent use by multiple goroutines, and
// deterministic: the same texts give the same findings, whatever was
// scanned before (regrades rely on it). It must not modify texts or keep
// them after it returns.
type Scanner interface {
	// ScanSecrets returns the secrets found in texts, in any order (the
	// engine sorts them and drops repeats). Each text is scanned whole
	// and on its own: a secret never spans two texts.
	//
	// The error is non-nil when the scan is incomplete: ctx ended
	// (ctx.Err()), or a rule could not run on some text. The findings
	// returned with an error are still used (their secrets are
	// redacted), and the credentials check then reports unknown.
	ScanSecrets(ctx context.Context, texts []string) ([]Finding, error)
}

// MinTextLen is an optional interface of a Scanner: MinTextLen returns a
// length in bytes below which no text holds a secret the Scanner finds,
// whatever the text. The engine then leaves shorter texts out of what it
// hands ScanSecrets (most argument keys and values are short), which
// changes no finding. A Scanner without it is handed every text.
type MinTextLen interface {
	// MinTextLen returns the length, at least 0; it never changes.
	MinTextLen() int
}

// Finding is one secret found in one text. The engine reports a finding
// whose fields break these rules as a scanner error.
type Finding struct {
	// Text is the index, in the texts given to ScanSecrets, of the text
	// the secret was found in.
	Text int
	// Rule is the non-empty id of the rule that found the secret, such as
	// "github-pat" or "generic-api-key" (gitleaks' rule ids for the
	// default scanner). It is what the credentials check reports as
	// Finding.Rule and writes in the marker "[REDACTED:<rule>]", so it
	// should be a short lower-case name.
	Rule string
	// Secret is the secret exactly as it occurs in the text: a non-empty
	// substring of texts[Text]. A finding names a secret by its text, not
	// its position: the engine replaces every occurrence of it, in every
	// text of the result, so offsets are not reported.
	Secret string
	// Prefix is the number of leading bytes of Secret that the rule fixes
	// literally at the start of every secret it finds ("ghp_" of a GitHub
	// token, "AKIA" of an AWS access key), in [0, len(Secret)]: they tell
	// the token's type and are no part of what is secret, so the engine
	// may show up to four characters of them in a masked value
	// ("ghp_****"). 0 when the rule fixes none.
	Prefix int
}

// Marker is what replaces a secret that rule found: "[REDACTED:<rule>]",
// the engine's marker in results.
func Marker(rule string) string { return "[REDACTED:" + rule + "]" }

// Redact returns texts with every secret s finds in them replaced by its
// Marker, in one ScanSecrets call; texts is not modified (the slice
// returned is texts itself when nothing is found). It is for what the
// service stores and shows beside results: task ids, agents, run ids,
// labels, contract bodies as shown. A secret found in one text is
// replaced in every text holding it, longer secrets first. A finding
// that breaks Finding's rules is ignored.
//
// The error is ScanSecrets' (ctx ended, say); the texts are returned
// with what was found replaced either way.
func Redact(ctx context.Context, s Scanner, texts []string) ([]string, error) {
	if s == nil || len(texts) == 0 {
		return texts, nil
	}
	found, err := s.ScanSecrets(ctx, texts)
	type pair struct{ secret, marker string }
	var pairs []pair
	for _, f := range found {
		if f.Text < 0 || f.Text >= len(texts) || f.Rule == "" || f.Secret == "" || !strings.Contains(texts[f.Text], f.Secret) {
			continue
		}
		pairs = append(pairs, pair{f.Secret, Marker(f.Rule)})
	}
	if len(pairs) == 0 {
		return texts, err
	}
	// Longer secrets first (one containing another is replaced whole),
	// then by text and marker, so the outcome does not depend on the
	// scanner's order.
	slices.SortFunc(pairs, func(a, b pair) int {
		return cmp.Or(cmp.Compare(len(b.secret), len(a.secret)), strings.Compare(a.secret, b.secret), strings.Compare(a.marker, b.marker))
	})
	args := make([]string, 0, 2*len(pairs))
	for i, p := range pairs {
		if i > 0 && p.secret == pairs[i-1].secret {
			continue
		}
		args = append(args, p.secret, p.marker)
	}
	r := strings.NewReplacer(args...)
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = r.Replace(t)
	}
	return out, err
}
