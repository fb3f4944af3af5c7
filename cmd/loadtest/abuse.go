package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The abuse scenarios of issue 14 (-abuse NAME): each attacks a running
// server from the attacker address (-attacker-addr, 127.0.0.2 by default,
// so that the per-address connection cap applies to the attacker and not
// to the probe) while a probe client on 127.0.0.1 grades a small trace
// every 50 ms, and reports how the attack was answered, the server's peak
// memory and CPU, and the probe's latencies: the server holds when its
// memory and time stay bounded and the probe is answered within 1 s
// throughout. They target loopback servers only.
var abuseScenarios = map[string]func(ctx context.Context, a *abuser) (string, error){
	"cache-flood":   cacheFlood,
	"slow-body":     slowBodies,
	"big-number":    bigNumber,
	"deep-contract": deepContract,
	"slowloris":     slowloris,
}

// abuser is one scenario's run.
type abuser struct {
	o      options
	base   string // http://host:port
	host   string // host:port
	dialer *net.Dialer
	client *http.Client // from the attacker address

	mu    sync.Mutex
	codes map[string]int // the attack's answers
}

func (a *abuser) count(what string) {
	a.mu.Lock()
	a.codes[what]++
	a.mu.Unlock()
}

// post sends one attack request and counts its answer (its status, or
// transport-error), which it returns.
func (a *abuser) post(ctx context.Context, path string, body []byte) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+path, bytes.NewReader(body))
	if err != nil {
		a.count("error")
		return "error"
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+a.o.key)
	resp, err := a.client.Do(req)
	if err != nil {
		a.count("transport-error")
		return "transport-error"
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	code := strconv.Itoa(resp.StatusCode)
	a.count(code)
	return code
}

// runAbuse runs the scenario named by -abuse.
func runAbuse(ctx context.Context, o options, stdout io.Writer) error {
	scenario, ok := abuseScenarios[o.abuse]
	if !ok {
		var names []string
		for n := range abuseScenarios {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Errorf("-abuse must be one of %s, got %q", strings.Join(names, ", "), o.abuse)
	}
	u, err := url.Parse(o.url)
	if err != nil || u.Host == "" {
		return fmt.Errorf("-url %q is not a URL", o.url)
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-abuse attacks loopback servers only (-url http://127.0.0.1:PORT), got %s", u.Host)
	}
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(o.attackerAddr)}, Timeout: 10 * time.Second}
	a := &abuser{o: o, base: strings.TrimSuffix(o.url, "/"), host: u.Host, dialer: d, codes: map[string]int{},
		client: &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 64}}}

	resetPeak(o.pid)
	rss := newSampler(o.pid)
	cpu0, _ := procCPU(o.pid)
	pctx, stopProbe := context.WithCancel(ctx)
	probeDone := make(chan probeReport, 1)
	go func() { probeDone <- probe(pctx, o) }()
	time.Sleep(300 * time.Millisecond) // a few probes before the attack, for comparison
	start := time.Now()
	detail, err := scenario(ctx, a)
	took := time.Since(start)
	time.Sleep(300 * time.Millisecond)
	stopProbe()
	pr := <-probeDone
	peak, hwm := rss.stop()
	cpu1, _ := procCPU(o.pid)
	if err != nil {
		return err
	}
	var codes []string
	for c, n := range a.codes {
		codes = append(codes, c+":"+strconv.Itoa(n))
	}
	sort.Strings(codes)
	fmt.Fprintf(stdout, "abuse=%s attack_time=%s attack_answers=%s %s\n", o.abuse, took.Round(time.Millisecond), strings.Join(codes, ","), detail)
	if o.pid > 0 {
		fmt.Fprintf(stdout, "  server: peak_rss=%.1fMiB hwm=%.1fMiB cpu=%s\n", float64(peak)/(1<<20), float64(hwm)/(1<<20), (cpu1 - cpu0).Round(10*time.Millisecond))
	}
	fmt.Fprintf(stdout, "  probe: %s served_within_1s=%v\n", pr, pr.ok())
	return nil
}

// resetPeak resets a process's VmHWM (Linux: "5" to /proc/PID/clear_refs),
// so that hwm is the scenario's own peak; best effort.
func resetPeak(pid int) {
	if pid > 0 {
		_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
	}
}

// probeReport is what the probe client saw.
type probeReport struct {
	n, failed int
	lat       []time.Duration
}

