package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/format"
	"github.com/toolscore/toolscore/internal/report"
	"github.com/toolscore/toolscore/internal/resultjson"
)

// maxTraceBytes caps one trace: a file, or one line with --each-line.
const maxTraceBytes = 64 << 20

// traceExtensions are the files a directory contributes, one trace each;
// lineExtensions those it contributes with --each-line.
var (
	traceExtensions = []string{".json", ".jsonl", ".ndjson", ".sse"}
	lineExtensions  = []string{".jsonl", ".ndjson"}
)

// batchItem is one trace to grade: its 0-based place in the input, where
// it came from, and its bytes (or why they could not be read).
type batchItem struct {
	seq    int
	source string
	data   []byte
	size   int  // bytes consumed from the input, for the progress bar
	line   bool // data is one line of a JSON Lines file
	err    error
}

// maxPooledLine is the largest --json line buffer batchJob.lines keeps, so
// that the line of one large trace does not stay in memory.
const maxPooledLine = 256 << 10

// batchOutcome is a graded batchItem.
type batchOutcome struct {
	seq    int
	source string
	size   int
	res    *engine.EvaluationResult
	line   []byte  // the saved result's JSON line, with --json
	buf    *[]byte // line's buffer, from batchJob.lines; nil for an error line
	err    string  // why the trace could not be graded; "" when res is set
}

// batchJob is a batch evaluation: the expectation, the options and where
// the traces come from.
type batchJob struct {
	s         stdio
	contract  *engine.Contract
	expSHA    string
	opts      engine.Options
	format    string
	eachLine  bool
	json      bool
	jobs      int
	traceArgs []string
	onOutcome func(*batchOutcome) // called in input order by the writer
	progress  *progressbar.ProgressBar
	// expected keeps the JSON of the expected calls per combination, and
	// lines the buffers of the JSON lines, used again once written.
	expected resultjson.ExpectedCache
	lines    sync.Pool // *[]byte
}

// batchGCPercent is the garbage collector's target while a batch runs
// (unless GOGC is set): a batch allocates fast and keeps little (a window
// of traces), so collecting at 400% rather than 100% growth saves about a
// third of its CPU (0.60 s against 0.86-1.04 s of CPU for 10,000 medium
// traces) for a peak RSS of about 55 MB instead of 29 MB, still flat in
// the number of traces.
const batchGCPercent = 400

// batchWindow is how many traces may be read ahead of the one the writer
// waits for: it bounds memory whatever the number of traces, and keeps
// every worker busy while one slow trace holds the output back.
func batchWindow(jobs int) int { return max(16, 8*jobs) }

