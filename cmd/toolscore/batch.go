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
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/format"
	"github.com/toolscore/toolscore/internal/jsondoc"
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
	// borrowed marks data that is valid only until the reader reads on
	// (a line in the reader's buffer): the chunk copies it.
	borrowed bool
	err      error
}

// batchOutcome is a graded batchItem.
type batchOutcome struct {
	seq    int
	source string
	size   int
	ok     bool          // the trace was graded: graded is its result
	graded report.Graded // what the summary keeps of the result
	err    string        // why the trace could not be graded
	// lineEnd is the end of the outcome's JSON line in its chunk's out,
	// with --json.
	lineEnd int
}

// batchChunk is a run of consecutive traces that one worker grades and
// the writer writes together: few hand-offs between goroutines per trace,
// and one buffer for the lines' bytes and one for their JSON results.
// Chunks are used again once written.
type batchChunk struct {
	items []batchItem
	size  int    // the bytes of the items' traces
	buf   []byte // the bytes of the borrowed items
	offs  [][2]int
	outs  []batchOutcome
	out   []byte // the JSON lines of outs, with --json
}

// A chunk holds at most chunkTraces traces, and no more once they reach
// chunkBytes; it is also handed on when reading further would wait
// (a stream), so that results come as soon as their traces do.
const (
	chunkTraces = 32
	chunkBytes  = 256 << 10
)

// lineRoom is the room a chunk's JSON buffer has before each result is
// written (a medium result's line is about 7 KB).
const lineRoom = 32 << 10

// maxPooledChunk is the largest buffer a chunk keeps when it is used
// again, so that the chunk of one large trace does not stay in memory.
const maxPooledChunk = 4 << 20

// batchJob is a batch evaluation: the expectation, the options and where
// the traces come from.
type batchJob struct {
	s         stdio
	contract  *engine.Contract
	expSHA    string
	opts      engine.Options
	bounds    gradeBounds
	format    string
	eachLine  bool
	json      bool
	safety    bool // the outcomes need the failed safety checks (a baseline)
	jobs      int
	traceArgs []string
	onOutcome func(*batchOutcome) // called in input order by the writer
	onOutput  func([]byte)        // with --json, the JSON lines in input order
	progress  *progressbar.ProgressBar
	// expected keeps the JSON of the expected calls per combination.
	expected resultjson.ExpectedCache
	// free holds the chunks written, to be used again (a run has at most
	// window+jobs+1 chunks at once, so none is dropped).
	free chan *batchChunk
}

// batchGCPercent is the garbage collector's target while a batch runs
// (unless GOGC is set): a batch allocates fast and keeps little (a window
// of traces), so collecting at 400% rather than 100% growth saves about a
// third of its CPU (0.60 s against 0.86-1.04 s of CPU for 10,000 medium
// traces) for a peak RSS of about 55 MB instead of 29 MB, still flat in
// the number of traces.
const batchGCPercent = 400

// batchWindow is how many chunks may be read ahead of the one the writer
// waits for: it bounds memory whatever the number of traces, and keeps
// every worker busy while one slow trace holds the output back.
func batchWindow(jobs int) int { return max(8, 4*jobs) }

