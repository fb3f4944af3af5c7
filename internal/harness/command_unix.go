//go:build unix

package harness

import (
	"os/exec"
	"syscall"
)

// killGroup starts cmd in a process group of its own and makes context
// cancellation kill the whole group, so a shell's children die with it.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
