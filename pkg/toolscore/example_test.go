package toolscore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"slices"
	"strings"

	"github.com/toolscore/toolscore/pkg/toolscore"
)

// Grade the shipped flight example (examples/contracts) against its
// contract. The lines between the markers are README.md's and
// docs/clients.md's Go example, paths relative to the repository root.
func Example() {
	// example: go
	contract, _ := os.ReadFile("../../examples/contracts/contract.json")
	trace, _ := os.ReadFile("../../examples/contracts/trace.json")
	res, err := toolscore.EvaluateTrace(context.Background(), contract, trace, toolscore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Grade, res.Verdict(), res.Issues[0].Fix)
	// end example
	// Output: A PASS In the call to `reserve_seat`: drop `seat`
}

func ExampleLoadContract() {
	data, err := os.ReadFile("../../examples/contracts/contract.json")
	if err != nil {
		log.Fatal(err)
	}
	c, err := toolscore.LoadContract(data)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Description())
	fmt.Println("gold file:", c.IsGold(), "combinations:", c.Combinations())

	// Errors say where: a line and column for bad JSON, JSON pointers for
	// a document of the wrong shape.
	_, err = toolscore.LoadContract([]byte(`{"contract_version": 2, "required": [{"tool": "search", "args": {"q": {"$regex": "("}}}]}`))
	var ve *toolscore.ValidationError
	if errors.As(err, &ve) {
		for _, fe := range ve.Errors {
			fmt.Println(fe.Pointer, "-", fe.Message)
		}
	}
	_, err = toolscore.LoadContract([]byte("[\n  {\"tool\": \"search\",}\n]"))
	var se *toolscore.SyntaxError
	if errors.As(err, &se) {
		fmt.Println(se.Line, se.Column, se.Msg)
	}
	// Output:
	// Book a flight to Lisbon. Checking the weather is fine; cancelling is not.
	// gold file: false combinations: 2
	// /required/0/args/q/$regex - regex does not compile: error parsing regexp: missing closing ): `(`
	// 2 21 invalid character '}' looking for beginning of object key string
}

// Grade calls the agent made, held in Go values, as the seed's
// evaluate_contract(contract, calls, final_answer=...) does.
func ExampleEvaluateContract() {
	data, err := os.ReadFile("../../examples/contracts/contract.json")
	if err != nil {
		log.Fatal(err)
	}
	contract, err := toolscore.LoadContract(data)
	if err != nil {
		log.Fatal(err)
	}
	calls := []toolscore.ToolCall{
		{Tool: "search_flights", Args: json.RawMessage(`{"destination": "LIS", "date": "2026-12-18"}`)},
		// Arguments as OpenAI sends them, JSON text in a string, read too.
		{Tool: "book_flight", Args: json.RawMessage(`"{\"flight_id\": \"FL-204\"}"`), Result: json.RawMessage(`{"status": "booked"}`)},
	}
	answer := "Booked FL-204 to Lisbon on 18 December."
	res, err := toolscore.EvaluateContract(context.Background(), contract, calls, toolscore.Options{FinalAnswer: &answer})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res)
	fmt.Printf("argument F1 %.2f, required-call recall %.2f\n", res.Metrics.Arguments.F1, res.Metrics.RequiredCallRecall)
	fmt.Println("chosen:", res.Metrics.Contract.Alternatives.Chosen[0].Calls[0].Tool)
	fmt.Println("checks:", res.Checks.Pass, "pass,", res.Checks.Fail, "fail,", res.Checks.Unknown, "unknown")
	fmt.Println("issues:", len(res.Issues))
	// Output:
	// Grade A PASS (100.0%)
	// argument F1 1.00, required-call recall 1.00
	// chosen: book_flight
	// checks: 7 pass, 0 fail, 0 unknown
	// issues: 0
}

