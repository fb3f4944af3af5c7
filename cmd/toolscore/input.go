package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/format"
	"github.com/toolscore/toolscore/internal/jsondoc"
)

// stdinName is how error messages name standard input ("-" on the command
// line).
const stdinName = "<stdin>"

// readInput reads the file at path, or standard input when path is "-",
// without the UTF-8 byte order mark it may start with (JSON has none, and
// the service skips one in request bodies too): every JSON document the
// CLI reads but a batch's trace files (contracts, gold files, a trace,
// suites, saved results) comes through here. A missing, unreadable or
// empty (white space only, after the mark) input is a runError naming
// the path.
func readInput(s stdio, path string) ([]byte, error) {
	var (
		data []byte
		err  error
	)
	name := path
	if path == "-" {
		name = stdinName
		data, err = io.ReadAll(s.in)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is named once, below
		}
		return nil, failf("%s: %v", name, err)
	}
	data = data[jsondoc.BOMLen(data):]
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, failf("%s: file is empty", name)
	}
	return data, nil
}

// displayName is how messages name the input at path.
func displayName(path string) string {
	if path == "-" {
		return stdinName
	}
	return path
}

// loadContract reads and parses a gold file or contract. Errors name the
// file and the place: "contract.json: line 3:14: ..." for bad JSON,
// "contract.json: /required/1/alternatives: ...; /optional/0: ..." for a
// document of the wrong shape.
func loadContract(s stdio, path string) (*engine.Contract, error) {
	c, _, err := loadContractData(s, path)
	return c, err
}

// loadContractData is loadContract that also returns the file's bytes.
func loadContractData(s stdio, path string) (*engine.Contract, []byte, error) {
	data, err := readInput(s, path)
	if err != nil {
		return nil, nil, err
	}
	c, err := engine.ParseContract(data)
	if err != nil {
		return nil, nil, failf("%s: %s", displayName(path), describeError(err))
	}
	return c, data, nil
}

// loadTrace reads and parses a trace in the named format ("auto" detects
// it). Errors name the file.
func loadTrace(s stdio, path, formatName string) (*format.Parsed, error) {
	data, err := readInput(s, path)
	if err != nil {
		return nil, err
	}
	p, err := format.Parse(data, formatName)
	if err != nil {
		return nil, failf("%s: %s", displayName(path), describeError(err))
	}
	return p, nil
}

// describeError renders an engine error on one line: a *SyntaxError as
// "line L:C: msg", a *ValidationError as "pointer: msg; pointer: msg"
// (the whole document is "/"), anything else as its text.
func describeError(err error) string {
	var ve *engine.ValidationError
	if errors.As(err, &ve) && len(ve.Errors) > 0 {
		return strings.Join(fieldErrorLines(ve), "; ")
	}
	var se *engine.SyntaxError
	if errors.As(err, &se) {
		return se.Error()
	}
	return err.Error()
}

// fieldErrorLines renders each problem of ve as "pointer: message".
func fieldErrorLines(ve *engine.ValidationError) []string {
	lines := make([]string, len(ve.Errors))
	for i, fe := range ve.Errors {
		p := fe.Pointer
		if p == "" {
			p = "/"
		}
		lines[i] = fmt.Sprintf("%s: %s", p, fe.Message)
	}
	return lines
}

// checkFormat reports an unknown --format value, listing the valid ones.
func checkFormat(name string) error {
	if format.Known(name) {
		return nil
	}
	return failf("--format: unknown format %q (valid: %s)", name, formatList())
}

// formatList is "auto, plain, openai, ..." for help and error texts.
func formatList() string {
	return strings.Join(append([]string{"auto"}, format.Names()...), ", ")
}