// run grades every trace with j.jobs workers and calls j.onOutcome for
// each in input order. Reading is sequential and streamed (a directory is
// listed, never loaded); at most batchWindow traces are in memory at
// once.
func (j *batchJob) run(ctx context.Context) error {
	window := batchWindow(j.jobs)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	items := make(chan batchItem, j.jobs)
	outcomes := make(chan batchOutcome, window)
	slots := make(chan struct{}, window)
	var readErr error
	go func() {
		defer close(items)
		seq := 0
		readErr = j.produce(ctx, func(it batchItem) bool {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return false
			}
			it.seq = seq
			seq++
			select {
			case items <- it:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	var wg sync.WaitGroup
	for range j.jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range items {
				outcomes <- j.grade(ctx, it)
			}
		}()
	}
	go func() {
		wg.Wait()
		close(outcomes)
	}()
	// The writer: outcomes arrive in any order and leave in input order.
	// An outcome's seq is less than next+window (its slot was taken after
	// the outcome next-1 released one), so a ring of window entries holds
	// every pending outcome.
	ring := make([]*batchOutcome, window)
	next := 0
	for o := range outcomes {
		ring[o.seq%window] = &o
		for ring[next%window] != nil && ring[next%window].seq == next {
			cur := ring[next%window]
			ring[next%window] = nil
			j.onOutcome(cur)
			if cur.buf != nil && cap(cur.line) <= maxPooledLine {
				*cur.buf = cur.line[:0]
				j.lines.Put(cur.buf)
			}
			if j.progress != nil {
				if j.eachLine {
					_ = j.progress.Add(cur.size)
				} else {
					_ = j.progress.Add(1)
				}
			}
			next++
			<-slots
		}
	}
	if readErr != nil {
		return readErr
	}
	return ctx.Err()
}

// grade parses and grades one trace.
func (j *batchJob) grade(ctx context.Context, it batchItem) batchOutcome {
	o := batchOutcome{seq: it.seq, source: it.source, size: it.size}
	fail := func(msg string) batchOutcome {
		o.err = msg
		if j.json {
			line, _ := report.AppendSaved(nil, report.Header{ExpectationSHA256: j.expSHA, Source: it.source, Error: msg}, nil)
			o.line = append(line, '\n')
		}
		return o
	}
	if it.err != nil {
		return fail(it.err.Error())
	}
	p, err := format.Parse(it.data, j.format)
	if err != nil {
		var se *engine.SyntaxError
		if it.line && errors.As(err, &se) && se.Line == 1 {
			// The source names the line; the column is the line's.
			return fail(fmt.Sprintf("column %d: %s", se.Column, se.Msg))
		}
		return fail(describeError(err))
	}
	res, err := engine.Evaluate(ctx, j.contract, p.Trace, j.opts)
	if err != nil {
		return fail(err.Error())
	}
	o.res = res
	if j.json {
		buf, _ := j.lines.Get().(*[]byte)
		if buf == nil {
			buf = new([]byte)
		}
		line, err := report.AppendSavedWith(*buf, report.Header{ExpectationSHA256: j.expSHA, Source: it.source}, res, &j.expected)
		if err != nil {
			j.lines.Put(buf)
			return fail(err.Error())
		}
		o.line, o.buf = append(line, '\n'), buf
	}
	return o
}

// produce reads every trace named by j.traceArgs in order and hands each
// to emit, which returns false when the run is over. A path that cannot
// be read is an item with an error (the others are still read); the
// returned error is for the run as a whole (none today).
func (j *batchJob) produce(ctx context.Context, emit func(batchItem) bool) error {
	for _, arg := range j.traceArgs {
		if ctx.Err() != nil {
			return nil
		}
		if arg == "-" {
			if !j.readStream(stdinName, j.s.in, emit) {
				return nil
			}
			continue
		}
		fi, err := os.Stat(arg)
		if err != nil {
			if !emit(batchItem{source: arg, err: errors.New(itemErrorText(err))}) {
				return nil
			}
			continue
		}
		if !fi.IsDir() {
			if !j.readFile(arg, emit) {
				return nil
			}
			continue
		}
		files, err := j.listDir(arg)
		if err == nil && len(files) == 0 {
			exts := traceExtensions
			if j.eachLine {
				exts = lineExtensions
			}
			err = fmt.Errorf("no trace files (%s) in the directory", strings.Join(exts, ", "))
		}
		if err != nil {
			if !emit(batchItem{source: arg, err: err}) {
				return nil
			}
			continue
		}
		for _, f := range files {
			if !j.readFile(f, emit) {
				return nil
			}
		}
	}
	return nil
}

// readFile hands the trace at path, or with --each-line each of its
// lines, to emit. It returns false when emit did.
func (j *batchJob) readFile(path string, emit func(batchItem) bool) bool {
	if j.eachLine {
		f, err := os.Open(path)
		if err != nil {
			return emit(batchItem{source: path, err: errors.New(itemErrorText(err))})
		}
		defer f.Close()
		return j.readStream(path, f, emit)
	}
	fi, err := os.Stat(path)
	if err == nil && fi.Size() > maxTraceBytes {
		err = fmt.Errorf("larger than %d MiB", maxTraceBytes>>20)
	}
	var data []byte
	if err == nil {
		data, err = os.ReadFile(path)
	}
	if err == nil && len(bytes.TrimSpace(data)) == 0 {
		err = errors.New("file is empty")
	}
	if err != nil {
		return emit(batchItem{source: path, err: errors.New(itemErrorText(err))})
	}
	return emit(batchItem{source: path, data: data, size: len(data)})
}

// readStream hands r's traces to emit: the whole stream as one trace, or
// with --each-line one per non-blank line (source name:N, N counting
// every line from 1). A line longer than maxTraceBytes is an error item.
func (j *batchJob) readStream(name string, r io.Reader, emit func(batchItem) bool) bool {
	if !j.eachLine {
		data, err := io.ReadAll(io.LimitReader(r, maxTraceBytes+1))
		switch {
		case err != nil:
			return emit(batchItem{source: name, err: err})
		case len(data) > maxTraceBytes:
			return emit(batchItem{source: name, err: fmt.Errorf("larger than %d MiB", maxTraceBytes>>20)})
		case len(bytes.TrimSpace(data)) == 0:
			return emit(batchItem{source: name, err: errors.New("file is empty")})
		}
		return emit(batchItem{source: name, data: data, size: len(data)})
	}
	br := bufio.NewReaderSize(r, 1<<20)
	var long []byte
	tooLong := false
	for n := 1; ; n++ {
		chunk, err := br.ReadSlice('\n')
		size := len(chunk)
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: gather it, up to the cap.
			long = append(long[:0], chunk...)
			for errors.Is(err, bufio.ErrBufferFull) {
				chunk, err = br.ReadSlice('\n')
				size += len(chunk)
				if !tooLong && len(long)+len(chunk) <= maxTraceBytes+1 {
					long = append(long, chunk...)
				} else {
					tooLong = true
				}
			}
			chunk = long
		}
		source := fmt.Sprintf("%s:%d", name, n)
		switch {
		case tooLong || len(chunk) > maxTraceBytes+1:
			if !emit(batchItem{source: source, size: size, err: fmt.Errorf("line longer than %d MiB", maxTraceBytes>>20)}) {
				return false
			}
		case len(bytes.TrimSpace(chunk)) > 0:
			line := bytes.TrimRight(chunk, "\r\n")
			if !emit(batchItem{source: source, size: size, data: bytes.Clone(line), line: true}) {
				return false
			}
		}
		tooLong = false
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return emit(batchItem{source: fmt.Sprintf("%s:%d", name, n), err: err})
			}
			return true
		}
	}
}

