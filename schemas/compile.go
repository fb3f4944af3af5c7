package schemas

import (
	"bytes"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Compiled schemas, each compiled once on first use and shared (a
// *jsonschema.Schema is safe for concurrent validation).
var (
	// ContractV2Schema returns ContractV2 compiled; the error is non-nil
	// only if the embedded file is broken.
	ContractV2Schema = sync.OnceValues(func() (*jsonschema.Schema, error) {
		return compile("https://toolscore.dev/schemas/contract-v2.schema.json", ContractV2)
	})
	// SuiteSchema returns Suite compiled; the error is non-nil only if the
	// embedded file is broken.
	SuiteSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
		return compile("https://toolscore.dev/schemas/suite.schema.json", Suite)
	})
)

// compile compiles one draft 2020-12 schema document registered at url.
func compile(url string, doc []byte) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource(url, bytes.NewReader(doc)); err != nil {
		return nil, err
	}
	return c.Compile(url)
}
