package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// randChecks generates random contracts and traces that exercise every
// evidence check, issue kind and redaction rule: tools that do actions
// and tools named close to expected ones, secrets of the gitleaks rules
// and under secret-named keys (in arguments, expected arguments, results
// and final answers), failed calls and error results, final answers that
// claim actions and quote identifiers, forbidden rules with arguments,
// repeated and misordered calls.
type randChecks struct{ r *rand.Rand }

var (
	checkTools      = []string{"book_flight", "send_email", "cancel_booking", "get_booking", "pay_invoice", "createTicket", "refund_order", "notify"}
	checkExtraTools = []string{"bookFlight", "send_emails", "lookup", "x", "book-flight", "email_send", "cancelBooking", "delete_" + sampleAWSKey}
	checkKeys       = []string{"q", "n", "password", "api_key", "token", "filter", "ids", "note", "page_token"}
	checkPlain      = []string{`"a"`, `" a "`, `1`, `1.0`, `2`, `"FL-204"`, `"order 12345 for ana@example.com"`, `true`, `null`,
		`{"k":"v","n":2}`, `{"k":"v","n":3}`, `["x","y"]`, `[]`, `"hunter2hunter2"`, `"abcd"`, `"` + sampleGitHubPAT + `"`,
		`"` + sampleAWSKey + `"`, `"postgres://ana:s3cretpass@db.example.com/app"`, `"<b>&amp;\u2028\b\f\u0001 é"`,
		`"${API_KEY}"`, `"` + strings.Repeat("long value ", 8) + `"`, `"` + samplePassword + `"`, `12345`, `{"password":"hunter2hunter2"}`}
	checkMatchers = []string{`{"$regex":"^F"}`, `{"$regex":"<&>"}`, `{"$one_of":[1,"a",null,true]}`, `{"$one_of":[1,2]}`,
		`{"$contains":"a"}`, `{"$contains":1}`, `{"$type":"string"}`, `{"$type":["string","number"]}`, `{"$any":true}`,
		`{"$approx":1}`, `{"$approx":{"value":2,"rel":0.1}}`, `{"$regex":"` + sampleGitHubPAT + `"}`, `{"$one_of":["` + sampleAWSKey + `","b"]}`,
		`{"$contains":"` + samplePassword + `"}`}
	checkResults = []string{`null`, `{"status":"ok","ref":"FL-204"}`, `{"error":"sold out"}`, `{"error":null}`, `{"error":{}}`,
		`"Error: payment declined"`, `"{\"error\": \"card declined\"}"`, `"{\"error\": null, \"id\": 1}"`, `"{\"status\":\"ok\",\"ref\":\"INC0012345\"}"`,
		`"ok"`, `"{not json"`, `{"ids":["FL-204","FL-300"],"order":"order 12345"}`, `"booked FL-204 for ana@example.com"`,
		`{"token":"` + sampleGitHubPAT + `"}`, `"` + samplePassword + `"`, `["a",1]`}
	checkSentences = []string{"I booked flight FL-204.", "I've sent the email to ana@example.com.", "The booking was not cancelled.",
		"Payment was charged for order 12345.", "Refunded INC0012345 and notified the team.", "Booking confirmed: FL-300",
		"Will it be sent?", "Your ticket #4521 was created.", "See https://example.com/b/FL-204 for details.",
		"The password is " + samplePassword + ".", "Use " + sampleGitHubPAT + " as the token.", "Nothing was done.",
		"I deleted the old record REC-0042 and emailed ana@example.com.", "Order 9876 placed and paid.", ""}
)

func (g randChecks) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g randChecks) tool(extra bool) string {
	if extra && g.r.IntN(4) == 0 {
		return g.pick(checkExtraTools)
	}
	return checkTools[g.r.IntN(5+g.r.IntN(4))]
}

