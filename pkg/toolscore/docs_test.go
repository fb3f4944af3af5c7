package toolscore_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docExample returns the Go block after "<!-- example: go -->" in a
// Markdown file of the repository.
func docExample(t *testing.T, path string) string {
	t.Helper()
	m := regexp.MustCompile("(?s)<!-- example: go -->\n```go\n(.*?)\n```\n").FindSubmatch(read(t, filepath.Join("..", "..", path)))
	if m == nil {
		t.Fatalf("%s has no Go example block", path)
	}
	return string(m[1])
}

// TestDocsExampleIsExample: the Go example of README.md and
// docs/clients.md is the body of Example (between its "example: go" and
// "end example" comments), which `go test` runs and whose output it
// checks, with paths relative to the repository root instead of this
// directory.
func TestDocsExampleIsExample(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)\n\t// example: go\n(.*?)\n\t// end example\n`).FindSubmatch(src)
	if m == nil {
		t.Fatal("example_test.go has no example: go ... end example lines")
	}
	var lines []string
	for l := range strings.SplitSeq(string(m[1]), "\n") {
		lines = append(lines, strings.TrimPrefix(l, "\t"))
	}
	want := strings.ReplaceAll(strings.Join(lines, "\n"), `"../../examples/`, `"examples/`)
	for _, path := range []string{"README.md", filepath.Join("docs", "clients.md")} {
		if got := docExample(t, path); got != want {
			t.Errorf("%s's Go example is not Example's:\n%s\nwant:\n%s", path, got, want)
		}
	}
}