// Grade a trace file against a gold file: every gold call is required, in
// order, with exactly its arguments.
func ExampleEvaluateTrace() {
	gold, err := os.ReadFile("../../examples/contracts/gold.json")
	if err != nil {
		log.Fatal(err)
	}
	trace, err := os.ReadFile("../../examples/contracts/trace.json")
	if err != nil {
		log.Fatal(err)
	}
	res, err := toolscore.EvaluateTrace(context.Background(), gold, trace, toolscore.Options{Format: "openai"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res)
	for _, is := range res.Issues {
		fmt.Printf("%s %s: %s\n", is.Severity, is.Kind, is.Fix)
	}
	// Output:
	// Grade F FAIL (38.3%)
	// high missing-call: Call `book_flight` with `flight_id` = "FL-204"
	// high wrong-tool: Remove the call to `get_weather`, or add it to the gold file
	// high wrong-tool: Remove the call to `reserve_seat`, or add it to the gold file
	// low arguments: In the call to `search_flights`: drop `date`
}

func ExampleParseTrace() {
	data, err := os.ReadFile("../../examples/contracts/trace.json")
	if err != nil {
		log.Fatal(err)
	}
	t, err := toolscore.ParseTrace(data, "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(t.Format, "-", t.Reason)
	for _, c := range t.Calls {
		fmt.Println(c.ID, c.Tool, string(c.Args))
	}
	fmt.Println(*t.FinalAnswer)
	// Output:
	// openai - a list of 9 OpenAI chat messages (role/content)
	// call_1 search_flights {"date":"2026-12-18","destination":"LIS"}
	// call_2 get_weather {"city":"Lisbon"}
	// call_3 reserve_seat {"flight_id":"FL-204","seat":"12A"}
	// Your seat 12A on flight FL-204 to Lisbon is reserved.
}

// iataCode matches a three-letter upper-case airport code.
type iataCode struct{}

func (iataCode) Match(actual any, _ toolscore.CompareOptions) bool {
	s, ok := actual.(string)
	return ok && len(s) == 3 && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == ""
}

// A contract may use matchers written in Go: here {"$iata": true}.
func ExampleWithMatcher() {
	contract, err := toolscore.LoadContract(
		[]byte(`[{"tool": "search_flights", "args": {"destination": {"$iata": true}}}]`),
		toolscore.WithMatcher("$iata", func(arg any) (toolscore.Matcher, error) {
			if arg != true {
				return nil, errors.New("takes true")
			}
			return iataCode{}, nil
		}))
	if err != nil {
		log.Fatal(err)
	}
	for _, dest := range []string{`"LIS"`, `"Lisbon"`} {
		calls := []toolscore.ToolCall{{Tool: "search_flights", Args: json.RawMessage(`{"destination": ` + dest + `}`)}}
		res, err := toolscore.EvaluateContract(context.Background(), contract, calls, toolscore.Options{})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(dest, res)
	}
	// Output:
	// "LIS" Grade A PASS (100.0%)
	// "Lisbon" Grade C FAIL (70.0%)
}

func ExampleCompare() {
	lenient := toolscore.CompareOptions{}
	strict := toolscore.CompareOptions{Strict: true}
	fmt.Println(toolscore.Compare(json.Number("1"), json.Number("1.0"), lenient), toolscore.Compare(json.Number("1"), json.Number("1.0"), strict))
	fmt.Println(toolscore.Compare("LIS", " LIS ", lenient), toolscore.Compare("LIS", " LIS ", strict))
	fmt.Println(toolscore.Compare(map[string]any{"seat": iataCode{}}, map[string]any{"seat": "OPO"}, lenient))
	// Output:
	// true false
	// true false
	// true
}

func ExampleFormats() {
	formats := toolscore.Formats()
	fmt.Println(slices.Contains(formats, "openai"), slices.Contains(formats, "anthropic"), slices.Contains(formats, "otel"))
	// Output: true true true
}

func ExampleResult_Check() {
	contract, err := toolscore.LoadContract([]byte(`{"contract_version": 2, "required": [{"tool": "login"}]}`))
	if err != nil {
		log.Fatal(err)
	}
	calls := []toolscore.ToolCall{{Tool: "login", Args: json.RawMessage(`{"user": "ana", "password": "correct-horse-battery"}`)}}
	res, err := toolscore.EvaluateContract(context.Background(), contract, calls, toolscore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	ch, _ := res.Check("credentials")
	fmt.Println(ch.Status, "-", ch.Detail)
	fmt.Println(string(res.TraceCalls[0].Args))
	fmt.Println(res.Verdict())
	// Output:
	// fail - 1 secret found: secret-named-argument in login #0 /password
	// {"password":"[REDACTED:secret-named-argument]","user":"ana"}
	// FAIL
}

func ExampleResult_Verdict() {
	contract, err := toolscore.LoadContract([]byte(`[{"tool": "ping"}]`))
	if err != nil {
		log.Fatal(err)
	}
	res, err := toolscore.EvaluateContract(context.Background(), contract, []toolscore.ToolCall{{Tool: "ping"}}, toolscore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Verdict(), res.Passed)
	// Output: PASS true
}

func ExampleResult_String() {
	contract, err := toolscore.LoadContract([]byte(`[{"tool": "ping"}, {"tool": "pong"}]`))
	if err != nil {
		log.Fatal(err)
	}
	// The agent called ping and not pong: the sequence is half right.
	res, err := toolscore.EvaluateContract(context.Background(), contract, []toolscore.ToolCall{{Tool: "ping"}}, toolscore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res)
	// Output: Grade A PASS (90.0%)
}