// listDir lists the trace files under dir, recursively, in lexical order,
// skipping names that start with a dot; symbolic links to files (and
// broken ones) are listed, links to directories are not followed.
func (j *batchJob) listDir(dir string) ([]string, error) {
	exts := traceExtensions
	if j.eachLine {
		exts = lineExtensions
	}
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !slices.Contains(exts, strings.ToLower(filepath.Ext(path))) {
			return nil
		}
		switch {
		case d.Type().IsRegular():
			files = append(files, path)
		case d.Type()&fs.ModeSymlink != 0:
			// A link to a file is read as the file; a broken link is
			// listed so that reading it names it; a link to a directory
			// is not followed.
			if fi, err := os.Stat(path); err != nil || fi.Mode().IsRegular() {
				files = append(files, path)
			}
		}
		return nil
	})
	if err != nil {
		return nil, errors.New(pathErrorText(err))
	}
	return files, nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	fd, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(fd.Fd()))
}

// itemErrorText is an I/O error's text without the path: the batch item
// it is reported with names the path.
func itemErrorText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// pathErrorText is an I/O error's text with the path once (an
// *fs.PathError's operation left out).
func pathErrorText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if pe.Path != "" {
			return pe.Path + ": " + pe.Err.Error()
		}
		return pe.Err.Error()
	}
	return err.Error()
}

