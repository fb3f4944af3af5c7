package otlp_test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/toolscore/toolscore/internal/store/storetest"
)

// These tests run real server processes built from ./cmd/server: the
// load test (TOOLSCORE_OTLP_LOAD=traces sets its size; BENCHMARKS.md) and
// the kill -9 test. -short skips them.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

const bootstrapKey = "tsk_otlp_process_test_bootstrap_key_0123456789"

func serverBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "toolscore-server-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "server")
		if out, err := exec.Command("go", "build", "-o", binPath, "github.com/toolscore/toolscore/cmd/server").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/server: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// proc is one server process.
type proc struct {
	cmd  *exec.Cmd
	base string
	done chan error
	mu   sync.Mutex
	tail []string
}

func (p *proc) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.tail, "\n")
}

func startProc(t *testing.T, dbURL string, env ...string) *proc {
	t.Helper()
	cmd := exec.Command(serverBinary(t))
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL, "TOOLSCORE_ADDR=127.0.0.1:0", "TOOLSCORE_LOG_LEVEL=info",
		"TOOLSCORE_BOOTSTRAP_KEY="+bootstrapKey)
	cmd.Env = append(cmd.Env, env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan error, 1)}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.tail = append(p.tail, line)
			if len(p.tail) > 40 {
				p.tail = p.tail[1:]
			}
			p.mu.Unlock()
			var e struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &e) == nil && e.Msg == "listening" {
				addr <- e.Addr
			}
		}
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	select {
	case a := <-addr:
		p.base = "http://" + a
	case err := <-p.done:
		t.Fatalf("server exited before listening: %v\n%s", err, p.logs())
	case <-time.After(60 * time.Second):
		t.Fatalf("server not listening after 60 s\n%s", p.logs())
	}
	return p
}

func (p *proc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	<-p.done
}

// api calls the server's JSON API with a key and fails unless the status
// is want; it returns the answer.
func (p *proc) api(t *testing.T, key, method, path, body string, want int) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, p.base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// setupIngest makes a key with every scope the load needs, registers the
// flight contract and a rule grading every trace with it.
func setupIngest(t *testing.T, p *proc) string {
	t.Helper()
	made := p.api(t, bootstrapKey, "POST", "/v1/keys", `{"name": "load", "scopes": ["ingest", "read", "contracts:write"]}`, 201)
	key := made["token"].(string)
	contract, err := os.ReadFile("../../examples/contracts/contract.json")
	if err != nil {
		t.Fatal(err)
	}
	p.api(t, key, "POST", "/v1/contracts/flights/versions", string(contract), 201)
	p.api(t, key, "POST", "/v1/rules/all/versions", `{"contract": "flights", "task_id": "toolscore.task_id"}`, 201)
	return key
}

// loadTraceID is trace i's id.
func loadTraceID(i int) []byte {
	id := make([]byte, 16)
	id[0] = 0x7a
	binary.BigEndian.PutUint64(id[8:], uint64(i)+1)
	return id
}

// loadSpan is span j of trace i: span 0 is the root (invoke_agent), the
// others execute_tool spans of the flight example's tools.
func loadSpan(i, j int) *tracepb.Span {
	sid := make([]byte, 8)
	binary.BigEndian.PutUint32(sid[:4], uint32(i)+1)
	binary.BigEndian.PutUint32(sid[4:], uint32(j)+1)
	start := uint64(1_700_000_000_000_000_000 + j*1000)
	s := &tracepb.Span{TraceId: loadTraceID(i), SpanId: sid, StartTimeUnixNano: start, EndTimeUnixNano: start + 500}
	if j == 0 {
		s.Name = "invoke_agent travel"
		s.EndTimeUnixNano = start + 1_000_000
		s.Attributes = []*commonpb.KeyValue{str("gen_ai.operation.name", "invoke_agent"), str("toolscore.task_id", "load-"+strconv.Itoa(i))}
		return s
	}
	s.ParentSpanId = make([]byte, 8)
	binary.BigEndian.PutUint32(s.ParentSpanId[:4], uint32(i)+1)
	binary.BigEndian.PutUint32(s.ParentSpanId[4:], 1)
	tools := []struct{ name, args string }{
		{"search_flights", `{"destination":"LIS","date":"2026-12-12"}`}, {"get_weather", `{"city":"Lisbon"}`}, {"book_flight", `{"flight_id":"FL-204"}`}}
	tool := tools[(j-1)%len(tools)]
	s.Name = "execute_tool " + tool.name
	s.Attributes = []*commonpb.KeyValue{str("gen_ai.operation.name", "execute_tool"), str("gen_ai.tool.name", tool.name),
		str("gen_ai.tool.call.id", fmt.Sprintf("call_%d", j)), str("gen_ai.tool.call.arguments", tool.args),
		str("gen_ai.tool.call.result", `{"ok":true}`)}
	return s
}

