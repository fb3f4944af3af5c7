// Command loadtest drives a running toolscore server with the benchmark
// workloads of internal/workload (BENCHMARKS.md), using vegeta as a
// library, and reports latency percentiles, status codes, throughput and,
// with -pid, the server's peak resident memory read from /proc.
//
//	go run ./cmd/loadtest -url http://127.0.0.1:8080 -rate 1000 -duration 20s
//	go run ./cmd/loadtest -store=false -rate 2000 -duration 20s
//	go run ./cmd/loadtest -find -rate 1000 -step 250 -duration 10s   # highest sustained rate
//	go run ./cmd/loadtest -rate 4000 -duration 20s -pid $(pgrep -f toolscore-server)
//
// Each request POSTs /v1/evaluations with the workload's contract inline
// and its trace in the OpenAI Chat Completions format (the medium workload:
// 10 expected calls with one alternatives group and nested arguments, 12
// calls); task_id and agent rotate over 64 and 4 values. The API key
// (scope ingest) comes from TOOLSCORE_API_KEY.
//
// It opens at most -max-conns connections (default 100, below the
// server's per-address cap) and discards answer bodies unless -keep-body.
// service-bench.sh in this directory runs it against fresh servers and
// databases, alternating old and new server binaries.
//
// With -abuse NAME it runs one of issue 14's abuse scenarios instead
// (abuse.go), e.g.
//
//	go run ./cmd/loadtest -abuse cache-flood -abuse-n 90 -pid $(pgrep -f toolscore-server)
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/toolscore/toolscore/internal/workload"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	url      string
	rate     int
	duration time.Duration
	store    bool
	size     workload.Size
	pid      int
	find     bool
	step     int
	maxP99   time.Duration
	timeout  time.Duration
	pgDB     string
	key      string
	maxConns int
	keepBody bool
	// abuse scenarios (abuse.go)
	abuse            string
	abuseN           int
	abuseConcurrency int
	attackerAddr     string
}

func parseOptions(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.url, "url", "http://127.0.0.1:8080", "server base URL")
	fs.IntVar(&o.rate, "rate", 1000, "requests per second (the first rate with -find)")
	fs.DurationVar(&o.duration, "duration", 20*time.Second, "attack duration (per step with -find)")
	fs.BoolVar(&o.store, "store", true, "store results (false adds ?store=false: a dry run)")
	size := fs.String("workload", "medium", "small, medium or large")
	fs.IntVar(&o.pid, "pid", 0, "server process id, to report its peak RSS and CPU time per request from /proc (0: off)")
	fs.BoolVar(&o.find, "find", false, "raise the rate by -step until it is no longer sustained; report the highest sustained rate")
	fs.IntVar(&o.step, "step", 250, "rate increment for -find")
	fs.DurationVar(&o.maxP99, "max-p99", 100*time.Millisecond, "a rate is sustained when >= 99.9% succeed (2xx) and p99 <= max-p99")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "per-request timeout")
	fs.IntVar(&o.maxConns, "max-conns", 100, "connections to the server at most (below the server's TOOLSCORE_MAX_CONNS_PER_IP, default 128, which closes the ones beyond); 0 for no cap")
	fs.BoolVar(&o.keepBody, "keep-body", false, "read each answer's body into memory (vegeta's default); off, bodies are read and discarded, which costs the load generator less CPU")
	fs.StringVar(&o.pgDB, "pg-db", "", "with -pid: count the CPU of Postgres backends of this database (and Postgres's background processes); empty: every postgres process")
	fs.StringVar(&o.abuse, "abuse", "", "run an abuse scenario instead of a load test: cache-flood, slow-body, big-number, deep-contract or slowloris (abuse.go)")
	fs.IntVar(&o.abuseN, "abuse-n", 90, "with -abuse: requests or connections of the attack")
	fs.IntVar(&o.abuseConcurrency, "abuse-concurrency", 8, "with -abuse: attack requests at once")
	fs.StringVar(&o.attackerAddr, "attacker-addr", "127.0.0.2", "with -abuse: the local address the attack comes from (the probe uses 127.0.0.1)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.key = os.Getenv("TOOLSCORE_API_KEY")
	switch *size {
	case "small":
		o.size = workload.Small
	case "medium":
		o.size = workload.Medium
	case "large":
		o.size = workload.Large
	default:
		return o, fmt.Errorf("-workload must be small, medium or large, got %q", *size)
	}
	if o.rate < 1 || o.duration <= 0 || o.step < 1 || o.maxConns < 0 {
		return o, errors.New("-rate, -duration and -step must be positive, -max-conns 0 or more")
	}
	return o, nil
}

