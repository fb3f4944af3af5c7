package engine

import "github.com/toolscore/toolscore/internal/secrets"

// testSecrets is the default secret scanner (package secrets, gitleaks'
// rules), shared by the tests' evaluations as a process shares one.
var testSecrets SecretScanner = secrets.New()