// loadExports cuts traces × spans spans into export requests of batch
// spans each, interleaving the traces (as a BatchSpanProcessor mixes the
// spans of concurrent runs): every trace's spans are spread over several
// exports, its root span (ended last) in the last of them.
func loadExports(traces, spans, batch int) [][]byte {
	res := &resourcepb.Resource{Attributes: []*commonpb.KeyValue{str("service.name", "load-agent")}}
	var out [][]byte
	var cur []*tracepb.Span
	flush := func() {
		if len(cur) == 0 {
			return
		}
		b, _ := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{Resource: res,
			ScopeSpans: []*tracepb.ScopeSpans{{Scope: &commonpb.InstrumentationScope{Name: "load"}, Spans: cur}}}}})
		out = append(out, b)
		cur = nil
	}
	// Traces run in waves of 50 concurrent ones.
	for w := 0; w < traces; w += 50 {
		for j := 1; j <= spans; j++ {
			for i := w; i < min(w+50, traces); i++ {
				k := j % spans // the tool spans 1..spans-1, then the root (0)
				cur = append(cur, loadSpan(i, k))
				if len(cur) == batch {
					flush()
				}
			}
		}
	}
	flush()
	return out
}

// loadResult is what sendAll measured.
type loadResult struct {
	exports, retries int64
	elapsed          time.Duration
}

// sendAll posts the exports with workers concurrent senders, as an OTLP
// exporter would: a failed send (connection error, 429, 5xx) is retried,
// after 100 ms, at the current base URL (base() may change while the
// server restarts), until it is acknowledged or ctx ends. after, when
// set, is called once after n exports were acknowledged.
func sendAll(ctx context.Context, t *testing.T, base func() string, key string, exports [][]byte, workers, n int, after func()) loadResult {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}, Timeout: 30 * time.Second}
	var next, acked, retries atomic.Int64
	var once sync.Once
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(exports) {
					return
				}
				for {
					if ctx.Err() != nil {
						return
					}
					req, _ := http.NewRequestWithContext(ctx, "POST", base()+"/v1/traces", bytes.NewReader(exports[i]))
					req.Header.Set("Content-Type", "application/x-protobuf")
					req.Header.Set("Authorization", "Bearer "+key)
					resp, err := client.Do(req)
					if err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode == 200 {
							break
						}
						if resp.StatusCode < 500 && resp.StatusCode != 429 {
							t.Errorf("export %d = %d, not retryable", i, resp.StatusCode)
							return
						}
					}
					retries.Add(1)
					time.Sleep(100 * time.Millisecond)
				}
				if acked.Add(1) == int64(n) && after != nil {
					once.Do(after)
				}
			}
		})
	}
	wg.Wait()
	return loadResult{exports: acked.Load(), retries: retries.Load(), elapsed: time.Since(start)}
}

// procCPU is the CPU time (user and system) a process used so far, read
// from /proc; ok is false where that cannot be read.
func procCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The fields after the command name (in parentheses): state is the
	// 3rd field of the line, utime and stime the 14th and 15th.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(u+st) * 10 * time.Millisecond, true // USER_HZ is 100 on Linux
}

// cpuUse is the CPU time used by the server process and by the database
// backends serving its database (a local Postgres only).
type cpuUse struct {
	server, db time.Duration
	ok         bool
}

func sampleCPU(t *testing.T, p *proc, dbURL string) cpuUse {
	t.Helper()
	var c cpuUse
	var ok bool
	if c.server, ok = procCPU(p.cmd.Process.Pid); !ok {
		return c
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	if err != nil {
		t.Fatal(err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		d, ok := procCPU(int(pid))
		if !ok {
			return c
		}
		c.db += d
	}
	c.ok = len(pids) > 0
	return c
}

// traceCounts reads the traces' states and the results per trace.
type traceCounts struct {
	traces, final, graded, results, distinct int64
	lagP50, lagP99, lagMax                   float64
}

func counts(t *testing.T, dbURL string) traceCounts {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var c traceCounts
	err = conn.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE state NOT IN ('open', 'closed')), count(*) FILTER (WHERE state = 'graded'),
			coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - last_seen)), 0),
			coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - last_seen)), 0),
			coalesce(max(extract(epoch FROM finished_at - last_seen)), 0)::float8
		FROM otlp_traces`).Scan(&c.traces, &c.final, &c.graded, &c.lagP50, &c.lagP99, &c.lagMax)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT labels->>'otel.trace_id') FROM results WHERE labels ? 'otel.trace_id'`).Scan(&c.results, &c.distinct); err != nil {
		t.Fatal(err)
	}
	return c
}

