package api

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/toolscore/toolscore/internal/engine"
)

// serve runs b's handler on a real HTTP server (deadlines and
// disconnects need one) and returns its address.
func serve(t *testing.T, b *testBundle) string {
	t.Helper()
	srv := httptest.NewServer(b.s.Handler())
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// slowBody opens a connection and sends a POST's headers and the first
// part of a body of n bytes, then nothing more; it returns the
// connection (closed when the test ends).
func slowBody(t *testing.T, addr, path string, n int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"trace\": ", path, n)
	return c
}

// readStatus reads the status code of the answer on c.
func readStatus(t *testing.T, c net.Conn) int {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("read the answer: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// httpRequests returns toolscore_http_requests_total for a route, method
// and code.
func (b *testBundle) httpRequests(t *testing.T, route, method, code string) float64 {
	t.Helper()
	return value(t, b.s.metrics.httpRequests.WithLabelValues(route, method, code))
}

func TestContentEncoding(t *testing.T) {
	b := setup(t, nil)
	for _, enc := range []string{"gzip", "identity, br", "deflate"} {
		p := problemOf(t, b.do(t, "POST", "/v1/validate", contractA, "Content-Encoding", enc), 415, "unsupported-media-type")
		if len(p.Errors) != 1 || p.Errors[0].Parameter != "Content-Encoding" {
			t.Errorf("%s: %+v", enc, p)
		}
	}
	if rec := b.do(t, "POST", "/v1/validate", contractA, "Content-Encoding", "identity"); rec.Code != 200 {
		t.Errorf("identity = %d", rec.Code)
	}
}

func TestSlowBodyTimesOut(t *testing.T) {
	b := setup(t, func(c *Config) { c.BodyTimeout = 300 * time.Millisecond })
	addr := serve(t, b)
	c := slowBody(t, addr, "/v1/evaluations", 1000)
	if got := readStatus(t, c); got != http.StatusRequestTimeout {
		t.Errorf("slow body = %d, want 408", got)
	}
	if n := b.httpRequests(t, "/v1/evaluations", "POST", "408"); n != 1 {
		t.Errorf("408s counted = %v, want 1", n)
	}
}

// TestSlowBodyHoldsNoEvaluationSlot: a client sending its body slowly holds
// a body reader, not the evaluation slot (MaxInFlight 1 here), and the body
// readers are capped.
func TestSlowBodyHoldsNoEvaluationSlot(t *testing.T) {
	b := setup(t, func(c *Config) {
		c.BodyTimeout, c.MaxInFlight, c.MaxBodyReaders = 5*time.Second, 1, 2
	})
	addr := serve(t, b)
	slow := slowBody(t, addr, "/v1/evaluations", 1000)
	// Wait until the server reads the slow body (it holds a reader).
	for len(b.s.bodyReaders) != 1 {
		runtime.Gosched()
	}
	post := func() int {
		resp, err := http.Post("http://"+addr+"/v1/evaluations?store=false", "application/json",
			strings.NewReader(`{"contract": `+contractA+`, "trace": `+traceGood+`}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post(); got != 200 {
		t.Errorf("an evaluation while a slow body is received = %d, want 200", got)
	}
	// With both readers held, a third body is refused at once.
	slowBody(t, addr, "/v1/validate", 1000)
	for len(b.s.bodyReaders) != 2 {
		runtime.Gosched()
	}
	if got := post(); got != http.StatusTooManyRequests {
		t.Errorf("with every body reader held = %d, want 429", got)
	}
	slow.Close()
}

// TestClientGoneMidBody: a client that closes its connection mid-body is
// counted as 499, not as a 400 for bad JSON.
func TestClientGoneMidBody(t *testing.T) {
	b := setup(t, nil)
	addr := serve(t, b)
	c := slowBody(t, addr, "/v1/evaluations", 1000)
	for len(b.s.bodyReaders) != 1 {
		runtime.Gosched()
	}
	c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for b.httpRequests(t, "/v1/evaluations", "POST", "499") != 1 {
		if time.Now().After(deadline) {
			t.Fatal("no 499 counted")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := b.httpRequests(t, "/v1/evaluations", "POST", "400"); n != 0 {
		t.Errorf("400s counted = %v, want 0", n)
	}
}

// TestValidateUsesThePool: contract validation and registration wait for
// the worker pool like evaluations (429 when it is full).
func TestValidateUsesThePool(t *testing.T) {
	b := setup(t, func(c *Config) { c.Workers, c.Queue = 1, 1 })
	release := fillPool(t, b.s.pool)
	problemOf(t, b.do(t, "POST", "/v1/validate", contractA), 429, "queue-full")
	problemOf(t, b.do(t, "POST", "/v1/contracts/flights/versions", contractA), 429, "queue-full")
	release()
	if rec := b.do(t, "POST", "/v1/validate", contractA); rec.Code != 200 {
		t.Errorf("validate after release = %d", rec.Code)
	}
}

// regexContract returns a contract of n expected calls with compiled
// matchers and a unique marker, about 120 bytes per call.
func regexContract(n int, marker string) string {
	var sb strings.Builder
	sb.WriteString(`{"contract_version": 2, "description": "` + marker + `", "required": [`)
	for i := range n {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"tool": "t%d", "args": {"q": {"$regex": "^a%d(b|c)+d$"}, "n": {"$type": "number"}}}`, i, i)
	}
	sb.WriteString("]}")
	return sb.String()
}

func TestByteCache(t *testing.T) {
	c := newByteCache(800)
	pc := func() *parsedContract { return &parsedContract{} }
	k := func(i int) cacheKey { return cacheKey{ref: strconv.Itoa(i)} }
	for i := range 10 {
		c.add(k(i), nil, pc(), 100)
	}
	if b, n := c.size(); b != 800 || n != 8 {
		t.Errorf("size = %d bytes, %d entries; want 800, 8", b, n)
	}
	if _, ok := c.get(k(0), nil); ok {
		t.Error("the oldest entry was kept")
	}
	if _, ok := c.get(k(9), nil); !ok {
		t.Error("the newest entry was evicted")
	}
	c.add(k(9), nil, pc(), 50) // replaced
	if b, _ := c.size(); b != 750 {
		t.Errorf("after a replacement: %d bytes, want 750", b)
	}
	c.add(k(99), nil, pc(), 201) // over a quarter of the budget
	if _, ok := c.get(k(99), nil); ok {
		t.Error("an entry over a quarter of the budget was kept")
	}
	raw := []byte(`{"a": 1}`)
	c.add(cacheKey{hash: 7}, raw, pc(), 10)
	if _, ok := c.get(cacheKey{hash: 7}, []byte(`{"a": 2}`)); ok {
		t.Error("a hash hit with other bytes counted as a hit")
	}
	if _, ok := c.get(cacheKey{hash: 7}, raw); !ok {
		t.Error("a hit with the same bytes missed")
	}
}

// TestParsedCostBoundsHeap: the cost charged for a parsed contract is at
// least what it keeps on the heap.
func TestParsedCostBoundsHeap(t *testing.T) {
	raw := []byte(regexContract(2000, "cost"))
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	kept := make([]*engine.Contract, 5)
	var cost int64
	for i := range kept {
		c, n, err := parseMeasured(raw)
		if err != nil {
			t.Fatal(err)
		}
		kept[i], cost = c, n
	}
	retained := (heap() - before) / uint64(len(kept))
	runtime.KeepAlive(kept)
	if uint64(cost) < retained {
		t.Errorf("cost %d < retained %d bytes (raw %d)", cost, retained, len(raw))
	}
	t.Logf("raw %d bytes, retained %d, cost %d", len(raw), retained, cost)
}

// TestInlineCacheFlood: many distinct large inline contracts keep the
// cache within its budget (the issue: 90 of 743 KB held 3.8 GiB).
func TestInlineCacheFlood(t *testing.T) {
	const budget = 32 << 20
	b := setup(t, func(c *Config) { c.ContractCacheBytes = budget })
	for i := range 30 {
		body := `{"contract": ` + regexContract(200, uuid.NewString()) + `, "trace": [{"tool": "t0", "args": {"q": "a0bd", "n": 0}}]}`
		if rec := b.do(t, "POST", "/v1/evaluations?store=false", body); rec.Code != 200 {
			t.Fatalf("evaluation %d = %d %s", i, rec.Code, rec.Body)
		}
	}
	bytes, n := b.s.contracts.entries.size()
	if bytes > budget || n >= 30 || n == 0 {
		t.Errorf("cache = %d bytes in %d entries; want at most %d bytes, fewer than 30 entries", bytes, n, budget)
	}
	t.Logf("cache: %d bytes, %d entries", bytes, n)
}

// TestNumberAndDepthLimits: a numeric literal over the JSON layer's limit,
// nesting deeper than its cap and numbers outside float64 are 422 naming
// the value's pointer, wherever they are.
func TestNumberAndDepthLimits(t *testing.T) {
	b := setup(t, nil)
	long := strings.Repeat("7", 1_040_000)
	deep := strings.Repeat(`{"a":`, 9990) + "1" + strings.Repeat("}", 9990)
	deeper := strings.Repeat(`{"a":`, 10_500) + "1" + strings.Repeat("}", 10_500)
	c := `{"contract_version": 2, "required": [{"tool": "search"}]}`
	tests := []struct {
		name, target, body, slug, ptr string
	}{
		{"trace", "/v1/evaluations?store=false", `{"contract": ` + c + `, "trace": [{"tool": "search", "args": {"n": ` + long + `}}]}`,
			"invalid-trace", "/trace/0/args/n"},
		{"contract", "/v1/evaluations?store=false", `{"contract": {"contract_version": 2, "required": [{"tool": "search", "args": {"n": ` + long + `}}]}, "trace": []}`,
			"invalid-contract", "/contract/required/0/args/n"},
		{"gold", "/v1/evaluations?store=false", `{"gold": [{"tool": "search", "args": {"n": ` + long + `}}], "trace": []}`,
			"invalid-contract", "/gold/0/args/n"},
		{"min_score", "/v1/evaluations?store=false", `{"contract": ` + c + `, "trace": [], "min_score": 0.` + long + `}`,
			"invalid-request", "/min_score"},
		{"weights", "/v1/evaluations?store=false", `{"contract": ` + c + `, "trace": [], "weights": {"argument_f1": 1` + long + `}}`,
			"invalid-request", "/weights/argument_f1"},
		{"forbidden", "/v1/evaluations?store=false", `{"contract": ` + c + `, "trace": [], "forbidden": [{"tool": "x", "args": {"n": ` + long + `}}]}`,
			"invalid-request", "/forbidden/0/args/n"},
		{"validate", "/v1/validate", `{"contract_version": 2, "required": [{"tool": "search", "args": {"n": ` + long + `}}]}`,
			"invalid-contract", "/required/0/args/n"},
		{"deep contract", "/v1/evaluations?store=false", `{"contract": {"contract_version": 2, "required": [{"tool": "search", "args": {"a": ` + deep + `}}]}, "trace": []}`,
			// The limit counts from the top of the request, which the
			// contract is one level inside.
			"invalid-contract", "/contract/required/0/args" + strings.Repeat("/a", 996)},
		{"deep trace, past encoding/json's cap too", "/v1/evaluations?store=false", `{"contract": ` + c + `, "trace": ` + deeper + `}`,
			"invalid-trace", "/trace" + strings.Repeat("/a", 999)},
		{"deep contract to validate, past encoding/json's cap too", "/v1/validate", `{"contract_version": 2, "required": [{"tool": "search", "args": {"a": ` + deeper + `}}]}`,
			"invalid-contract", "/required/0/args" + strings.Repeat("/a", 997)},
		{"min_score out of float64", "/v1/evaluations?store=false", `{"contract": ` + c + `, "trace": [], "min_score": 1e999999}`,
			"invalid-request", "/min_score"},
		{"weight out of float64", "/v1/evaluations?store=false", `{"contract": ` + c + `, "trace": [], "weights": {"argument_f1": -1e400}}`,
			"invalid-request", "/weights/argument_f1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			p := problemOf(t, b.do(t, "POST", tc.target, tc.body), 422, tc.slug)
			if len(p.Errors) == 0 || p.Errors[0].Pointer != tc.ptr {
				got := ""
				if len(p.Errors) > 0 {
					got = p.Errors[0].Pointer
				}
				t.Errorf("pointer = %.80q... (%d segments), want %.80q... (%d): %.300s", got, strings.Count(got, "/"), tc.ptr, strings.Count(tc.ptr, "/"), p.Detail)
			}
			t.Logf("%s: %s", tc.name, time.Since(start))
		})
	}
}

// TestHeavyRequestsHaveTheirOwnPool: requests with large bodies run on
// the heavy pool, so when it is full small ones are still served.
func TestHeavyRequestsHaveTheirOwnPool(t *testing.T) {
	b := setup(t, func(c *Config) { c.HeavyBytes = 4096 })
	release := fillPool(t, b.s.heavy)
	defer release()
	big := `{"contract": ` + regexContract(60, "heavy") + `, "trace": [{"tool": "t0", "args": {"q": "abd", "n": 1}}]}`
	if len(big) <= 4096 {
		t.Fatalf("the heavy body has %d bytes", len(big))
	}
	problemOf(t, b.do(t, "POST", "/v1/evaluations?store=false", big), 429, "queue-full")
	problemOf(t, b.do(t, "POST", "/v1/validate", regexContract(60, "heavy")), 429, "queue-full")
	if rec := b.do(t, "POST", "/v1/evaluations?store=false", `{"contract": `+contractA+`, "trace": `+traceGood+`}`); rec.Code != 200 {
		t.Errorf("a small evaluation while the heavy pool is full = %d", rec.Code)
	}
}

// TestRegexWorkLimit: a $regex whose matching against the trace's
// arguments could exceed MaxRegexWork (Go's regexp costs text bytes times
// pattern instructions, and a match cannot be interrupted) is a 422 at
// the contract or the forbidden rules, before any matching; the same
// pattern on a short value is graded.
func TestRegexWorkLimit(t *testing.T) {
	b := setup(t, nil)
	long := strings.Repeat("a", 120_000)
	contract := func(pattern string) string {
		return `{"contract_version": 2, "required": [{"tool": "a", "args": {"v": {"$regex": "` + pattern + `"}}}]}`
	}
	trace := func(v string) string { return `[{"tool": "a", "args": {"v": "` + v + `"}}]` }
	tests := []struct {
		name, body string
		code       int
		ptr        string
	}{
		{"bomb in the contract", `{"contract": ` + contract(`[a-z]{1,1000}x`) + `, "trace": ` + trace(long) + `}`, 422, "/contract"},
		{"bomb in a gold file", `{"gold": [{"tool": "a", "args": {"v": {"$regex": "[a-z]{1,1000}x"}}}], "trace": ` + trace(long) + `}`, 422, "/gold"},
		{"bomb in the forbidden rules", `{"contract": {"contract_version": 2, "required": [{"tool": "a"}]}, "forbidden": [{"tool": "a", "args": {"v": {"$regex": "[a-z]{1,1000}x"}}}], "trace": ` + trace(long) + `}`, 422, "/forbidden"},
		{"same pattern, short value", `{"contract": ` + contract(`[a-z]{1,1000}x`) + `, "trace": ` + trace("abcx") + `}`, 200, ""},
		{"literal pattern, long value", `{"contract": ` + contract(`^aaa`) + `, "trace": ` + trace(long) + `}`, 200, ""},
		{"other tool's long value", `{"contract": ` + contract(`[a-z]{1,1000}x`) + `, "trace": [{"tool": "b", "args": {"v": "` + long + `"}}]}`, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := b.do(t, "POST", "/v1/evaluations?store=false", tc.body)
			if tc.code == 200 {
				if rec.Code != 200 {
					t.Fatalf("status %d: %.300s", rec.Code, rec.Body)
				}
				return
			}
			p := problemOf(t, rec, tc.code, "invalid-request")
			if len(p.Errors) != 1 || p.Errors[0].Pointer != tc.ptr || !strings.Contains(p.Errors[0].Message, "over the limit of 20000000") {
				t.Errorf("errors = %+v, want one at %s over the limit", p.Errors, tc.ptr)
			}
		})
	}
}