// runBatch grades many traces (several files, directories, or JSON Lines
// with --each-line) against the expectation at expPath with all cores,
// then prints the summary (or, with --json, one saved result per line in
// input order). A trace that cannot be read or graded does not stop the
// run: it is counted, named on stderr with its file and line, and makes
// the exit status 2 once every other trace is graded.
func runBatch(ctx context.Context, s stdio, expPath string, traceArgs []string, f evalFlags) error {
	opts, err := f.options()
	if err != nil {
		return err
	}
	if err := checkFormat(f.format); err != nil {
		return err
	}
	if f.finalAnswer != nil {
		return failf("--final-answer applies to one trace only, got %d trace arguments", len(traceArgs))
	}
	if f.jobs < 0 || f.jobs > maxConcurrency {
		return failf("--jobs: must be from 1 to %d, or 0 for one per core, got %d", maxConcurrency, f.jobs)
	}
	stdin := 0
	for _, a := range traceArgs {
		if a == "-" {
			stdin++
		}
	}
	switch {
	case stdin > 1:
		return failf("standard input (-) can be given once")
	case stdin == 1 && expPath == "-":
		return failf("only one of EXPECTATION and TRACE can be - (standard input)")
	}
	expData, err := readInput(s, expPath)
	if err != nil {
		return err
	}
	contract, err := engine.ParseContract(expData)
	if err != nil {
		return failf("%s: %s", displayName(expPath), describeError(err))
	}
	sha, err := report.ExpectationSHA256(expData)
	if err != nil {
		return failf("%s: %v", displayName(expPath), err)
	}
	// Invalid --weights or --min-score are the same for every trace: say
	// so once, before reading any.
	if _, err := engine.Evaluate(ctx, contract, engine.Trace{}, opts); err != nil {
		return evalError(err, expPath, len(f.weights) > 0)
	}
	maxDrop, err := f.maxDropValue()
	if err != nil {
		return err
	}
	var base *report.BatchBaseline
	if f.baseline != "" {
		fh, err := os.Open(f.baseline)
		if err != nil {
			return failf("--baseline: %s", pathErrorText(err))
		}
		base, err = report.ReadBatchBaseline(bufio.NewReaderSize(fh, 1<<20), f.baseline, sha, contract, displayName(expPath))
		fh.Close()
		if err != nil {
			return failf("--baseline: %v", err)
		}
	}
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(batchGCPercent))
	}
	jobs := f.jobs
	if jobs == 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	sum := report.NewBatch(displayName(expPath), expectationKind(contract))
	if base != nil {
		sum.CompareWith(base, maxDrop)
	}
	out := bufio.NewWriterSize(s.out, 64<<10)
	var writeErr error
	j := &batchJob{
		s: s, contract: contract, expSHA: sha, opts: opts,
		format: f.format, eachLine: f.eachLine, json: f.json, jobs: jobs, traceArgs: traceArgs,
	}
	firstSource := ""
	j.onOutcome = func(o *batchOutcome) {
		if firstSource == "" {
			firstSource = o.source
		}
		if o.res != nil {
			sum.Add(o.seq, o.source, o.res)
		} else {
			sum.AddError(o.seq, o.source, o.err)
		}
		if f.json && writeErr == nil {
			_, writeErr = out.Write(o.line)
		}
	}
	j.progress = newBatchProgress(s.err, traceArgs, f.eachLine)
	start := s.clock()
	runErr := j.run(ctx)
	sum.Duration = s.clock().Sub(start)
	if j.progress != nil {
		_ = j.progress.Clear()
	}
	if !f.json {
		text := textWriter{w: out, color: s.color}
		writeErr = writeBatchText(text, painter(s.color), sum)
		if writeErr == nil && sum.Diff != nil {
			writeErr = writeBatchDiffText(text, painter(s.color), sum)
		}
	}
	if err := out.Flush(); err != nil && writeErr == nil {
		writeErr = err
	}
	if writeErr != nil {
		return fmt.Errorf("write output: %w", writeErr)
	}
	if err := writeReportFiles(f, func(w io.Writer) error { return report.WriteBatchMarkdown(w, sum) },
		func(w io.Writer) error { return report.WriteBatchHTML(w, sum) }); err != nil {
		return err
	}
	if runErr != nil {
		return failf("run interrupted after %d traces: %v", sum.Traces, runErr)
	}
	if sum.Failures > 0 {
		lines := make([]string, 0, len(sum.Errors)+1)
		for _, e := range sum.Errors {
			lines = append(lines, e.Source+": "+e.Error)
		}
		more := ""
		if sum.Failures > len(sum.Errors) {
			more = fmt.Sprintf(" (the first %d above)", len(sum.Errors))
		}
		lines = append(lines, fmt.Sprintf("%d of %d traces could not be graded%s", sum.Failures, sum.Traces, more))
		return &runError{lines: lines}
	}
	if sum.Traces == 0 {
		return failf("no traces to grade")
	}
	if d := sum.Diff; d != nil {
		if d.Matched == 0 && d.Base.Traces > 0 {
			// Nothing was compared: the traces have other names (absolute
			// paths, another directory) or are all new.
			are := "s are"
			if d.Base.Traces == 1 {
				are = " is"
			}
			return failf("--baseline: %s: none of this run's %d trace%s is in it (its %d trace%s named like %s, this run's like %s): grade them under the names they had when it was saved, or save a new baseline",
				d.Baseline, sum.Traces, plural(sum.Traces), d.Base.Traces, are, d.Base.FirstSource, firstSource)
		}
		if d.Regressed > 0 {
			return errFailed
		}
		return nil
	}
	if sum.Failed > 0 {
		return errFailed
	}
	return nil
}

