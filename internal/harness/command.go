package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// CommandRunner reaches an agent by running a shell command per task: the
// Request is written as JSON to its stdin, and its stdout is the agent's
// answer. The task id is also in the environment as TOOLSCORE_TASK_ID. It
// is safe for concurrent use.
//
// A non-zero exit is a final error quoting the end of stderr. When the
// attempt's context ends the command's whole process group is killed.
type CommandRunner struct {
	// Command is run with "sh -c", so it may hold arguments and pipes.
	Command string
	// Dir is the working directory; "" means the current one.
	Dir string
	// MaxAnswerBytes caps stdout; 0 means DefaultMaxAnswerBytes.
	MaxAnswerBytes int64
}

// NewCommandRunner returns a CommandRunner for command, which must not be
// blank.
func NewCommandRunner(command string) (*CommandRunner, error) {
	if strings.TrimSpace(command) == "" {
		return nil, errors.New("agent command is empty")
	}
	return &CommandRunner{Command: command}, nil
}

// Run runs the command for req and returns its stdout.
func (r *CommandRunner) Run(ctx context.Context, req *Request) ([]byte, error) {
	in, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	limit := limitOr(r.MaxAnswerBytes)
	cmd := exec.CommandContext(ctx, "sh", "-c", r.Command)
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), "TOOLSCORE_TASK_ID="+req.TaskID)
	cmd.Stdin = bytes.NewReader(in)
	stdout := &cappedBuffer{max: int(limit) + 1}
	stderr := &tailBuffer{max: 2048}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	killGroup(cmd)
	// Children that keep stdout open must not hold Wait forever once the
	// command itself is gone.
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("agent command failed (%s)%s", ee.ProcessState, quoteTail(stderr.String()))
		}
		return nil, fmt.Errorf("agent command: %w", err)
	}
	if int64(stdout.Len()) > limit {
		return nil, fmt.Errorf("agent answer larger than %d bytes", limit)
	}
	return stdout.Bytes(), nil
}

// quoteTail returns ": " and the last line of s, or "".
func quoteTail(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return ""
	}
	return ": " + s
}

// cappedBuffer keeps the first max bytes written and discards the rest
// (while still reporting success, so the writer is not killed by EPIPE).
type cappedBuffer struct {
	bytes.Buffer
	max int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.max {
		b.buf = b.buf[len(b.buf)-b.max:]
	}
	return len(p), nil
}

func (b *tailBuffer) String() string { return string(b.buf) }

var _ io.Writer = (*tailBuffer)(nil)