func (p probeReport) ok() bool { return p.failed == 0 && p.n > 0 && p.q(1) < time.Second }

func (p probeReport) q(f float64) time.Duration {
	if len(p.lat) == 0 {
		return 0
	}
	return p.lat[min(len(p.lat)-1, int(f*float64(len(p.lat))))]
}

func (p probeReport) String() string {
	return fmt.Sprintf("requests=%d failed=%d p50=%s p99=%s max=%s", p.n, p.failed, ms(p.q(0.5)), ms(p.q(0.99)), ms(p.q(1)))
}

// probe grades a small trace every 50 ms from 127.0.0.1 until ctx ends.
func probe(ctx context.Context, o options) probeReport {
	body := []byte(`{"contract": {"contract_version": 2, "required": [{"tool": "search", "args": {"q": {"$regex": "^lis"}}}]},
		"trace": [{"tool": "search", "args": {"q": "lisbon"}}]}`)
	c := &http.Client{Timeout: 10 * time.Second}
	var r probeReport
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			sort.Slice(r.lat, func(i, j int) bool { return r.lat[i] < r.lat[j] })
			return r
		case <-t.C:
		}
		req, _ := http.NewRequest(http.MethodPost, strings.TrimSuffix(o.url, "/")+"/v1/evaluations?store=false", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+o.key)
		start := time.Now()
		resp, err := c.Do(req)
		r.n++
		if err != nil {
			r.failed++
			r.lat = append(r.lat, time.Since(start))
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		r.lat = append(r.lat, time.Since(start))
		if resp.StatusCode != 200 {
			r.failed++
		}
	}
}

// bigContract returns an inline contract of about size bytes: expected
// calls with compiled matchers, unique by marker.
func bigContract(size int, marker string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"contract_version": 2, "description": "` + marker + `", "required": [`)
	for i := 0; b.Len() < size-200; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"tool": "t%d", "args": {"q": {"$regex": "^a%d(b|c)+d$"}, "n": {"$type": "number"}}}`, i, i)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// cacheFlood POSTs -abuse-n distinct inline contracts of about 743 KB
// (the issue: 90 of them held 3.8 GiB), -abuse-concurrency at a time, each
// retried a second after a 429 until it is graded (so that every contract
// is parsed, and could be cached).
func cacheFlood(ctx context.Context, a *abuser) (string, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range a.o.abuseConcurrency {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(a.o.abuseN) && ctx.Err() == nil; i = next.Add(1) {
				c := bigContract(743_000, fmt.Sprintf("flood-%d-%d", i, time.Now().UnixNano()))
				body := append(append([]byte(`{"contract": `), c...), `, "trace": [{"tool": "t0", "args": {"q": "abd", "n": 1}}]}`...)
				for tries := 0; a.post(ctx, "/v1/evaluations?store=false", body) == "429" && tries < 300 && ctx.Err() == nil; tries++ {
					time.Sleep(time.Second)
				}
			}
		})
	}
	wg.Wait()
	return fmt.Sprintf("contracts=%d contract_bytes=743000 (429s retried after 1 s)", a.o.abuseN), nil
}

// holdConns opens -abuse-n connections from the attacker address, each
// sending first and then one byte of more every interval until the server
// closes it or hold ends; it reports how the connections ended.
func (a *abuser) holdConns(ctx context.Context, first string, more byte, interval, hold time.Duration) {
	var wg sync.WaitGroup
	for range a.o.abuseN {
		wg.Go(func() {
			c, err := a.dialer.DialContext(ctx, "tcp", a.host)
			if err != nil {
				a.count("dial-error")
				return
			}
			defer c.Close()
			if _, err := io.WriteString(c, first); err != nil {
				a.count("closed-at-once")
				return
			}
			// Whatever the server answers (a status line) or that it closes
			// the connection is how this connection ends.
			answer := make(chan string, 1)
			go func() {
				_ = c.SetReadDeadline(time.Now().Add(hold + 5*time.Second))
				buf := make([]byte, 12)
				n, err := io.ReadAtLeast(c, buf, 12)
				switch {
				case n >= 12 && bytes.HasPrefix(buf, []byte("HTTP/1.1 ")):
					answer <- string(buf[9:12])
				case err != nil && n == 0:
					answer <- "closed"
				default:
					answer <- "other"
				}
			}()
			tick := time.NewTicker(interval)
			defer tick.Stop()
			end := time.After(hold)
			for {
				select {
				case got := <-answer:
					a.count(got)
					return
				case <-end:
					a.count("still-open")
					return
				case <-tick.C:
					_, _ = c.Write([]byte{more})
				}
			}
		})
	}
	wg.Wait()
}

