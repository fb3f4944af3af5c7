// Package toolscore holds files of the repository root that programs
// embed: the OpenAPI document of the HTTP API.
package toolscore

import _ "embed"

// OpenAPI is openapi.yaml, the OpenAPI 3.1 description of the HTTP API
// that internal/api serves at /openapi.yaml; a test in internal/api keeps
// it in sync with the router and the handlers' responses.
//
//go:embed openapi.yaml
var OpenAPI []byte
