package engine

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/toolscore/toolscore/schemas"
)

// schemaErrors validates a decoded document against the contract schema
// and returns the leaf errors with their instance JSON pointers, sorted by
// pointer.
func schemaErrors(doc any) ([]FieldError, error) {
	s, err := schemas.ContractV2Schema()
	if err != nil {
		return nil, fmt.Errorf("compile contract schema: %w", err)
	}
	err = s.Validate(doc)
	if err == nil {
		return nil, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, err
	}
	var out []FieldError
	seen := map[FieldError]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			fe := FieldError{Pointer: e.InstanceLocation, Message: schemaMessage(e)}
			if !seen[fe] {
				seen[fe] = true
				out = append(out, fe)
			}
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	return out, nil
}

// schemaMessage rewrites the library's messages where a plainer one helps.
func schemaMessage(e *jsonschema.ValidationError) string {
	m := e.Message
	switch {
	case strings.HasPrefix(m, "additionalProperties "):
		return "unknown key " + sortedNames(strings.TrimSuffix(strings.TrimPrefix(m, "additionalProperties "), " not allowed"))
	case strings.HasSuffix(e.KeywordLocation, "/contract_version/const"):
		return "contract_version must be 2"
	case strings.HasSuffix(e.KeywordLocation, "/alternatives/minItems"):
		return "an alternatives group needs at least one option"
	case strings.HasSuffix(e.KeywordLocation, "/then/minItems"):
		return "an option needs at least one call"
	}
	return m
}

// sortedNames sorts a list of the library's quoted names ("'b', 'a'",
// each between single quotes, a quote inside escaped by a backslash),
// which it writes in the order of a Go map's iteration, so that the same
// document always gets the same message. A list it cannot split is
// returned as it is.
func sortedNames(list string) string {
	var names []string
	for rest := list; rest != ""; {
		if rest[0] != '\'' {
			return list
		}
		end := 1
		for end < len(rest) && rest[end] != '\'' {
			if rest[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(rest) {
			return list
		}
		names = append(names, rest[:end+1])
		rest = rest[end+1:]
		if rest != "" {
			if !strings.HasPrefix(rest, ", ") {
				return list
			}
			rest = rest[2:]
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
