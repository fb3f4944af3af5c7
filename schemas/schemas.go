// Package schemas embeds the JSON Schemas that toolscore publishes, so the
// engine and the CLI apply exactly the files in this directory.
package schemas

import _ "embed"

// ContractV2 is contract-v2.schema.json (JSON Schema draft 2020-12).
//
//go:embed contract-v2.schema.json
var ContractV2 []byte