// slowBodies opens -abuse-n connections that send a POST's headers and
// then its body one byte a second.
func slowBodies(ctx context.Context, a *abuser) (string, error) {
	head := "POST /v1/evaluations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer " + a.o.key +
		"\r\nContent-Length: 100000\r\n\r\n{\"trace\": \""
	a.holdConns(ctx, head, 'x', time.Second, a.o.duration)
	return fmt.Sprintf("connections=%d byte_every=1s hold=%s", a.o.abuseN, a.o.duration), nil
}

// slowloris opens -abuse-n connections that send their headers one byte
// every 2 s.
func slowloris(ctx context.Context, a *abuser) (string, error) {
	a.holdConns(ctx, "POST /v1/evaluations HTTP/1.1\r\nHost: x\r\nX-Slow: ", 'a', 2*time.Second, a.o.duration)
	return fmt.Sprintf("connections=%d header_byte_every=2s hold=%s", a.o.abuseN, a.o.duration), nil
}

// bigNumber POSTs evaluations holding a 1,040,000-digit integer in the
// trace's arguments, the inline contract, min_score and the forbidden
// rules, -abuse-n times each, -abuse-concurrency at a time.
func bigNumber(ctx context.Context, a *abuser) (string, error) {
	digits := strings.Repeat("7", 1_040_000)
	contract := `{"contract_version": 2, "required": [{"tool": "search"}]}`
	bodies := map[string]string{
		"trace":     `{"contract": ` + contract + `, "trace": [{"tool": "search", "args": {"n": ` + digits + `}}]}`,
		"contract":  `{"contract": {"contract_version": 2, "required": [{"tool": "search", "args": {"n": ` + digits + `}}]}, "trace": [{"tool": "search"}]}`,
		"min_score": `{"contract": ` + contract + `, "trace": [{"tool": "search"}], "min_score": 0.` + digits + `}`,
		"forbidden": `{"contract": ` + contract + `, "trace": [{"tool": "search"}], "forbidden": [{"tool": "x", "args": {"n": ` + digits + `}}]}`,
	}
	return a.each(ctx, bodies)
}

// deepContract POSTs a 60 KB contract nested 9,990 levels (the issue: it
// allocated 107 MB), and a trace nested as deep.
func deepContract(ctx context.Context, a *abuser) (string, error) {
	deep := strings.Repeat(`{"a":`, 9990) + "1" + strings.Repeat("}", 9990)
	bodies := map[string]string{
		"contract": `{"contract": {"contract_version": 2, "required": [{"tool": "search", "args": {"a": ` + deep + `}}]}, "trace": [{"tool": "search"}]}`,
		"trace":    `{"contract": {"contract_version": 2, "required": [{"tool": "search"}]}, "trace": [{"tool": "search", "args": {"a": ` + deep + `}}]}`,
		"validate": `{"contract_version": 2, "required": [{"tool": "search", "args": {"a": ` + deep + `}}]}`,
	}
	return a.each(ctx, bodies)
}

// each POSTs every body -abuse-n times, -abuse-concurrency at a time, and
// reports the slowest answer per body.
func (a *abuser) each(ctx context.Context, bodies map[string]string) (string, error) {
	var names []string
	for n := range bodies {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []string
	for _, name := range names {
		path := "/v1/evaluations?store=false"
		if name == "validate" {
			path = "/v1/validate"
		}
		var slowest atomic.Int64
		var next atomic.Int64
		var wg sync.WaitGroup
		for range a.o.abuseConcurrency {
			wg.Go(func() {
				for next.Add(1) <= int64(a.o.abuseN) && ctx.Err() == nil {
					start := time.Now()
					a.post(ctx, path, []byte(bodies[name]))
					if d := int64(time.Since(start)); d > slowest.Load() {
						slowest.Store(d)
					}
				}
			})
		}
		wg.Wait()
		out = append(out, fmt.Sprintf("%s_bytes=%d %s_slowest=%s", name, len(bodies[name]), name, ms(time.Duration(slowest.Load()))))
	}
	return strings.Join(out, " "), nil
}
