package engine

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestEngineIsPure checks the engine's imports (doc.go, "Purity"): `go
// list -deps` of the engine and all its subpackages (test files aside)
// must show only the standard library, golang.org/x, the JSON Schema
// validator of the contract schema and the project's own packages (which
// are in the same list, so their imports obey the same rule). Secret
// detection, which needs gitleaks, comes from the caller
// (Options.SecretScanner).
func TestEngineIsPure(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the engine's imports: %v", err)
	}
	const module = "github.com/toolscore/toolscore"
	cmd := exec.Command(goTool, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", module+"/internal/engine/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderrOf(err))
	}
	allowed := func(p string) bool {
		return strings.HasPrefix(p, "golang.org/x/") ||
			p == "github.com/santhosh-tekuri/jsonschema/v5" || strings.HasPrefix(p, "github.com/santhosh-tekuri/jsonschema/v5/") ||
			p == module || strings.HasPrefix(p, module+"/")
	}
	var own []string
	for p := range strings.FieldsSeq(string(out)) {
		if !allowed(p) {
			t.Errorf("the engine imports %s (directly or through another package)", p)
		}
		if strings.HasPrefix(p, module+"/") {
			own = append(own, p)
		}
	}
	// The list is not vacuous: it holds the engine itself.
	if !slices.Contains(own, module+"/internal/engine") {
		t.Errorf("go list -deps does not list the engine itself: %q", out)
	}
}

// stderrOf returns what a failed command wrote on stderr.
func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
