package schemas

import _ "embed"

// Suite is suite.schema.json (JSON Schema draft 2020-12): the shape of a
// `toolscore harness` suite file.
//
//go:embed suite.schema.json
var Suite []byte