// expectationKind describes a contract: "contract v2", or "gold file, 2
// expected calls".
func expectationKind(c *engine.Contract) string {
	if c.Gold {
		n := len(c.Required)
		return fmt.Sprintf("gold file, %d expected call%s", n, plural(n))
	}
	return fmt.Sprintf("contract v%d", c.Version)
}

// writeBatchText prints a batch's summary for a person: what was graded,
// the pass rate, grade mix and mean score, and the worst traces with their
// top issue.
func writeBatchText(w io.Writer, p painter, b *report.Batch) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %d trace%s against %s (%s) in %s\n", p.bold("Graded"), b.Traces, plural(b.Traces), b.Expectation, b.Kind, report.Duration(b.Duration))
	verdict := p.paint(fmt.Sprintf("%d/%d passed", b.Passed, b.Traces), sgrBold)
	fmt.Fprintf(&sb, "%s%s\n", verdict, strings.TrimPrefix(b.SummaryLine(), fmt.Sprintf("%d/%d passed", b.Passed, b.Traces)))
	if len(b.Worst) > 0 {
		t := newTable()
		t.AppendHeader(table.Row{"trace", "score", "grade", "verdict", "top issue"})
		for _, l := range b.Worst {
			v := p.paint("PASS", sgrGreen)
			if !l.Passed {
				v = p.paint("FAIL", sgrRed)
			}
			t.AppendRow(table.Row{l.Source, report.Score(l.Score), p.grade(l.Grade), v, l.Issue})
		}
		t.SetColumnConfigs([]table.ColumnConfig{
			{Number: 2, Align: text.AlignRight},
			{Number: 5, WidthMax: 72, WidthMaxEnforcer: text.WrapSoft},
		})
		fmt.Fprintf(&sb, "\n%s\n%s\n", p.bold("Worst traces"), t.Render())
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// newBatchProgress returns a progress bar on w when w is a terminal, else
// nil: over the bytes of the inputs with --each-line (when they are
// regular files), else over the trace files.
func newBatchProgress(w io.Writer, args []string, eachLine bool) *progressbar.ProgressBar {
	if !isTerminal(w) {
		return nil
	}
	if eachLine {
		var total int64
		for _, a := range args {
			fi, err := os.Stat(a)
			if a == "-" || err != nil || !fi.Mode().IsRegular() {
				total = -1
				break
			}
			total += fi.Size()
		}
		return progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("grading"),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	total := 0
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil || !fi.IsDir() {
			total++
			continue
		}
		j := batchJob{}
		files, _ := j.listDir(a)
		total += len(files)
	}
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("traces"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}
