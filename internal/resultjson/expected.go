package resultjson

import (
	"sync"

	"github.com/toolscore/toolscore/internal/engine"
)

// ExpectedCache keeps the JSON of the expected calls of results graded
// against one contract, per chosen combination of its alternatives and
// per mode: the expected list depends only on the contract and the chosen
// options (SPEC section 4.1). A result whose credentials check found a
// secret in the trace has it redacted in its expected calls too, so its
// expected calls are written without the cache. It holds at most one
// entry per combination and mode (a contract has at most 256
// combinations). Safe for concurrent use; the zero value is ready.
type ExpectedCache struct {
	m sync.Map // expectedKey → []byte
}

type expectedKey struct {
	mode        Mode
	combination string
}

// ExpectedCalls returns the JSON of res.ExpectedCalls as mode e's
// AppendExpectedCalls writes it (a nil list as []): from the cache when
// it holds the combination, else written and kept. The bytes may be
// shared with other results: read them, never modify them. The error is
// AppendExpectedCalls's. A nil cache writes them every time.
func (c *ExpectedCache) ExpectedCalls(e Mode, res *engine.EvaluationResult) ([]byte, error) {
	b, _, _, err := c.ExpectedCallsKey(e, res)
	return b, err
}

// ExpectedCallsKey is ExpectedCalls that also returns the key of the
// bytes: the chosen combination, "0,1," for options 0 and 1 of two
// alternatives groups ("" for a contract without alternatives or a gold
// list), with shared true. Every result graded against the same contract
// with the same key has the same expected calls. shared is false (and
// key "") when the bytes are the result's own: its credentials check
// found a secret (the cache is not used), or c is nil.
func (c *ExpectedCache) ExpectedCallsKey(e Mode, res *engine.EvaluationResult) (b []byte, key string, shared bool, err error) {
	if c == nil || SecretFound(res) {
		b, err = e.AppendExpectedCalls(nil, res.ExpectedCalls)
		return b, "", false, err
	}
	k := expectedKey{e, combinationKey(res)}
	if v, ok := c.m.Load(k); ok {
		return v.([]byte), k.combination, true, nil
	}
	if b, err = e.AppendExpectedCalls(nil, res.ExpectedCalls); err != nil {
		return nil, "", false, err
	}
	v, _ := c.m.LoadOrStore(k, b)
	return v.([]byte), k.combination, true, nil
}

// SecretFound reports whether res's credentials check found a secret in
// the trace (and so the engine redacted it throughout the result: the
// trace calls, the final answer and the expected calls).
func SecretFound(res *engine.EvaluationResult) bool {
	for i := range res.Checks.Items {
		ch := &res.Checks.Items[i]
		if ch.Name == engine.CheckCredentials && (ch.Status == engine.CheckFail || len(ch.Findings) > 0) {
			return true
		}
	}
	return false
}

// combinationKey identifies the chosen combination of a result: its
// options, one per alternatives group.
func combinationKey(res *engine.EvaluationResult) string {
	cm := res.Metrics.Contract
	if cm == nil || len(cm.Alternatives.Chosen) == 0 {
		return ""
	}
	var buf [32]byte
	b := buf[:0]
	for _, ch := range cm.Alternatives.Chosen {
		b = appendInt(b, ch.Option)
		b = append(b, ',')
	}
	return string(b)
}
