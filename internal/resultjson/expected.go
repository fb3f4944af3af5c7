package resultjson

import (
	"strconv"
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
	if c == nil || SecretFound(res) {
		return e.AppendExpectedCalls(nil, res.ExpectedCalls)
	}
	key := expectedKey{e, combinationKey(res)}
	if b, ok := c.m.Load(key); ok {
		return b.([]byte), nil
	}
	b, err := e.AppendExpectedCalls(nil, res.ExpectedCalls)
	if err != nil {
		return nil, err
	}
	v, _ := c.m.LoadOrStore(key, b)
	return v.([]byte), nil
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
		b = strconv.AppendInt(b, int64(ch.Option), 10)
		b = append(b, ',')
	}
	return string(b)
}
