package engine_test

import "github.com/toolscore/toolscore/internal/secrets"

// secretScanner is the default secret scanner (package secrets), shared by
// the external tests' evaluations.
var secretScanner = secrets.New()
