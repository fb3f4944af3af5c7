package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// newVersionCmd builds `toolscore version`.
func newVersionCmd(s stdio) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the toolscore version and the Go version it was built with",
		Args:  exactArgs(),
		RunE: runE(func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(s.out, versionString())
			return err
		}),
	}
}

// versionString is "toolscore VERSION (commit REV) GOVERSION OS/ARCH"; the
// commit appears when the binary was built from a git checkout with VCS
// stamping (go build's default), and is marked "dirty" when the tree had
// local changes.
func versionString() string {
	v := "toolscore " + version
	if info, ok := debug.ReadBuildInfo(); ok {
		var rev, modified string
		for _, st := range info.Settings {
			switch st.Key {
			case "vcs.revision":
				rev = st.Value
			case "vcs.modified":
				modified = st.Value
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			if modified == "true" {
				rev += ", dirty"
			}
			v += " (commit " + rev + ")"
		}
	}
	return fmt.Sprintf("%s %s %s/%s", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
