// Command toolscore grades an LLM agent's tool calls against a gold file or
// a Contract v2, explains a trace, and validates contracts.
//
// Exit status: 0 when the verdict is PASS (or the command succeeded), 1 when
// it is FAIL, 2 on any error. See `toolscore help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], newStdio(os.Stdin, os.Stdout, os.Stderr, os.Getenv("NO_COLOR")))
	stop()
	os.Exit(code)
}