// run grades every trace with j.jobs workers and calls j.onOutcome for
// each in input order (and j.onOutput for their JSON lines). Reading is
// sequential and streamed (a directory is listed, never loaded); at most
// batchWindow chunks of traces are in memory at once. Once ctx is done no
// outcome is delivered.
func (j *batchJob) run(ctx context.Context) error {
	window := batchWindow(j.jobs)
	j.free = make(chan *batchChunk, window+j.jobs+1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type seqChunk struct {
		seq int
		c   *batchChunk
	}
	chunks := make(chan seqChunk, j.jobs)
	done := make(chan seqChunk, window)
	slots := make(chan struct{}, window)
	var readErr error
	go func() {
		defer close(chunks)
		seq, nchunk := 0, 0
		cur := j.newChunk()
		send := func() bool {
			if len(cur.items) == 0 {
				return true
			}
			for i, o := range cur.offs {
				if o[1] >= 0 {
					cur.items[i].data = cur.buf[o[0]:o[1]:o[1]]
				}
			}
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return false
			}
			select {
			case chunks <- seqChunk{nchunk, cur}:
			case <-ctx.Done():
				return false
			}
			nchunk++
			cur = j.newChunk()
			return true
		}
		readErr = j.produce(ctx, func(it batchItem, more bool) bool {
			it.seq = seq
			seq++
			off := [2]int{0, -1}
			if it.borrowed {
				off = [2]int{len(cur.buf), len(cur.buf) + len(it.data)}
				cur.buf = append(cur.buf, it.data...)
				it.data, it.borrowed = nil, false
			}
			cur.items = append(cur.items, it)
			cur.offs = append(cur.offs, off)
			cur.size += max(len(it.data), off[1]-off[0])
			if !more || len(cur.items) >= chunkTraces || cur.size >= chunkBytes {
				return send()
			}
			return true
		})
		if ctx.Err() == nil {
			send()
		}
	}()
	var wg sync.WaitGroup
	for range j.jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rd := format.NewReader()
			// Each worker's writer keeps the JSON of the texts its
			// results repeat; the expected calls' is the batch's.
			w := &resultjson.Writer{Mode: resultjson.NoHTML, Expected: &j.expected}
			for c := range chunks {
				j.gradeChunk(ctx, rd, w, c.c)
				done <- c
			}
		}()
	}
	go func() {
		wg.Wait()
		close(done)
	}()
	// The writer: chunks arrive in any order and leave in input order. A
	// chunk's seq is less than next+window (its slot was taken after the
	// chunk next-1 released one), so a ring of window entries holds every
	// pending chunk.
	ring := make([]*batchChunk, window)
	next := 0
	for sc := range done {
		ring[sc.seq%window] = sc.c
		for ring[next%window] != nil {
			c := ring[next%window]
			ring[next%window] = nil
			j.deliver(ctx, c)
			select {
			case j.free <- c:
			default:
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

// newChunk returns an empty chunk, one used before when there is one.
func (j *batchJob) newChunk() *batchChunk {
	var c *batchChunk
	select {
	case c = <-j.free:
	default:
		return &batchChunk{}
	}
	if cap(c.buf) > maxPooledChunk {
		c.buf = nil
	}
	if cap(c.out) > maxPooledChunk {
		c.out = nil
	}
	clear(c.items)
	c.items, c.size, c.buf, c.offs, c.outs, c.out = c.items[:0], 0, c.buf[:0], c.offs[:0], c.outs[:0], c.out[:0]
	return c
}

// deliver hands a graded chunk's outcomes and JSON lines on, in order,
// until ctx is done.
func (j *batchJob) deliver(ctx context.Context, c *batchChunk) {
	end := 0
	for i := range c.outs {
		if ctx.Err() != nil {
			break
		}
		o := &c.outs[i]
		j.onOutcome(o)
		end = o.lineEnd
		if j.progress != nil {
			if j.eachLine {
				_ = j.progress.Add(o.size)
			} else {
				_ = j.progress.Add(1)
			}
		}
	}
	if j.onOutput != nil && end > 0 {
		j.onOutput(c.out[:end])
	}
}

// gradeChunk grades every trace of c with rd, filling c.outs and, with
// --json, c.out (written by w).
func (j *batchJob) gradeChunk(ctx context.Context, rd *format.Reader, w *resultjson.Writer, c *batchChunk) {
	for i := range c.items {
		it := &c.items[i]
		o := j.grade(ctx, rd, w, it, c)
		o.lineEnd = len(c.out)
		c.outs = append(c.outs, o)
		it.data = nil
	}
}

// grade parses and grades one trace with rd, appending its JSON line
// (written by w) to c.out with --json. The outcome keeps nothing of the
// trace or its result: rd reads the next trace into the same memory.
func (j *batchJob) grade(ctx context.Context, rd *format.Reader, w *resultjson.Writer, it *batchItem, c *batchChunk) batchOutcome {
	o := batchOutcome{seq: it.seq, source: it.source, size: it.size}
	fail := func(msg string) batchOutcome {
		o.err = msg
		if j.json {
			c.out, _ = report.AppendSaved(c.out, report.Header{ExpectationSHA256: j.expSHA, Source: it.source, Error: msg}, nil)
			c.out = append(c.out, '\n')
		}
		return o
	}
	if it.err != nil {
		return fail(it.err.Error())
	}
	p, err := rd.Parse(it.data, j.format)
	if it.line && (err != nil || p.Form == format.FormJSONLines) {
		// The reader takes values after the first for JSON Lines, but a
		// line is one trace.
		if col := secondValue(it.data); col > 0 {
			return fail(fmt.Sprintf("column %d: more than one JSON value on the line", col))
		}
	}
	if err != nil {
		if it.line {
			if msg := lineValueError(it.data); msg != "" {
				return fail(msg)
			}
		}
		var se *engine.SyntaxError
		if it.line && errors.As(err, &se) && se.Line == 1 {
			// The source names the line; the column is the line's, and
			// the pointer places the error inside the line's trace.
			msg := fmt.Sprintf("column %d: %s", se.Column, se.Msg)
			if se.Pointer != "" {
				msg += " (at " + jsondoc.ShortPointer(se.Pointer) + ")"
			}
			return fail(msg)
		}
		return fail(describeError(err))
	}
	res, err := j.bounds.evaluate(ctx, j.contract, p.Trace, j.opts)
	if err != nil {
		return fail(err.Error())
	}
	o.ok, o.graded = true, report.Summarize(res, j.safety)
	if j.json {
		at := len(c.out)
		// Room for the line with the chunk's buffer grown as append
		// grows it: the writer adds only its own line's estimate.
		c.out = slices.Grow(c.out, lineRoom)
		line, err := report.AppendSavedWith(c.out, report.Header{ExpectationSHA256: j.expSHA, Source: it.source}, res, w)
		if err != nil {
			c.out = c.out[:at]
			return fail(err.Error())
		}
		c.out = append(line, '\n')
	}
	return o
}

// produce reads every trace named by j.traceArgs in order and hands each
// to emit, which returns false when the run is over; more reports that
// further input can be read without waiting (emit may then hold the item
// back to hand it on with the next ones). A path that cannot be read is
// an item with an error (the others are still read); the returned error
// is for the run as a whole (none today). A path named more than once
// (the same file or directory twice, or a file and a directory holding
// it) is read once, where it is first named, with a note on stderr for
// each repetition (see once); standard input ("-") is not a path.
func (j *batchJob) produce(ctx context.Context, emit func(it batchItem, more bool) bool) error {
	seen := map[string]bool{}
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
		if !j.once(seen, arg) {
			continue
		}
		fi, err := os.Stat(arg)
		if err != nil {
			if !emit(batchItem{source: arg, err: errors.New(itemErrorText(err))}, true) {
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
			if !emit(batchItem{source: arg, err: err}, true) {
				return nil
			}
			continue
		}
		for _, f := range files {
			if !j.once(seen, f) {
				continue
			}
			if !j.readFile(f, emit) {
				return nil
			}
		}
	}
	return nil
}

// once reports whether path is named for the first time in this run,
// recording it in seen; paths compare absolute and cleaned (runs/a.json,
// ./runs/a.json and runs//a.json are one). A repetition is noted on
// stderr: "toolscore: PATH: named more than once, graded once".
func (j *batchJob) once(seen map[string]bool, path string) bool {
	key, err := filepath.Abs(path)
	if err != nil {
		key = filepath.Clean(path)
	}
	if seen[key] {
		fmt.Fprintf(j.s.err, "toolscore: %s: named more than once, graded once\n", path)
		return false
	}
	seen[key] = true
	return true
}

// secondValue returns the column (from 1, in bytes) where a second JSON
// value starts on line, after a first one that is whole; 0 when there is
// none (one value, a broken first one, or something after it that starts
// no JSON value).
func secondValue(line []byte) int {
	_, err := jsondoc.Parse(line)
	var se *jsondoc.SyntaxError
	if !errors.As(err, &se) || !strings.HasSuffix(se.Msg, "after top-level value") || se.Line != 1 || se.Column > len(line) {
		return 0
	}
	if c := line[se.Column-1]; strings.IndexByte(`{["-0123456789tfn`, c) < 0 {
		return 0
	}
	return se.Column
}

// eachLineNeeds ends the messages of lineValueError.
const eachLineNeeds = "--each-line needs one whole JSON value per line (grade a pretty-printed trace without --each-line)"

// lineValueError describes line, a line of --each-line input that the
// reader could not read, when it is not one JSON value for want of a
// whole one: a piece of a value written across lines (a pretty-printed
// trace), which starts inside a value, ends inside one (the place in it
// given as a pointer), or goes on after a whole one; or one value
// followed by something that starts none. The message starts with the
// column (from 1, in bytes); the reader's pointer, which would count
// values on the line, is left out. It is "" for a line whose first value
// is broken inside, which the reader's error places.
func lineValueError(line []byte) string {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r') {
		i++
	}
	if i < len(line) && strings.IndexByte("}],:", line[i]) >= 0 {
		return fmt.Sprintf("column %d: the line starts with %q, inside a JSON value begun on an earlier line: %s", i+1, line[i], eachLineNeeds)
	}
	_, err := jsondoc.Parse(line)
	var se *jsondoc.SyntaxError
	switch {
	case !errors.As(err, &se) || se.Line != 1:
		return ""
	case se.Msg == "unexpected end of JSON input":
		at := ""
		if se.Pointer != "" {
			at = " (at " + jsondoc.ShortPointer(se.Pointer) + ")"
		}
		return fmt.Sprintf("column %d: %s%s: the line ends inside a JSON value, one written across lines or cut short; %s", se.Column, se.Msg, at, eachLineNeeds)
	case strings.HasSuffix(se.Msg, "after top-level value") && se.Column <= len(line):
		if c := line[se.Column-1]; strings.IndexByte("}],:", c) >= 0 {
			return fmt.Sprintf("column %d: %q after a whole JSON value: the line holds part of a JSON value written across lines; %s", se.Column, c, eachLineNeeds)
		}
		return fmt.Sprintf("column %d: %s", se.Column, se.Msg)
	}
	return ""
}

// readFile hands the trace at path, or with --each-line each of its
// lines, to emit. It returns false when emit did.
func (j *batchJob) readFile(path string, emit func(batchItem, bool) bool) bool {
	if j.eachLine {
		f, err := os.Open(path)
		if err != nil {
			return emit(batchItem{source: path, err: errors.New(itemErrorText(err))}, true)
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
		return emit(batchItem{source: path, err: errors.New(itemErrorText(err))}, true)
	}
	return emit(batchItem{source: path, data: data, size: len(data)}, true)
}

// readStream hands r's traces to emit: the whole stream as one trace, or
// with --each-line one per non-blank line (source name:N, N counting
// every line from 1; the line's bytes borrowed from the reader's
// buffer). A line longer than maxTraceBytes is an error item.
func (j *batchJob) readStream(name string, r io.Reader, emit func(batchItem, bool) bool) bool {
	if !j.eachLine {
		data, err := io.ReadAll(io.LimitReader(r, maxTraceBytes+1))
		switch {
		case err != nil:
			return emit(batchItem{source: name, err: err}, true)
		case len(data) > maxTraceBytes:
			return emit(batchItem{source: name, err: fmt.Errorf("larger than %d MiB", maxTraceBytes>>20)}, true)
		case len(bytes.TrimSpace(data)) == 0:
			return emit(batchItem{source: name, err: errors.New("file is empty")}, true)
		}
		return emit(batchItem{source: name, data: data, size: len(data)}, true)
	}
	br := bufio.NewReaderSize(r, 1<<20)
	var long []byte
	tooLong := false
	// source is the source name of line n, name:n, made in one
	// allocation.
	prefix := name + ":"
	var num []byte
	source := func(n int) string {
		num = strconv.AppendInt(append(num[:0], prefix...), int64(n), 10)
		return string(num)
	}
	for n := 1; ; n++ {
		chunk, err := br.ReadSlice('\n')
		size := len(chunk)
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: gather it, up to the cap and
			// its line ending (at most "\r\n").
			long = append(long[:0], chunk...)
			for errors.Is(err, bufio.ErrBufferFull) {
				chunk, err = br.ReadSlice('\n')
				size += len(chunk)
				if !tooLong && len(long)+len(chunk) <= maxTraceBytes+2 {
					long = append(long, chunk...)
				} else {
					tooLong = true
				}
			}
			chunk = long
		}
		more := err == nil && br.Buffered() > 0
		switch {
		case tooLong || len(bytes.TrimRight(chunk, "\r\n")) > maxTraceBytes:
			if !emit(batchItem{source: source(n), size: size, err: fmt.Errorf("line longer than %d MiB", maxTraceBytes>>20)}, more) {
				return false
			}
		case len(bytes.TrimSpace(chunk)) > 0:
			line := bytes.TrimRight(chunk, "\r\n")
			if !emit(batchItem{source: source(n), size: size, data: line, borrowed: true, line: true}, more) {
				return false
			}
		}
		tooLong = false
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return emit(batchItem{source: source(n), err: err}, false)
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
// checkJobs returns an error when --jobs is outside 0 to maxConcurrency,
// whatever the number of traces: runEval and runBatch both call it, so a
// value refused with a directory is refused with one trace too.
func (f evalFlags) checkJobs() error {
	if f.jobs < 0 || f.jobs > maxConcurrency {
		return failf("--jobs: must be from 1 to %d, or 0 for one per core, got %d", maxConcurrency, f.jobs)
	}
	return nil
}

func runBatch(ctx context.Context, s stdio, expPath string, traceArgs []string, f evalFlags) error {
	opts, err := f.options()
	if err != nil {
		return err
	}
	bounds, err := f.bounds()
	if err != nil {
		return err
	}
	if err := checkFormat(f.format); err != nil {
		return err
	}
	if f.finalAnswer != nil {
		return failf("--final-answer applies to one trace only, got %d trace arguments", len(traceArgs))
	}
	if err := f.checkJobs(); err != nil {
		return err
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
	var warm sync.WaitGroup
	warm.Go(warmSecretScanner)
	defer warm.Wait()
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
		s: s, contract: contract, expSHA: sha, opts: opts, bounds: bounds, safety: base != nil,
		format: f.format, eachLine: f.eachLine, json: f.json, jobs: jobs, traceArgs: traceArgs,
	}
	firstSource := ""
	j.onOutcome = func(o *batchOutcome) {
		if firstSource == "" {
			firstSource = o.source
		}
		if o.ok {
			sum.AddGraded(o.seq, o.source, o.graded)
		} else {
			sum.AddError(o.seq, o.source, o.err)
		}
	}
	if f.json {
		j.onOutput = func(lines []byte) {
			if writeErr == nil {
				_, writeErr = out.Write(lines)
			}
		}
	}
	j.progress = newBatchProgress(s.err, traceArgs, f.eachLine)
	start := s.clock()
	runErr := j.run(ctx)
	sum.Duration = s.clock().Sub(start)
	if j.progress != nil {
		_ = j.progress.Clear()
	}
	if runErr == nil && sum.Traces == 0 {
		// Files with no line to grade (--each-line): no summary of
		// nothing, and the error names them.
		names := make([]string, len(traceArgs))
		for i, a := range traceArgs {
			names[i] = displayName(a)
		}
		if len(names) == 1 {
			return failf("no traces to grade: %s holds none", names[0])
		}
		return failf("no traces to grade: %s and %s hold none", strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
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
	var lines []string
	if base != nil && base.Unread > 0 {
		// Values of the baseline that are not saved results: the others
		// were compared (the traces of these count as new), and the run
		// is an error, as regrade's results that could not be regraded.
		for _, e := range base.UnreadErrors {
			lines = append(lines, "--baseline: "+e.Error())
		}
		more := ""
		if base.Unread > len(base.UnreadErrors) {
			more = fmt.Sprintf(" (the first %d above)", len(base.UnreadErrors))
		}
		n := base.Unread + base.Traces
		lines = append(lines, fmt.Sprintf("--baseline: %d of %d results of %s could not be read%s: the traces they are of were compared as new", base.Unread, n, base.File, more))
	}
	if sum.Failures > 0 {
		for _, e := range sum.Errors {
			lines = append(lines, e.Source+": "+e.Error)
		}
		more := ""
		if sum.Failures > len(sum.Errors) {
			more = fmt.Sprintf(" (the first %d above)", len(sum.Errors))
		}
		lines = append(lines, fmt.Sprintf("%d of %d traces could not be graded%s", sum.Failures, sum.Traces, more))
	}
	if len(lines) > 0 {
		return &runError{lines: lines}
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