// args returns a JSON object text; matchers lets values be matchers.
func (g randChecks) args(matchers bool) string {
	keys := slices.Clone(checkKeys)
	g.r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	var parts []string
	for _, k := range keys[:g.r.IntN(4)] {
		v := g.pick(checkPlain)
		if matchers && g.r.IntN(3) == 0 {
			v = g.pick(checkMatchers)
		}
		parts = append(parts, fmt.Sprintf("%q:%s", k, v))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func (g randChecks) call() string {
	if g.r.IntN(5) == 0 {
		return fmt.Sprintf(`{"tool":%q}`, g.tool(false))
	}
	return fmt.Sprintf(`{"tool":%q,"args":%s}`, g.tool(false), g.args(true))
}

func (g randChecks) contract() string {
	var req []string
	for range g.r.IntN(9) {
		if g.r.IntN(5) == 0 {
			var opts []string
			for range 1 + g.r.IntN(3) {
				if g.r.IntN(2) == 0 {
					opts = append(opts, g.call())
				} else {
					opts = append(opts, "["+g.call()+","+g.call()+"]")
				}
			}
			req = append(req, fmt.Sprintf(`{"alternatives":[%s]}`, strings.Join(opts, ",")))
		} else {
			req = append(req, g.call())
		}
	}
	var opt, forb []string
	for range g.r.IntN(2) {
		opt = append(opt, g.call())
	}
	for range g.r.IntN(3) {
		reason := ""
		if g.r.IntN(2) == 0 {
			reason = `,"reason":"never"`
		}
		if g.r.IntN(2) == 0 {
			forb = append(forb, fmt.Sprintf(`{"tool":%q,"args":%s%s}`, g.tool(true), g.args(true), reason))
		} else {
			forb = append(forb, fmt.Sprintf(`{"tool":%q%s}`, g.tool(true), reason))
		}
	}
	return fmt.Sprintf(`{"contract_version":2,"required":[%s],"optional":[%s],"forbidden":[%s]}`,
		strings.Join(req, ","), strings.Join(opt, ","), strings.Join(forb, ","))
}

func (g randChecks) trace(tb testing.TB) Trace {
	var t Trace
	n := g.r.IntN(12)
	if g.r.IntN(8) == 0 {
		n = 15 + g.r.IntN(30)
	}
	decode := func(s string) any {
		v, err := DecodeJSON([]byte(s))
		if err != nil {
			tb.Fatalf("%s: %v", s, err)
		}
		return v
	}
	for i := range n {
		c := ToolCall{Tool: g.tool(true), Args: jsondoc.MustFromAny(decode(g.args(false)).(map[string]any))}
		if g.r.IntN(3) > 0 {
			c.ID = fmt.Sprintf("call_%d", i)
		}
		switch g.r.IntN(12) {
		case 0:
			c.Args, c.ArgsRaw, c.ArgsError = jsondoc.Value{}, `{"password": "`+samplePassword+`"`, "unexpected end of JSON input"
		case 1:
			c.Error = "true"
		case 2:
			c.Error = CallError("declined for " + sampleAWSKey)
		}
		if g.r.IntN(4) > 0 {
			if r := decode(g.pick(checkResults)); r != nil {
				c.Result = jsondoc.MustFromAny(r)
			}
		}
		t.Calls = append(t.Calls, c)
	}
	if g.r.IntN(6) > 0 {
		var ss []string
		for range g.r.IntN(4) {
			ss = append(ss, g.pick(checkSentences))
		}
		fa := strings.Join(ss, " ")
		t.FinalAnswer = &fa
	}
	return t
}

// randJSONText returns a random JSON value as text, with random white
// space, often an object with an "error" member written in various ways.
func randJSONText(r *rand.Rand, depth int) string {
	ws := func() string { return []string{"", "", " ", "\n\t", "\r "}[r.IntN(5)] }
	scalars := []string{`null`, `false`, `true`, `""`, `"x"`, `0`, `0.0`, `-0`, `1`, `1e3`, `-12.5E-3`, `"0"`, `" "`, `"a\"b\\c\/d\b\f\n\r\t\u00e9\ud800"`, "\"\xff\xfe\"", `"é"`, `{}`, `[]`, `{ }`, "[\n]"}
	if depth > 3 || r.IntN(3) == 0 {
		return scalars[r.IntN(len(scalars))]
	}
	if r.IntN(3) == 0 {
		var elems []string
		for range r.IntN(4) {
			elems = append(elems, ws()+randJSONText(r, depth+1)+ws())
		}
		return "[" + strings.Join(elems, ",") + "]"
	}
	keys := []string{`"error"`, `"error"`, `"\u0065rror"`, `"err\u006Fr"`, `"Error"`, `"error "`, `"errors"`, `"status"`, `"\ud800"`, `"err\"or"`, `"\u0000"`, `""`}
	var members []string
	for range r.IntN(5) {
		members = append(members, ws()+keys[r.IntN(len(keys))]+ws()+":"+ws()+randJSONText(r, depth+1)+ws())
	}
	return "{" + strings.Join(members, ",") + "}"
}

// mutateJSON damages s at random: a byte deleted, inserted or replaced, or
// the text cut.
func mutateJSON(r *rand.Rand, s string) string {
	const bytesPool = "{}[]\",:\\ \t\n0123456789-+.eEtrufalsn\x00\x1f\x7f\xff/ub"
	if s == "" {
		return s
	}
	i := r.IntN(len(s))
	c := string(bytesPool[r.IntN(len(bytesPool))])
	switch r.IntN(4) {
	case 0:
		return s[:i] + s[i+1:]
	case 1:
		return s[:i] + c + s[i:]
	case 2:
		return s[:i] + c + s[i+1:]
	}
	return s[:i]
}

// TestErrorResultMatchesReference compares errorResult with the decoding
// reference on random JSON texts, intact and damaged, with white space and
// "Error:" prefixes around them, and on their decoded forms.
func TestErrorResultMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	prefixes := []string{"", "", "", " ", "\u00a0\n", "Error: ", "error:", "  ERROR:x", "\v"}
	set := 0
	for n := range 200000 {
		s := randJSONText(r, 0)
		for range r.IntN(3) {
			if r.IntN(3) == 0 {
				s = mutateJSON(r, s)
			}
		}
		s = prefixes[r.IntN(len(prefixes))] + s + []string{"", "", " ", "\n", "x", "}"}[r.IntN(6)]
		got, want := errorResult(jsondoc.MustFromAny(s)), plainErrorResult(s)
		if got != want {
			t.Fatalf("case %d: errorResult(%q) = %v, reference %v", n, s, got, want)
		}
		if got {
			set++
		}
		if v, err := jsondoc.ParseString(s); err == nil {
			if got, want := errorResult(v), plainErrorResult(v.Any()); got != want {
				t.Fatalf("case %d: errorResult(%s decoded) = %v, reference %v", n, s, got, want)
			}
		}
	}
	if set < 10000 {
		t.Errorf("only %d of the random texts read as errors", set)
	}
	// The JSON layer's nesting limit: jsondoc.MaxDepth arrays and objects
	// open at once.
	for _, depth := range []int{jsondoc.MaxDepth - 1, jsondoc.MaxDepth, jsondoc.MaxDepth + 1, 10001} {
		s := `{"error":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`
		if got, want := errorResult(jsondoc.MustFromAny(s)), plainErrorResult(s); got != want {
			t.Errorf("depth %d: errorResult = %v, reference %v", depth, got, want)
		}
	}
}

// FuzzErrorResult compares errorResult with the decoding reference.
func FuzzErrorResult(f *testing.F) {
	for _, s := range []string{`{"error": "x"}`, `{"error": null}`, `{"\u0065rror": 1}`, `{"error": { }}`, `{"error":1,"error":0}`, `{"a":[1,{"b":"\ud800"}],"error":"0"}`, `Error: x`, `{"error": "x"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := errorResult(jsondoc.MustFromAny(s)), plainErrorResult(s); got != want {
			t.Errorf("errorResult(%q) = %v, reference %v", s, got, want)
		}
	})
}

// TestToolActionMaskGolden compares toolActionMask with
// testdata/golden/tool-actions.golden on random tool names: words that do
// actions or read, joined by separators, in camelCase, with digits,
// non-ASCII letters and invalid UTF-8, short and longer than the stack
// buffers. Each line is the mask in binary and the name quoted as Go
// does; -update rewrites the file.
func TestToolActionMaskGolden(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	words := []string{"get", "create", "Create", "book", "BOOK", "order", "payment", "pay", "send", "email", "x", "v", "V2", "add", "method",
		"cancel", "reservation", "new", "submit", "place", "É", "éclair", "ßend", "İnsert", "Σend", "\xff", "2", "a", "list", "setup", "Refund", "notify"}
	seps := []string{"", "_", "-", ".", " ", "/", "3", "__"}
	var b strings.Builder
	for range 8000 {
		var name strings.Builder
		k := r.IntN(5)
		if r.IntN(20) == 0 {
			k = 10 + r.IntN(30)
		}
		for i := range k {
			if i > 0 {
				name.WriteString(seps[r.IntN(len(seps))])
			}
			name.WriteString(words[r.IntN(len(words))])
		}
		fmt.Fprintf(&b, "%b %s\n", toolActionMask(name.String()), strconv.Quote(name.String()))
	}
	compareGolden(t, "testdata/golden/tool-actions.golden", b.String())
}

// TestRenderValueMatchesReference compares renderValue with the reference
// on scalars, objects and every built-in matcher, with texts that need
// escaping, invalid numbers and long values.
func TestRenderValueMatchesReference(t *testing.T) {
	texts := []string{"", "a", "<b>&</b>", "q\"b\\s/\b\f\n\r\t\x01\x1f\x7f", "é\u2028\u2029\xff\xfe", strings.Repeat("é", 40), strings.Repeat("ab", 40)}
	nums := []json.Number{"1", "-0.5e3", "", "01", "1.", "NaN", "12345678901234567890123"}
	var vals []any
	for _, s := range texts {
		vals = append(vals, s)
		re, err := NewRegex(regexpQuote(s))
		if err == nil {
			vals = append(vals, re)
		}
		vals = append(vals, &Contains{Value: s}, &Type{Names: []string{s}}, &Type{Names: []string{"string", s}})
	}
	for _, n := range nums {
		vals = append(vals, n, &Contains{Value: n}, &OneOf{Candidates: []any{n, "a", nil, true}})
	}
	vals = append(vals, nil, true, false, Any{}, &Any{}, &Type{}, &OneOf{}, &OneOf{Candidates: []any{}},
		&OneOf{Candidates: []any{map[string]any{"a": 1}}}, &OneOf{Candidates: []any{1.5, "x"}}, &Contains{Value: []any{"a"}},
		&Approx{Value: 1, Rel: 0.1}, &OneOf{Candidates: []any{&Approx{Value: 2}}}, map[string]any{"b": []any{"<x>", json.Number("2")}, "a": &Contains{Value: "&"}},
		[]any{"a", json.Number("bad")}, &redactedMatcher{m: Any{}, shown: map[string]any{"$any": true}})
	for _, s := range texts {
		vals = append(vals, &OneOf{Candidates: []any{s, json.Number("3"), false}})
	}
	for _, v := range vals {
		if got, want := renderValue(v), plainRenderValue(v); got != want {
			t.Errorf("renderValue(%#v) = %q, reference %q", v, got, want)
		}
	}
}

// regexpQuote escapes the regular expression metacharacters of s.
func regexpQuote(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// plainErrorResult reports whether a tool result reads as an error although the
// trace did not flag one (docs/checks.md "tool-errors"): a text that
// starts, after white space, with "error:" in any case ("Error: payment
// declined"), or a JSON object whose top-level "error" member is set (not
// null, false, "", 0, {} or []), given as an object or as a text holding
// one ({"error": "card declined"}). Time is linear in the result's size.
func plainErrorResult(v any) bool {
	switch x := v.(type) {
	case string:
		t := trimSpace(x)
		if hasPrefixFold(t, "error:") {
			return true
		}
		if !strings.HasPrefix(t, "{") {
			return false
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(t), &obj) != nil || !jsondoc.Valid(t) {
			// Beyond the JSON layer's limits (nesting, numeric
			// literals) a text is no JSON either.
			return false
		}
		raw, ok := obj["error"]
		if !ok {
			return false
		}
		switch string(bytes.TrimSpace(raw)) {
		case "null", "false", `""`, "0", "{}", "[]":
			return false
		}
		return !plainEmptyJSONContainer(raw)
	case map[string]any:
		e, ok := x["error"]
		if !ok {
			return false
		}
		switch y := e.(type) {
		case nil:
			return false
		case bool:
			return y
		case string:
			return y != ""
		case json.Number:
			return y != "0"
		case map[string]any:
			return len(y) > 0
		case []any:
			return len(y) > 0
		}
		return true
	}
	return false
}

// plainEmptyJSONContainer reports whether raw is {} or [] with white space
// inside.
func plainEmptyJSONContainer(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	if len(t) < 2 || !(t[0] == '{' && t[len(t)-1] == '}' || t[0] == '[' && t[len(t)-1] == ']') {
		return false
	}
	return len(bytes.TrimSpace(t[1:len(t)-1])) == 0
}

// plainRenderValue renders a JSON value or matcher compactly, cut to
// maxValueText bytes (on a rune boundary) with "…".
func plainRenderValue(v any) string {
	var s string
	switch x := v.(type) {
	case nil:
		s = "null"
	case bool:
		s = strconv.FormatBool(x)
	case json.Number:
		s = string(x)
	case string:
		s = plainQuoteJSON(x)
	case json.Marshaler: // matchers: their own JSON, without re-checking it
		b, err := x.MarshalJSON()
		if err != nil {
			return fmt.Sprintf("%v", v)
		}
		s = string(b)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprintf("%v", v)
		}
		s = string(b)
	}
	if len(s) <= maxValueText {
		return s
	}
	cut := maxValueText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// plainQuoteJSON returns s as a JSON string, as encoding/json writes it (with
// HTML characters left alone).
func plainQuoteJSON(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				b.WriteString(`\ufffd`)
			case r == '\u2028' || r == '\u2029':
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				b.WriteString(s[i : i+size])
			}
			i += size
			continue
		}
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
		i++
	}
	b.WriteByte('"')
	return b.String()
}