// waitAllFinal waits until n traces are final.
func waitAllFinal(t *testing.T, dbURL string, n int64, timeout time.Duration) traceCounts {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		c := counts(t, dbURL)
		if c.final >= n {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %+v, want %d final traces", timeout, c, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestIngestLoad sends TOOLSCORE_OTLP_LOAD traces (default 2,000) of 10
// spans, TOOLSCORE_OTLP_LOAD_BATCH spans an export (default 512, the
// SDKs' batch), from 8 senders, to one server running
// TOOLSCORE_OTLP_LOAD_WORKERS (default 16) grading jobs, and reports
// the spans acknowledged per second and the assembly lag (last span to
// grading commit, the 1 s quiet period included). BENCHMARKS.md has the
// figures and the command.
func TestIngestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the server process tests")
	}
	traces := 2000
	if v := os.Getenv("TOOLSCORE_OTLP_LOAD"); v != "" {
		traces, _ = strconv.Atoi(v)
	}
	const spans, workers = 10, 8
	batch := 512 // the SDKs' default export batch
	if v := os.Getenv("TOOLSCORE_OTLP_LOAD_BATCH"); v != "" {
		batch, _ = strconv.Atoi(v)
	}
	dbURL := storetest.NewDatabase(t)
	p := startProc(t, dbURL, "TOOLSCORE_OTLP_QUIET=1s", "TOOLSCORE_OTLP_WORKERS="+cmp.Or(os.Getenv("TOOLSCORE_OTLP_LOAD_WORKERS"), "16"))
	key := setupIngest(t, p)
	exports := loadExports(traces, spans, batch)
	cpu0 := sampleCPU(t, p, dbURL)
	res := sendAll(context.Background(), t, func() string { return p.base }, key, exports, workers, 0, nil)
	sent := time.Now()
	c := waitAllFinal(t, dbURL, int64(traces), 10*time.Minute)
	all := time.Since(sent)
	if cpu1 := sampleCPU(t, p, dbURL); cpu0.ok && cpu1.ok {
		// CPU per span, whatever else the machine runs: the capacity of
		// dedicated cores for receiving, assembling and grading.
		srv, db := cpu1.server-cpu0.server, cpu1.db-cpu0.db
		t.Logf("CPU for receiving, assembling and grading %d spans: server %s, database backends %s: %.1f µs per span, %.0f spans/s per dedicated core",
			traces*spans, srv.Round(10*time.Millisecond), db.Round(10*time.Millisecond),
			float64((srv+db).Microseconds())/float64(traces*spans), float64(traces*spans)/(srv+db).Seconds())
	}
	n := traces * spans
	t.Logf("received %d spans in %d exports in %s: %.0f spans/s acknowledged (%d retries); all %d traces graded %s after the last export (%.0f spans/s from the first export to the last result); lag p50 %.2f s, p99 %.2f s, max %.2f s",
		n, res.exports, res.elapsed.Round(time.Millisecond), float64(n)/res.elapsed.Seconds(), res.retries, traces, all.Round(time.Millisecond),
		float64(n)/(res.elapsed+all).Seconds(), c.lagP50, c.lagP99, c.lagMax)
	if c.traces != int64(traces) || c.graded != int64(traces) || c.results != int64(traces) || c.distinct != int64(traces) {
		t.Errorf("counts = %+v, want %d traces graded, each with one result", c, traces)
	}
	p.signal(t, syscall.SIGTERM)
}

// TestIngestSurvivesSIGKILL sends 2,000 traces of 10 spans, kills the
// server with SIGKILL once a third of the exports are acknowledged,
// starts it again while the senders retry (as OTLP exporters do), and
// checks that every trace is graded exactly once: one result per trace id,
// none lost, none twice.
func TestIngestSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the server process tests")
	}
	const traces, spans, batch, workers = 2000, 10, 100, 8
	dbURL := storetest.NewDatabase(t)
	env := []string{"TOOLSCORE_OTLP_QUIET=1s"}
	p := startProc(t, dbURL, env...)
	key := setupIngest(t, p)
	exports := loadExports(traces, spans, batch)
	var base atomic.Value
	base.Store(p.base)
	restarted := make(chan *proc, 1)
	res := sendAll(context.Background(), t, func() string { return base.Load().(string) }, key, exports, workers, len(exports)/3, func() {
		go func() {
			p.signal(t, syscall.SIGKILL)
			p2 := startProc(t, dbURL, env...)
			base.Store(p2.base)
			restarted <- p2
		}()
	})
	p2 := <-restarted
	t.Logf("sent %d exports with %d retries across the kill in %s", res.exports, res.retries, res.elapsed.Round(time.Millisecond))
	waitAllFinal(t, dbURL, traces, 5*time.Minute)
	// Let any job still running (rescued after the kill) finish, then
	// count again: nothing may be added.
	time.Sleep(3 * time.Second)
	c := counts(t, dbURL)
	t.Logf("after the kill: %+v", c)
	if c.traces != traces || c.graded != traces {
		t.Errorf("traces = %d, graded %d; want %d, all graded", c.traces, c.graded, traces)
	}
	if c.results != traces || c.distinct != traces {
		t.Errorf("results = %d for %d trace ids; want exactly one result for each of %d traces", c.results, c.distinct, traces)
	}
	p2.signal(t, syscall.SIGTERM)
}
