package regrade

import (
	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/secrets"
)

// testSecrets is the default secret scanner the tests' regrades use.
var testSecrets engine.SecretScanner = secrets.New()
