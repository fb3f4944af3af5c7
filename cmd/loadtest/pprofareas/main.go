// Command pprofareas prints the percent of a server CPU profile's samples
// in each area (handler parts, store writer, runtime scheduler, net/http,
// socket syscalls, GC, ...), each sample put in the first area whose test
// its stack meets (BENCHMARKS.md, "Service CPU outside the handler"). It
// reads the text of `go tool pprof -traces PROFILE` from the file named
// by its argument, or from standard input; -v also prints the heaviest
// leaf frames of each area.
//
//	go tool pprof -traces p.pprof | go run ./cmd/loadtest/pprofareas
package main

import (
	"bufio"
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func main() {
	verbose := flag.Bool("v", false, "also print the heaviest leaf frames of each area")
	flag.Parse()
	in := io.Reader(os.Stdin)
	if flag.NArg() > 0 {
		f, err := os.Open(flag.Arg(0))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		in = f
	}
	if err := report(os.Stdout, in, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// sample is one stack of a -traces listing: its time in milliseconds and
// its frames, leaf first.
type sample struct {
	ms     float64
	frames []string
}

var sampleLine = regexp.MustCompile(`^\s+([\d.]+)(ms|s|us)\s+(\S.*)$`)

// samples reads the samples of a -traces listing.
func samples(r io.Reader) ([]sample, error) {
	var out []sample
	var cur *sample
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "-----------+") {
			cur = nil
			continue
		}
		if m := sampleLine.FindStringSubmatch(line); m != nil && cur == nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			v *= map[string]float64{"ms": 1, "s": 1000, "us": 0.001}[m[2]]
			out = append(out, sample{ms: v, frames: []string{frame(m[3])}})
			cur = &out[len(out)-1]
		} else if cur != nil && strings.TrimSpace(line) != "" {
			cur.frames = append(cur.frames, frame(line))
		}
	}
	return out, sc.Err()
}

func frame(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), " (inline)", "")
}

// has reports whether a frame of stack contains one of subs.
func has(stack []string, subs ...string) bool {
	for _, f := range stack {
		for _, s := range subs {
			if strings.Contains(f, s) {
				return true
			}
		}
	}
	return false
}

var (
	gcFrames = []string{"runtime.gcBgMarkWorker", "runtime.bgsweep", "runtime.bgscavenge", "runtime.gcAssistAlloc",
		"runtime.gcStart", "runtime.gcMarkDone", "runtime.gcMarkTermination", "runtime.(*sweepLocked).sweep",
		"runtime.sweepone", "runtime.deductSweepCredit"}
	schedFrames = []string{"runtime.mcall", "runtime.schedule", "runtime.findRunnable", "runtime.sysmon", "runtime.mstart0",
		"runtime.wakep", "runtime.startm", "runtime.notewakeup", "runtime.ready", "runtime.goready",
		"runtime.gopark", "runtime.netpoll", "runtime.exitsyscall", "runtime.entersyscall",
		"runtime.reentersyscall", "runtime.morestack", "runtime.newproc", "runtime.goexit0",
		"runtime.injectglist", "runtime.handoffp", "runtime.retake"}
	socketFrames = []string{"syscall.write", "syscall.read", "internal/poll", "EpollWait"}
)

// area names the area of a stack: the first whose frames it has.
func area(st []string) string {
	switch {
	case has(st, gcFrames...):
		return "gc (mark, sweep, assists)"
	case has(st, schedFrames...):
		return "runtime scheduler (park/wake/futex/netpoll/syscall enter-exit)"
	case has(st, "go.uber.org/zap"):
		return "logging (zap)"
	case has(st, "prometheus"):
		return "metrics (prometheus)"
	case has(st, "internal/store.", "jackc/pgx", "jackc/puddle"):
		return "store writer + pgx"
	case has(st, "api.(*Server).createEvaluation"):
		switch {
		case has(st, socketFrames...):
			return "socket read/write syscalls"
		case has(st, "api.(*Server).readBody"):
			return "handler: read body"
		case has(st, "engine.Evaluate"):
			return "handler: engine.Evaluate"
		case has(st, "format."):
			return "handler: trace format parse"
		case has(st, "contractCache).parseBody", "jsondoc.Parse"):
			return "handler: request parse"
		case has(st, "resultjson", "api.writeEvaluation", "api.sendWhole", "appendJSON", "encode"):
			return "handler: encode/answer"
		}
		return "handler: other"
	case has(st, socketFrames...):
		return "socket read/write syscalls"
	case has(st, "net/http", "bufio", "net/textproto"):
		return "net/http (outside handler)"
	case has(st, "runtime.mallocgc", "runtime.memclr"):
		return "malloc (other)"
	}
	return "other"
}

// weight is a name and the milliseconds of samples it stands for.
type weight struct {
	name string
	ms   float64
}

// heaviest returns m's entries, heaviest first (by name on a tie).
func heaviest(m map[string]float64) []weight {
	var out []weight
	for k, v := range m {
		out = append(out, weight{k, v})
	}
	slices.SortFunc(out, func(a, b weight) int { return cmp.Or(cmp.Compare(b.ms, a.ms), strings.Compare(a.name, b.name)) })
	return out
}

// report writes the total and each area's percent of the samples read
// from r, heaviest first, with verbose its six heaviest leaf frames too.
func report(w io.Writer, r io.Reader, verbose bool) error {
	ss, err := samples(r)
	if err != nil {
		return err
	}
	tot := map[string]float64{}
	leaves := map[string]map[string]float64{}
	var sum float64
	for _, s := range ss {
		a := area(s.frames)
		tot[a] += s.ms
		sum += s.ms
		if leaves[a] == nil {
			leaves[a] = map[string]float64{}
		}
		caller := ""
		if len(s.frames) > 1 {
			caller = s.frames[1]
		}
		leaves[a][s.frames[0]+" <- "+caller] += s.ms
	}
	fmt.Fprintf(w, "total %.2fs\n", sum/1000)
	for _, a := range heaviest(tot) {
		fmt.Fprintf(w, "%5.1f%%  %s\n", 100*a.ms/sum, a.name)
		if verbose {
			for _, l := range heaviest(leaves[a.name])[:min(6, len(leaves[a.name]))] {
				fmt.Fprintf(w, "        %4.1f%% %s\n", 100*l.ms/sum, l.name)
			}
		}
	}
	return nil
}