// bodies returns the request bodies the attack rotates over.
func bodies(s workload.Size) ([][]byte, error) {
	contract, trace := workload.Contract(s), workload.OpenAITrace(s)
	out := make([][]byte, 64)
	for i := range out {
		b, err := json.Marshal(map[string]any{
			"contract": json.RawMessage(contract),
			"trace":    json.RawMessage(trace),
			"task_id":  fmt.Sprintf("task-%02d", i),
			"agent":    fmt.Sprintf("agent-%d", i%4),
			"labels":   map[string]string{"workload": s.Name},
		})
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// report is the outcome of one attack.
type report struct {
	rate       int
	m          vegeta.Metrics
	peakRSS    int64         // bytes sampled during the attack; 0 when not sampled
	hwm        int64         // the process's VmHWM at the end
	serverCPU  time.Duration // CPU time the server used during the attack
	pgCPU      time.Duration // CPU time all postgres processes used
	loadCPU    time.Duration // CPU time this process used
	sustained  bool
	statusList string
}

func (r report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rate=%d/s requests=%d success=%.2f%% throughput=%.1f/s p50=%s p90=%s p99=%s max=%s codes=%s",
		r.rate, r.m.Requests, 100*r.m.Success, r.m.Throughput, ms(r.m.Latencies.P50), ms(r.m.Latencies.P90),
		ms(r.m.Latencies.P99), ms(r.m.Latencies.Max), r.statusList)
	if r.peakRSS > 0 {
		fmt.Fprintf(&b, " peak_rss=%.1fMiB hwm=%.1fMiB", float64(r.peakRSS)/(1<<20), float64(r.hwm)/(1<<20))
	}
	if n := r.m.Requests; n > 0 && r.serverCPU > 0 {
		per := func(d time.Duration) string { return fmt.Sprintf("%.0fus", float64(d.Microseconds())/float64(n)) }
		fmt.Fprintf(&b, " cpu_per_req: server=%s postgres=%s loadgen=%s", per(r.serverCPU), per(r.pgCPU), per(r.loadCPU))
	}
	if len(r.m.Errors) > 0 {
		fmt.Fprintf(&b, " errors=%q", r.m.Errors[:min(3, len(r.m.Errors))])
	}
	return b.String()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }

func run(ctx context.Context, args []string, stdout io.Writer) error {
	o, err := parseOptions(args, os.Stderr)
	if err != nil {
		return err
	}
	if o.abuse != "" {
		return runAbuse(ctx, o, stdout)
	}
	bs, err := bodies(o.size)
	if err != nil {
		return err
	}
	target := strings.TrimSuffix(o.url, "/") + "/v1/evaluations"
	if !o.store {
		target += "?store=false"
	}
	fmt.Fprintf(stdout, "workload=%s store=%v target=%s body_bytes=%d duration=%s\n", o.size.Name, o.store, target, len(bs[0]), o.duration)
	if !o.find {
		r, err := attack(ctx, o, target, bs, o.rate)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, r)
		return nil
	}
	best := 0
	for rate := o.rate; ctx.Err() == nil; rate += o.step {
		r, err := attack(ctx, o, target, bs, rate)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s sustained=%v\n", r, r.sustained)
		if !r.sustained {
			break
		}
		best = rate
	}
	fmt.Fprintf(stdout, "highest sustained rate: %d/s (store=%v, >= 99.9%% 2xx and p99 <= %s)\n", best, o.store, o.maxP99)
	return nil
}

// attack runs one constant-rate attack.
func attack(ctx context.Context, o options, target string, bs [][]byte, rate int) (report, error) {
	var n atomic.Uint64
	hdr := http.Header{"Content-Type": []string{"application/json"}}
	if o.key != "" {
		hdr.Set("Authorization", "Bearer "+o.key) // a key with scope ingest
	}
	targeter := func(t *vegeta.Target) error {
		t.Method, t.URL, t.Header = http.MethodPost, target, hdr
		t.Body = bs[n.Add(1)%uint64(len(bs))]
		return nil
	}
	opts := []func(*vegeta.Attacker){vegeta.Timeout(o.timeout), vegeta.KeepAlive(true), vegeta.HTTP2(false), vegeta.Workers(64)}
	if o.maxConns > 0 {
		opts = append(opts, vegeta.MaxConnections(o.maxConns))
	}
	if !o.keepBody {
		opts = append(opts, vegeta.MaxBody(0))
	}
	atk := vegeta.NewAttacker(opts...)
	var m vegeta.Metrics
	rss := newSampler(o.pid)
	cpu0 := cpuTimes(o.pid, o.pgDB)
	results := atk.Attack(targeter, vegeta.Rate{Freq: rate, Per: time.Second}, o.duration, "toolscore")
loop:
	for {
		select {
		case res, ok := <-results:
			if !ok {
				break loop
			}
			m.Add(res)
		case <-ctx.Done():
			atk.Stop()
		}
	}
	m.Close()
	r := report{rate: rate, m: m}
	r.peakRSS, r.hwm = rss.stop()
	if o.pid > 0 {
		cpu1 := cpuTimes(o.pid, o.pgDB)
		r.serverCPU, r.pgCPU, r.loadCPU = cpu1.server-cpu0.server, cpu1.pg-cpu0.pg, cpu1.self-cpu0.self
	}
	r.sustained = m.Success >= 0.999 && m.Latencies.P99 <= o.maxP99
	var codes []string
	for c, k := range m.StatusCodes {
		codes = append(codes, c+":"+strconv.Itoa(k))
	}
	sort.Strings(codes)
	r.statusList = strings.Join(codes, ",")
	return r, ctx.Err()
}

