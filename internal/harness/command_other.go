//go:build !unix

package harness

import "os/exec"

// killGroup leaves cmd as it is: without process groups, cancellation
// kills only the command itself.
func killGroup(cmd *exec.Cmd) {}
