package main

import (
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// textWriter writes a command's output for a person (not its JSON): text
// from traces and contracts may hold control characters, which a
// terminal or a CI log would act on (escape sequences that set the
// title, clear the screen or hide text; a carriage return that writes
// over a line). Every control character but the line feed and the tab is
// written as a Go escape (\r, \x1b, \a, \u0085); with color, the ANSI
// colour sequences toolscore writes itself (SGR with the codes of
// painter) are kept.
type textWriter struct {
	w     io.Writer
	color bool
}

// text is s.out for a person's output.
func (s stdio) text() io.Writer { return textWriter{w: s.out, color: s.color} }

func (t textWriter) Write(p []byte) (int, error) {
	clean := true
	for _, c := range p {
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c == 0xc2 {
			clean = false
			break
		}
	}
	if clean {
		return t.w.Write(p)
	}
	if _, err := io.WriteString(t.w, printable(string(p), t.color)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// printable is s with its control characters escaped (see textWriter).
func printable(s string, color bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\n' || r == '\t' || !unicode.IsControl(r):
			b.WriteString(s[i : i+n])
		case r == 0x1b && color && ownColor(s[i:]) > 0:
			n = ownColor(s[i:])
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

// ownColor is the length of the SGR sequence s starts with when it sets
// only the attributes toolscore's colours use (reset, bold, dim, red,
// green, yellow), else 0.
func ownColor(s string) int {
	if !strings.HasPrefix(s, "\x1b[") {
		return 0
	}
	end := strings.IndexByte(s, 'm')
	if end < 0 {
		return 0
	}
	for _, code := range strings.Split(s[2:end], ";") {
		switch code {
		case "0", "1", "2", "31", "32", "33":
		default:
			return 0
		}
	}
	return end + 1
}

// flat is s on one line: line breaks shown as ⏎ (as inspect shows texts).
func flat(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r\n", "⏎", "\n", "⏎", "\r", "⏎").Replace(s)
}