// sampler reads a process's resident memory from /proc every 50 ms.
type sampler struct {
	pid  int
	peak atomic.Int64
	quit chan struct{}
	wg   sync.WaitGroup
}

func newSampler(pid int) *sampler {
	s := &sampler{pid: pid, quit: make(chan struct{})}
	if pid <= 0 {
		return s
	}
	s.wg.Go(func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if rss, _, err := readMemory(pid); err == nil && rss > s.peak.Load() {
				s.peak.Store(rss)
			}
			select {
			case <-s.quit:
				return
			case <-t.C:
			}
		}
	})
	return s
}

// stop ends sampling and returns the sampled peak RSS and VmHWM, in bytes.
func (s *sampler) stop() (peak, hwm int64) {
	close(s.quit)
	s.wg.Wait()
	if s.pid > 0 {
		_, hwm, _ = readMemory(s.pid)
	}
	return s.peak.Load(), hwm
}

// readMemory returns VmRSS and VmHWM of a process, in bytes.
func readMemory(pid int) (rss, hwm int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	return parseStatus(f)
}

// parseStatus reads VmRSS and VmHWM (kB) from /proc/PID/status text.
func parseStatus(r io.Reader) (rss, hwm int64, err error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		v, perr := strconv.ParseInt(fields[1], 10, 64)
		if perr != nil {
			continue
		}
		switch fields[0] {
		case "VmRSS:":
			rss = v << 10
		case "VmHWM:":
			hwm = v << 10
		}
	}
	if rss == 0 {
		return 0, 0, errors.New("no VmRSS in /proc status")
	}
	return rss, hwm, sc.Err()
}

// cpuSample is the CPU time (user + system) used so far by the server, by
// Postgres (see cpuTimes) and by this process. Backends that exit during
// an attack are missed, so the Postgres figure is a lower bound; the
// server keeps its pool's connections open.
type cpuSample struct{ server, pg, self time.Duration }

// clockTick is USER_HZ, the unit of /proc/PID/stat times (100 on Linux).
const clockTick = 10 * time.Millisecond

// cpuTimes samples the CPU times. Postgres processes are those named
// postgres; with db set, only the background processes (checkpointer, WAL
// writer, ...) and the client backends whose process title names db.
func cpuTimes(server int, db string) cpuSample {
	var s cpuSample
	if server <= 0 {
		return s
	}
	s.server, _ = procCPU(server)
	s.self, _ = procCPU(os.Getpid())
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.TrimSpace(string(comm)) != "postgres" {
			continue
		}
		if db != "" {
			title, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if !countBackend(string(title), db) {
				continue
			}
		}
		t, _ := procCPU(pid)
		s.pg += t
	}
	return s
}

// procCPU returns utime + stime of a process from /proc/PID/stat.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStat(string(b))
}

// parseStat reads utime and stime (fields 14 and 15) of /proc/PID/stat
// text; the command name (field 2) may hold spaces, so fields are counted
// after its closing parenthesis.
func parseStat(s string) (time.Duration, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc stat")
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, errors.New("malformed /proc stat")
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("malformed /proc stat times")
	}
	return time.Duration(u+st) * clockTick, nil
}

// countBackend reports whether a postgres process title belongs to the
// measured database: a client backend ("postgres: 15/main: user db
// 127.0.0.1(5432) idle") of db, or a background process.
func countBackend(title, db string) bool {
	title = strings.TrimRight(strings.ReplaceAll(title, "\x00", " "), " ")
	client := strings.Contains(title, "(") || strings.Contains(title, "[local]")
	return !client || strings.Contains(title, " "+db+" ")
}
