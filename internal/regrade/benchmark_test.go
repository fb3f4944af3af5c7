package regrade_test

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolscore/toolscore/internal/store/storetest"
)

// TestRegradeThroughput is the regrade benchmark of BENCHMARKS.md, run by
// hand (not in CI):
//
//	TOOLSCORE_REGRADE_BENCH=100000 go test ./internal/regrade -run TestRegradeThroughput -v -timeout 30m
//
// It stores that many medium-workload results in a fresh database, starts
// a real server process, regrades them all through the API and reports
// results per second, the server's CPU per result and its peak RSS
// (VmHWM). Extra server settings can be passed as TOOLSCORE_* variables.
func TestRegradeThroughput(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TOOLSCORE_REGRADE_BENCH"))
	if n <= 0 {
		t.Skip("set TOOLSCORE_REGRADE_BENCH=N to regrade N stored medium results")
	}
	dbURL := storetest.NewDatabase(t)
	start := time.Now()
	seedMedium(t, dbURL, n)
	t.Logf("seeded %d results in %s", n, time.Since(start).Round(time.Millisecond))
	s := startServer(t, dbURL)
	pid := s.cmd.Process.Pid
	rss0 := procStatus(t, pid, "VmRSS")
	db := databaseName(t, dbURL)
	cpu0 := procCPU(t, pid)
	pg0, bg0 := postgresCPU(db)
	t0 := time.Now()
	var created regradeState
	if code := s.do(t, "POST", "/v1/regrades", `{"contract": "medium"}`, &created); code != 202 {
		t.Fatalf("POST /v1/regrades = %d", code)
	}
	final := waitFinal(t, s, created.ID, 30*time.Minute)
	elapsed := time.Since(t0)
	cpu := procCPU(t, pid) - cpu0
	pg1, bg1 := postgresCPU(db)
	pg, bg := pg1-pg0, bg1-bg0
	if final.State != "completed" || final.Done != int64(n) {
		t.Fatalf("final = %+v", final)
	}
	perResult := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(n) }
	t.Logf("regraded %d results in %s: %.0f results/s; server CPU %.1f s (%.0f µs/result); Postgres CPU %.1f s (%.0f µs/result: backends %.0f, cluster background %.0f); RSS at start %s, peak %s",
		n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), cpu.Seconds(), perResult(cpu),
		(pg + bg).Seconds(), perResult(pg+bg), perResult(pg), perResult(bg), rss0, procStatus(t, pid, "VmHWM"))
	s.stop(t)
}

// procStatus returns a field of /proc/PID/status, such as "VmHWM".
func procStatus(t *testing.T, pid int, field string) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return "?"
}

// databaseName returns the database of a postgres:// URL.
func databaseName(t *testing.T, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}

// postgresCPU returns the CPU time used so far by the processes named
// postgres that work for database db: its client backends (backends),
// and the cluster's background processes (WAL writer, checkpointer, ...),
// which also work for other databases (other tests on a shared machine:
// background is an upper bound there). A backend that exits takes its
// time with it, so a difference of two samples is a lower bound; the
// server keeps its pool's connections open.
func postgresCPU(db string) (backends, background time.Duration) {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		if comm, _ := os.ReadFile("/proc/" + d.Name() + "/comm"); strings.TrimSpace(string(comm)) == "postgres" {
			title, _ := os.ReadFile("/proc/" + d.Name() + "/cmdline")
			client, own := backendOf(string(title), db)
			if client && !own {
				continue
			}
			b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
			if err != nil {
				continue
			}
			if client {
				backends += statCPU(b)
			} else {
				background += statCPU(b)
			}
		}
	}
	return backends, background
}

// backendOf reports whether a postgres process title ("postgres: 15/main:
// user db 127.0.0.1(5432) idle" for a client backend) is a client backend,
// and whether it is one of db.
func backendOf(title, db string) (client, own bool) {
	title = strings.TrimRight(strings.ReplaceAll(title, "\x00", " "), " ")
	client = strings.Contains(title, "(") || strings.Contains(title, "[local]")
	return client, client && strings.Contains(title, " "+db+" ")
}

// procCPU returns the user + system CPU time of process pid.
func procCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	return statCPU(b)
}

// statCPU returns utime + stime from the text of /proc/PID/stat.
func statCPU(b []byte) time.Duration {
	// Fields after the command name (which may hold spaces) start at ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ is 100 on Linux
}
