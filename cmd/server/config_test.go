package main

import (
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
)

func TestLoadConfig(t *testing.T) {
	base := Config{Addr: ":8080", DatabaseURL: "postgres://db/x", Workers: runtime.NumCPU(), Queue: 64 * runtime.NumCPU(),
		MaxBodyBytes: 1 << 20, MaxBatchBytes: 32 << 20, EvalTimeout: 10 * time.Second, ShutdownGrace: 25 * time.Second,
		DBMaxConns: 8, DBWriters: 4, DBWriteDelay: time.Millisecond, LogLevel: "info", RegradeRescueAfter: 10 * time.Second, RunRescueAfter: 2 * time.Minute, RegradeWorkers: 4, GCPercent: 200, MaxConns: 1024, Auth: "on",
		OTLPQuiet: 5 * time.Second, OTLPMaxAge: 10 * time.Minute, OTLPLateSpans: "ignore", OTLPUnmatched: "drop",
		OTLPKeepTraces: 24 * time.Hour, OTLPMaxBodyBytes: 16 << 20,
		HeaderTimeout: 5 * time.Second, BodyTimeout: 10 * time.Second, MaxBodyReaders: 512, MaxConnsPerIP: 128, ContractCacheBytes: 128 << 20}
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    func(*Config)
		wantErr string
	}{
		{name: "defaults", env: map[string]string{"DATABASE_URL": "postgres://db/x"}},
		{name: "env", env: map[string]string{"DATABASE_URL": "postgres://db/x", "TOOLSCORE_ADDR": ":9000", "TOOLSCORE_WORKERS": "3",
			"TOOLSCORE_QUEUE": "10", "TOOLSCORE_EVAL_TIMEOUT": "2s", "TOOLSCORE_SHUTDOWN_GRACE": "1m", "TOOLSCORE_MAX_BODY_BYTES": "2048",
			"TOOLSCORE_MAX_BATCH_BYTES": "4096", "TOOLSCORE_DB_MAX_CONNS": "4", "TOOLSCORE_LOG_LEVEL": "debug",
			"TOOLSCORE_REGRADE_RESCUE_AFTER": "5s", "TOOLSCORE_REGRADE_WORKERS": "1", "TOOLSCORE_RUN_RESCUE_AFTER": "5m"},
			want: func(c *Config) {
				c.Addr, c.Workers, c.Queue, c.EvalTimeout, c.ShutdownGrace = ":9000", 3, 10, 2*time.Second, time.Minute
				c.MaxBodyBytes, c.MaxBatchBytes, c.DBMaxConns, c.DBWriters, c.LogLevel = 2048, 4096, 4, 3, "debug"
				c.RegradeRescueAfter, c.RegradeWorkers, c.RunRescueAfter = 5*time.Second, 1, 5*time.Minute
			}},
		{name: "flags override env", env: map[string]string{"DATABASE_URL": "postgres://db/x", "TOOLSCORE_WORKERS": "3"},
			args: []string{"-workers", "5", "-addr", "127.0.0.1:1", "-database-url", "postgres://other/y"},
			want: func(c *Config) {
				c.Workers, c.Queue, c.Addr, c.DatabaseURL = 5, 320, "127.0.0.1:1", "postgres://other/y"
			}},
		{name: "missing database", wantErr: "DATABASE_URL (or -database-url) is required, e.g. postgres://postgres@127.0.0.1:5432/toolscore?sslmode=disable"},
		{name: "bad number", env: map[string]string{"DATABASE_URL": "x", "TOOLSCORE_WORKERS": "many"}, wantErr: `TOOLSCORE_WORKERS: "many" is not a whole number`},
		{name: "bad duration", env: map[string]string{"DATABASE_URL": "x", "TOOLSCORE_EVAL_TIMEOUT": "10"}, wantErr: `TOOLSCORE_EVAL_TIMEOUT: "10" is not a duration such as 10s`},
		{name: "zero workers", env: map[string]string{"DATABASE_URL": "x"}, args: []string{"-workers", "0", "-queue", "1"}, wantErr: "TOOLSCORE_WORKERS must be at least 1, got 0"},
		{name: "writers", env: map[string]string{"DATABASE_URL": "postgres://db/x", "TOOLSCORE_DB_WRITERS": "2"},
			want: func(c *Config) { c.DBWriters = 2 }},
		{name: "write delay", env: map[string]string{"DATABASE_URL": "postgres://db/x", "TOOLSCORE_DB_WRITE_DELAY": "0"},
			args: []string{"-db-write-delay", "3ms"}, want: func(c *Config) { c.DBWriteDelay = 3 * time.Millisecond }},
		{name: "no write delay", env: map[string]string{"DATABASE_URL": "postgres://db/x", "TOOLSCORE_DB_WRITE_DELAY": "0s"},
			want: func(c *Config) { c.DBWriteDelay = 0 }},
		{name: "negative write delay", env: map[string]string{"DATABASE_URL": "x", "TOOLSCORE_DB_WRITE_DELAY": "-1ms"},
			wantErr: "TOOLSCORE_DB_WRITE_DELAY must be from 0 to 1s, got -1ms"},
		{name: "too many writers", env: map[string]string{"DATABASE_URL": "x"}, args: []string{"-db-writers", "8"},
			wantErr: "TOOLSCORE_DB_WRITERS must be from 1 to TOOLSCORE_DB_MAX_CONNS-1 (7), got 8"},
		{name: "no regrade workers", env: map[string]string{"DATABASE_URL": "x", "TOOLSCORE_REGRADE_WORKERS": "0"},
			wantErr: "TOOLSCORE_REGRADE_WORKERS must be from 1 to 10000, got 0"},
		{name: "too many regrade workers", env: map[string]string{"DATABASE_URL": "x"}, args: []string{"-regrade-workers", "10001"},
			wantErr: "TOOLSCORE_REGRADE_WORKERS must be from 1 to 10000, got 10001"},
		{name: "auth settings", env: map[string]string{"DATABASE_URL": "postgres://db/x", "TOOLSCORE_AUTH": "off",
			"TOOLSCORE_BOOTSTRAP_KEY": "tsk_0123456789abcdefghijklmnopqrstuvwxyz", "TOOLSCORE_METRICS_TOKEN": "0123456789abcdef", "TOOLSCORE_METRICS_OPEN": "true"},
			want: func(c *Config) {
				c.Auth, c.BootstrapKey, c.MetricsToken, c.MetricsOpen = "off", "tsk_0123456789abcdefghijklmnopqrstuvwxyz", "0123456789abcdef", true
			}},
		{name: "allowed hosts", env: map[string]string{"DATABASE_URL": "postgres://db/x", "TOOLSCORE_RUN_ALLOWED_HOSTS": " agent.example.com, *.internal.example,10.0.0.0/8 ,"},
			want: func(c *Config) { c.RunAllowedHosts = []string{"agent.example.com", "*.internal.example", "10.0.0.0/8"} }},
		{name: "bad allowed host", env: map[string]string{"DATABASE_URL": "x"}, args: []string{"-run-allowed-hosts", "http://agent"},
			wantErr: `TOOLSCORE_RUN_ALLOWED_HOSTS: allowed agent host "http://agent" is not a host name, *.name, IP address or CIDR`},
		{name: "limits", env: map[string]string{"DATABASE_URL": "postgres://db/x", "TOOLSCORE_HEADER_TIMEOUT": "2s", "TOOLSCORE_BODY_TIMEOUT": "3s",
			"TOOLSCORE_MAX_BODY_READERS": "10", "TOOLSCORE_MAX_CONNS_PER_IP": "0", "TOOLSCORE_CONTRACT_CACHE_BYTES": "2097152"},
			want: func(c *Config) {
				c.HeaderTimeout, c.BodyTimeout, c.MaxBodyReaders, c.MaxConnsPerIP, c.ContractCacheBytes = 2*time.Second, 3*time.Second, 10, 0, 2<<20
			}},
		{name: "small cache", env: map[string]string{"DATABASE_URL": "x", "TOOLSCORE_CONTRACT_CACHE_BYTES": "1000"},
			wantErr: "TOOLSCORE_CONTRACT_CACHE_BYTES must be at least 1048576, got 1000"},
		{name: "bad auth", env: map[string]string{"DATABASE_URL": "x", "TOOLSCORE_AUTH": "maybe"}, wantErr: `TOOLSCORE_AUTH must be on or off, got "maybe"`},
		{name: "short bootstrap key", env: map[string]string{"DATABASE_URL": "x", "TOOLSCORE_BOOTSTRAP_KEY": "s3cret"},
			wantErr: "TOOLSCORE_BOOTSTRAP_KEY: a key is 32 to 512 characters, got 6"},
		{name: "short metrics token", env: map[string]string{"DATABASE_URL": "x", "TOOLSCORE_METRICS_TOKEN": "s3cret"},
			wantErr: "TOOLSCORE_METRICS_TOKEN must be at least 16 characters, got 6"},
		{name: "bad bool", env: map[string]string{"DATABASE_URL": "x", "TOOLSCORE_METRICS_OPEN": "yes please"}, wantErr: `TOOLSCORE_METRICS_OPEN: "yes please" is not true or false`},
		{name: "otlp", env: map[string]string{"DATABASE_URL": "postgres://db/x", "TOOLSCORE_OTLP_QUIET": "2s", "TOOLSCORE_OTLP_LATE_SPANS": "regrade"},
			args: []string{"-otlp-max-age", "1m", "-otlp-unmatched", "keep", "-otlp-workers", "3"},
			want: func(c *Config) {
				c.OTLPQuiet, c.OTLPMaxAge, c.OTLPLateSpans, c.OTLPUnmatched, c.OTLPWorkers = 2*time.Second, time.Minute, "regrade", "keep", 3
			}},
		{name: "bad late spans", env: map[string]string{"DATABASE_URL": "x", "TOOLSCORE_OTLP_LATE_SPANS": "drop"},
			wantErr: `TOOLSCORE_OTLP_LATE_SPANS must be ignore or regrade, got "drop"`},
		{name: "max age under quiet", env: map[string]string{"DATABASE_URL": "x", "TOOLSCORE_OTLP_QUIET": "1m", "TOOLSCORE_OTLP_MAX_AGE": "30s"},
			wantErr: "TOOLSCORE_OTLP_MAX_AGE (30s) must be at least TOOLSCORE_OTLP_QUIET (1m0s)"},
		{name: "bad level", env: map[string]string{"DATABASE_URL": "x", "TOOLSCORE_LOG_LEVEL": "loud"}, wantErr: `TOOLSCORE_LOG_LEVEL must be debug, info, warn or error, got "loud"`},
		{name: "pprof", env: map[string]string{"DATABASE_URL": "postgres://db/x", "TOOLSCORE_PPROF_ADDR": "127.0.0.1:6060"},
			want: func(c *Config) { c.PprofAddr = "127.0.0.1:6060" }},
		{name: "pprof flag", env: map[string]string{"DATABASE_URL": "postgres://db/x"}, args: []string{"-pprof-addr", "[::1]:0"},
			want: func(c *Config) { c.PprofAddr = "[::1]:0" }},
		{name: "pprof on every address", env: map[string]string{"DATABASE_URL": "x", "TOOLSCORE_PPROF_ADDR": ":6060"},
			wantErr: `TOOLSCORE_PPROF_ADDR must be a loopback host:port such as 127.0.0.1:6060, got ":6060"`},
		{name: "pprof not loopback", env: map[string]string{"DATABASE_URL": "x", "TOOLSCORE_PPROF_ADDR": "10.0.0.1:6060"},
			wantErr: `TOOLSCORE_PPROF_ADDR must be a loopback host:port such as 127.0.0.1:6060, got "10.0.0.1:6060"`},
		{name: "stray argument", env: map[string]string{"DATABASE_URL": "x"}, args: []string{"serve"}, wantErr: "unexpected arguments: [serve]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LoadConfig(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("LoadConfig() error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := base
			if tc.want != nil {
				tc.want(&want)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("LoadConfig() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRedacted(t *testing.T) {
	tests := []struct{ in, want string }{
		{"postgres://u:s3cret@db:5432/x?sslmode=disable", "postgres://u:xxxxx@db:5432/x?sslmode=disable"},
		{"postgres://u@db/x?password=s3cret", "postgres://u@db/x?password=xxxxx"},
		{"host=db user=u password=s3cret dbname=x", "host=db user=u password=xxxxx dbname=x"},
		{"host=db password='s3 cret' dbname=x", "host=db password=xxxxx dbname=x"},
		{"postgres://u@db/x", "postgres://u@db/x"},
	}
	for _, tc := range tests {
		if got := Redacted(tc.in); got != tc.want {
			t.Errorf("Redacted(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestServePprof(t *testing.T) {
	addr, stop, err := servePprof("127.0.0.1:0", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	resp, err := http.Get("http://" + addr.String() + "/debug/pprof/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), os.Args[0]) {
		t.Errorf("GET /debug/pprof/cmdline = %d %q, want 200 with the command line", resp.StatusCode, b)
	}
	if _, _, err := servePprof("127.0.0.1:-1", zap.NewNop()); err == nil {
		t.Error("servePprof on port -1 succeeded")
	}
}
