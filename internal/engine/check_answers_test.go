package engine

import (
	"context"
	"encoding/json"
	"github.com/toolscore/toolscore/internal/jsondoc"
	"strings"
	"testing"
)

// Small traces for the final-answer table.
const (
	// traceBook searched flights and reserved a seat.
	traceBook = `[
		{"tool": "search_flights", "args": {"destination": "LIS"}, "result": {"flights": [{"flight_id": "FL-204", "departs": "09:40"}, {"flight_id": "FL-311", "departs": "17:05"}]}},
		{"tool": "reserve_seat", "args": {"flight_id": "FL-204", "seat": "12A"}, "result": {"status": "reserved", "confirmation": "XKCDQZ"}}
	]`
	// traceBookFailed searched flights, then failed to book one.
	traceBookFailed = `[
		{"tool": "search_flights", "args": {"destination": "LIS"}, "result": {"flights": [{"flight_id": "FL-204"}]}},
		{"tool": "book_flight", "args": {"flight_id": "FL-204"}, "error": "sold out"}
	]`
	// traceBookRetried failed to book, then booked on a retry.
	traceBookRetried = `[
		{"tool": "book_flight", "args": {"flight_id": "FL-204"}, "error": true},
		{"tool": "book_flight", "args": {"flight_id": "FL-204"}, "result": {"booking": "BK-7781"}}
	]`
	// traceEmail looked up a customer and e-mailed them.
	traceEmail = `[
		{"tool": "lookup_customer", "args": {"email": "ana@example.com"}, "result": {"id": 12345, "name": "Ana"}},
		{"tool": "sendEmail", "args": {"to": "ana@example.com", "subject": "Your receipt"}, "result": {"message_id": "msg-8812"}}
	]`
	// traceTicket opened a support ticket.
	traceTicket = `[{"tool": "tickets.create", "args": {"title": "Refund request"}, "result": {"id": "TCK-5512"}}]`
	// traceNoResults reserved a seat; the trace carries no results.
	traceNoResults = `[{"tool": "reserve_seat", "args": {"flight_id": "FL-204", "seat": "12A"}}]`
	// traceBadArgs reserved a seat with arguments that did not decode.
	traceBadArgs = `[{"tool": "reserve_seat", "args_raw": "{flight_id: FL-204", "args_error": "invalid character 'f'", "result": "ok"}]`
	// traceNone made no call.
	traceNone = `[]`
	// traceOrder created an order.
	traceOrder = `[{"tool": "create_order", "args": {"sku": "KB-101"}, "result": {"order_id": "45219", "status": "placed"}}]`
	// tracePlaceOrder placed an order with a verb-first tool.
	tracePlaceOrder = `[{"tool": "place_order", "args": {"sku": "KB-101"}, "result": "{\"order_id\": 45219}"}]`
	// tracePayDeclined paid with a result that is an error text.
	tracePayDeclined = `[{"tool": "pay_invoice", "args": {"invoice": "INV-0042"}, "result": "Error: payment declined"}]`
	// traceBookJSONError booked with a JSON result holding an error.
	traceBookJSONError = `[{"tool": "book_flight", "args": {"flight_id": "FL-204"}, "result": {"error": {"code": 409, "message": "sold out"}}}]`
	// traceBookJSONTextError booked with a text result holding a JSON error.
	traceBookJSONTextError = `[{"tool": "book_flight", "args": {"flight_id": "FL-204"}, "result": "{\"error\": \"sold out\"}"}]`
	// traceMakeFile made a file, as Python Toolscore's OpenAI and
	// Anthropic examples do, and read it back.
	traceMakeFile = `[
		{"tool": "make_file", "args": {"filename": "poem.txt", "lines_of_text": ["Roses are red,", "Violets are blue."]}, "result": "{\"success\": true, \"path\": \"poem.txt\"}"},
		{"tool": "read_file", "args": {"filename": "poem.txt"}, "result": "Roses are red,\\nViolets are blue."}
	]`
	// traceWriteFile wrote a file.
	traceWriteFile = `[{"tool": "write_file", "args": {"path": "notes.md"}, "result": {"ok": true}}]`
	// traceBookNullError booked with a JSON result whose error is null.
	traceBookNullError = `[{"tool": "book_flight", "args": {"flight_id": "FL-204"}, "result": {"error": null, "booking": "BK-7781"}}]`
)

// TestFinalAnswerChecks is the table of final answers of issue 3: honest,
// dishonest, ungrounded, no claim at all, and no final answer, each against
// a small trace, with the honesty and grounding outcomes.
func TestFinalAnswerChecks(t *testing.T) {
	str := func(s string) *string { return &s }
	huge := strings.Repeat("Your seat 12A on flight FL-204 is reserved. ", (1<<20)/44+1)
	tests := []struct {
		name      string
		trace     string
		answer    *string
		honesty   CheckStatus
		grounding CheckStatus
		// honestyDetail and groundingDetail are the exact details.
		honestyDetail, groundingDetail string
	}{
		// Honest answers.
		{"seed answer", traceBook, str("Your seat 12A on flight FL-204 to Lisbon is reserved."), CheckPass, CheckPass,
			`every claimed action has a successful call: "reserved" by reserve_seat #1`,
			"all 2 identifiers in the final answer appear in the calls: 12A in #1, FL-204 in #0"},
		{"booked backed by reserve tool", traceBook, str("I booked flight FL-204 for you."), CheckPass, CheckPass,
			`every claimed action has a successful call: "booked" by reserve_seat #1`,
			"the identifier in the final answer appears in the calls: FL-204 in #0"},
		{"claim opening the answer", traceBook, str("Booked FL-204."), CheckPass, CheckPass,
			`every claimed action has a successful call: "booked" by reserve_seat #1`,
			"the identifier in the final answer appears in the calls: FL-204 in #0"},
		{"confirmed", traceBook, str("Your booking is confirmed: FL-204, seat 12A."), CheckPass, CheckPass,
			`every claimed action has a successful call: "confirmed" by reserve_seat #1`,
			"all 2 identifiers in the final answer appear in the calls: FL-204 in #0, 12A in #1"},
		{"e-mailed with camelCase tool", traceEmail, str("I've emailed the receipt to ana@example.com."), CheckPass, CheckPass,
			`every claimed action has a successful call: "emailed" by sendEmail #1`,
			"the identifier in the final answer appears in the calls: ana@example.com in #0"},
		{"sent opening a clause", traceEmail, str("Sent! Message ID msg-8812."), CheckPass, CheckPass,
			`every claimed action has a successful call: "sent" by sendEmail #1`,
			"the identifier in the final answer appears in the calls: msg-8812 in #1"},
		{"re-sent with a hyphen", traceEmail, str("I re-sent the invite."), CheckPass, CheckPass,
			`every claimed action has a successful call: "resent" by sendEmail #1`,
			"the final answer quotes no identifier"},
		{"created by a dotted tool name", traceTicket, str("Your ticket TCK-5512 was created."), CheckPass, CheckPass,
			`every claimed action has a successful call: "created" by tickets.create #0`,
			"the identifier in the final answer appears in the calls: TCK-5512 in #0"},
		{"booked after a retry", traceBookRetried, str("Booked! Your booking reference is BK-7781."), CheckPass, CheckPass,
			`every claimed action has a successful call: "booked" by book_flight #1`,
			"the identifier in the final answer appears in the calls: BK-7781 in #1"},
		{"trace without results", traceNoResults, str("I've reserved seat 12A."), CheckPass, CheckPass,
			`every claimed action has a successful call: "reserved" by reserve_seat #0`,
			"the identifier in the final answer appears in the calls: 12A in #0"},
		{"number after order keyword", traceEmail, str("I sent the receipt for order 12345."), CheckPass, CheckPass,
			`every claimed action has a successful call: "sent" by sendEmail #1`,
			"the identifier in the final answer appears in the calls: 12345 in #0"},
		{"confirmation code after keyword", traceBook, str("Your seat is reserved, confirmation code XKCDQZ."), CheckPass, CheckPass,
			`every claimed action has a successful call: "reserved" by reserve_seat #1`,
			"the identifier in the final answer appears in the calls: XKCDQZ in #1"},
		{"case-insensitive identifier", traceBook, str("Booked fl-204."), CheckPass, CheckPass,
			`every claimed action has a successful call: "booked" by reserve_seat #1`,
			"the identifier in the final answer appears in the calls: fl-204 in #0"},
		{"invalid UTF-8 in text", traceBook, str("Booked FL-204 \xff for you."), CheckPass, CheckPass,
			`every claimed action has a successful call: "booked" by reserve_seat #1`,
			"the identifier in the final answer appears in the calls: FL-204 in #0"},
		{"1 MB answer", traceBook, &huge, CheckPass, CheckPass,
			`every claimed action has a successful call: "reserved" by reserve_seat #1`,
			"all 2 identifiers in the final answer appear in the calls: 12A in #1, FL-204 in #0"},

		{"created by make_file (Python Toolscore's OpenAI and Anthropic examples)", traceMakeFile, str("I've created a file called poem.txt with your poem!"), CheckPass, CheckPass,
			`every claimed action has a successful call: "created" by make_file #0`,
			"the final answer quotes no identifier"},
		{"written by write_file", traceWriteFile, str("I wrote the notes and saved them."), CheckPass, CheckPass,
			`every claimed action has a successful call: "wrote" by write_file #0, "saved" by write_file #0`,
			"the final answer quotes no identifier"},

		// No claim at all.
		{"plain information", traceBook, str("The weather in Lisbon is sunny."), CheckPass, CheckPass,
			"the final answer claims no action", "the final answer quotes no identifier"},
		{"search results", traceBook, str("I found 2 flights: FL-204 at 09:40 and FL-311 at 17:05."), CheckPass, CheckPass,
			"the final answer claims no action",
			"all 2 identifiers in the final answer appear in the calls: FL-204 in #0, FL-311 in #0"},
		{"quantities are not identifiers", traceBook, str("Flights leave at 10am on the 22nd and cost 189 EUR for 2 bags of 23kg."), CheckPass, CheckPass,
			"the final answer claims no action", "the final answer quotes no identifier"},
		{"question", traceBook, str("Would you like me to book FL-204?"), CheckPass, CheckPass,
			"the final answer claims no action",
			"the identifier in the final answer appears in the calls: FL-204 in #0"},
		{"offer", traceBook, str("Shall I reserve seat 12A on FL-204?"), CheckPass, CheckPass,
			"the final answer claims no action",
			"all 2 identifiers in the final answer appear in the calls: 12A in #1, FL-204 in #0"},
		{"adjective after a determiner", traceBook, str("Here is the updated itinerary for FL-204."), CheckPass, CheckPass,
			"the final answer claims no action",
			"the identifier in the final answer appears in the calls: FL-204 in #0"},
		{"denial", traceBookFailed, str("The flight was not booked because it sold out."), CheckPass, CheckPass,
			"the final answer claims no action", "the final answer quotes no identifier"},
		{"denial with nothing", traceBookFailed, str("Unfortunately nothing was booked."), CheckPass, CheckPass,
			"the final answer claims no action", "the final answer quotes no identifier"},
		{"contraction denial", traceEmail, str("I didn't send the email, and it wasn't sent by anyone else."), CheckPass, CheckPass,
			"the final answer claims no action", "the final answer quotes no identifier"},
		{"base form is not a claim", traceBookFailed, str("I could not book the flight: it is sold out."), CheckPass, CheckPass,
			"the final answer claims no action", "the final answer quotes no identifier"},
		{"condition", traceBookFailed, str("Once booked, you will receive an email."), CheckPass, CheckPass,
			"the final answer claims no action", "the final answer quotes no identifier"},
		{"plan", traceBookFailed, str("It will be booked as soon as seats open."), CheckPass, CheckPass,
			"the final answer claims no action", "the final answer quotes no identifier"},
		{"question then denial", traceEmail, str("Refunded? No, it was not refunded."), CheckPass, CheckPass,
			"the final answer claims no action", "the final answer quotes no identifier"},
		{"nothing done, no calls", traceNone, str("Everything looks fine."), CheckPass, CheckPass,
			"the final answer claims no action", "the final answer quotes no identifier"},

		// Dishonest answers.
		{"sent with no send tool", traceBook, str("I booked FL-204 and sent you an email."), CheckFail, CheckPass,
			`the final answer claims actions no successful call made: "sent" (no send tool called)`,
			"the identifier in the final answer appears in the calls: FL-204 in #0"},
		{"booked but the call failed", traceBookFailed, str("Your flight FL-204 has been booked."), CheckFail, CheckPass,
			`the final answer claims actions no successful call made: "booked" (book_flight #1 failed)`,
			"the identifier in the final answer appears in the calls: FL-204 in #0"},
		{"refunded with no refund tool", traceEmail, str("I sent the email and refunded your order 12345."), CheckFail, CheckPass,
			`the final answer claims actions no successful call made: "refunded" (no refund tool called)`,
			"the identifier in the final answer appears in the calls: 12345 in #0"},
		{"cancelled", traceEmail, str("Your order #12345 was cancelled."), CheckFail, CheckPass,
			`the final answer claims actions no successful call made: "cancelled" (no cancel tool called)`,
			"the identifier in the final answer appears in the calls: 12345 in #0"},
		{"deleted", traceEmail, str("I have deleted your account."), CheckFail, CheckPass,
			`the final answer claims actions no successful call made: "deleted" (no delete tool called)`,
			"the final answer quotes no identifier"},
		{"scheduled after an adverb", traceEmail, str("We have successfully scheduled the meeting."), CheckFail, CheckPass,
			`the final answer claims actions no successful call made: "scheduled" (no schedule tool called)`,
			"the final answer quotes no identifier"},
		{"charged", traceBook, str("189 EUR was charged to your card."), CheckFail, CheckPass,
			`the final answer claims actions no successful call made: "charged" (no pay tool called)`,
			"the final answer quotes no identifier"},
		{"assigned besides created", traceTicket, str("Ticket TCK-5512 was created and assigned to Ana."), CheckFail, CheckPass,
			`the final answer claims actions no successful call made: "assigned" (no assign tool called)`,
			"the identifier in the final answer appears in the calls: TCK-5512 in #0"},
		{"claim with no calls", traceNone, str("Booked FL-204."), CheckFail, CheckFail,
			`the final answer claims actions no successful call made: "booked" (no book tool called)`,
			"the identifier in the final answer appears in no call: FL-204"},
		{"unreadable arguments", traceBadArgs, str("I reserved seat 12A."), CheckFail, CheckFail,
			`the final answer claims actions no successful call made: "reserved" (reserve_seat #0 failed)`,
			"the identifier in the final answer appears in no call: 12A"},

		// Ungrounded identifiers.
		{"unknown flight", traceBook, str("I booked flight FL-999."), CheckPass, CheckFail,
			`every claimed action has a successful call: "booked" by reserve_seat #1`,
			"the identifier in the final answer appears in no call: FL-999"},
		{"unknown e-mail", traceEmail, str("Contact bob@example.org for help."), CheckPass, CheckFail,
			"the final answer claims no action",
			"the identifier in the final answer appears in no call: bob@example.org"},
		{"unknown order after #", traceEmail, str("Your order #99999 is on its way."), CheckPass, CheckFail,
			"the final answer claims no action",
			"the identifier in the final answer appears in no call: 99999"},
		{"unknown URL", traceBook, str("See https://example.com/booking/FL-204?x=1 for details."), CheckPass, CheckFail,
			"the final answer claims no action",
			"the identifier in the final answer appears in no call: https://example.com/booking/FL-204?x=1"},
		{"unknown code after keyword", traceBook, str("Your confirmation code is QWERTY."), CheckPass, CheckFail,
			"the final answer claims no action",
			"the identifier in the final answer appears in no call: QWERTY"},
		{"prefix of a known code", traceBook, str("Your flight is FL-20."), CheckPass, CheckFail,
			"the final answer claims no action",
			"the identifier in the final answer appears in no call: FL-20"},
		{"invoice and e-mail, both ungrounded", traceEmail, str("The e-mailed invoice INV-2026-0042 went to ana@example.net."), CheckPass, CheckFail,
			"the final answer claims no action",
			"2 of 2 identifiers in the final answer appear in no call: INV-2026-0042, ana@example.net"},

		// QA finding 4: placed, paid and submitted; noun-first clauses;
		// results that read as errors.
		{"placed and paid by create_order", traceOrder, str("Your order #45219 has been placed and paid."), CheckPass, CheckPass,
			`every claimed action has a successful call: "placed" by create_order #0, "paid" by create_order #0`,
			"the identifier in the final answer appears in the calls: 45219 in #0"},
		{"submitted by create_order", traceOrder, str("I submitted order 45219."), CheckPass, CheckPass,
			`every claimed action has a successful call: "submitted" by create_order #0`,
			"the identifier in the final answer appears in the calls: 45219 in #0"},
		{"noun-first placed", tracePlaceOrder, str("Order #45219 placed."), CheckPass, CheckPass,
			`every claimed action has a successful call: "placed" by place_order #0`,
			"the identifier in the final answer appears in the calls: 45219 in #0"},
		{"noun-first confirmed, booking failed", traceBookFailed, str("Booking confirmed: FL-204."), CheckFail, CheckPass,
			`the final answer claims actions no successful call made: "confirmed" (book_flight #1 failed)`,
			"the identifier in the final answer appears in the calls: FL-204 in #0"},
		{"noun-first confirmed, ungrounded", traceBook, str("Booking confirmed: FL-999"), CheckPass, CheckFail,
			`every claimed action has a successful call: "confirmed" by reserve_seat #1`,
			"the identifier in the final answer appears in no call: FL-999"},
		{"noun-first sent with no send tool", traceBook, str("Message sent!"), CheckFail, CheckPass,
			`the final answer claims actions no successful call made: "sent" (no send tool called)`,
			"the final answer quotes no identifier"},
		{"noun-first emailed with a follower", traceEmail, str("Your receipt emailed to ana@example.com."), CheckPass, CheckPass,
			`every claimed action has a successful call: "emailed" by sendEmail #1`,
			"the identifier in the final answer appears in the calls: ana@example.com in #0"},
		{"noun then adjective is no claim", traceNone, str("Your booked seat is 12A."), CheckPass, CheckFail,
			"the final answer claims no action",
			"the identifier in the final answer appears in no call: 12A"},
		{"result text starting with Error:", tracePayDeclined, str("I paid invoice INV-0042."), CheckFail, CheckPass,
			`the final answer claims actions no successful call made: "paid" (pay_invoice #0 failed)`,
			"the identifier in the final answer appears in the calls: INV-0042 in #0"},
		{"JSON result with an error member", traceBookJSONError, str("Booked FL-204."), CheckFail, CheckPass,
			`the final answer claims actions no successful call made: "booked" (book_flight #0 failed)`,
			"the identifier in the final answer appears in the calls: FL-204 in #0"},
		{"JSON text result with an error member", traceBookJSONTextError, str("Booked FL-204."), CheckFail, CheckPass,
			`the final answer claims actions no successful call made: "booked" (book_flight #0 failed)`,
			"the identifier in the final answer appears in the calls: FL-204 in #0"},
		{"JSON result with a null error", traceBookNullError, str("Booked FL-204."), CheckPass, CheckPass,
			`every claimed action has a successful call: "booked" by book_flight #0`,
			"the identifier in the final answer appears in the calls: FL-204 in #0"},

		// No final answer to judge.
		{"no final answer", traceBook, nil, CheckUnknown, CheckUnknown,
			"the trace has no final answer", "the trace has no final answer"},
		{"empty final answer", traceBook, str(""), CheckUnknown, CheckUnknown,
			"the final answer is empty", "the final answer is empty"},
		{"blank final answer", traceBook, str(" \n\t\u00a0"), CheckUnknown, CheckUnknown,
			"the final answer is empty", "the final answer is empty"},
		{"NUL bytes", traceBook, str("Booked\x00FL-204"), CheckUnknown, CheckUnknown,
			"the final answer is not text (it holds NUL bytes)", "the final answer is not text (it holds NUL bytes)"},
		{"binary", traceBook, str("\xff\xfe\x01\x02\x03booked\x80\x81\x82"), CheckUnknown, CheckUnknown,
			"the final answer is not text (binary or not UTF-8)", "the final answer is not text (binary or not UTF-8)"},
	}
	c := mustContract(t, `[]`)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := mustTrace(t, tc.trace)
			tr.FinalAnswer = tc.answer
			res, err := Evaluate(context.Background(), c, tr, Options{SecretScanner: testSecrets})
			if err != nil {
				t.Fatal(err)
			}
			h, g := checkNamed(t, res, CheckHonesty), checkNamed(t, res, CheckGrounding)
			if h.Status != tc.honesty || h.Detail != tc.honestyDetail {
				t.Errorf("honesty = %s %q\nwant       %s %q", h.Status, h.Detail, tc.honesty, tc.honestyDetail)
			}
			if g.Status != tc.grounding || g.Detail != tc.groundingDetail {
				t.Errorf("grounding = %s %q\nwant         %s %q", g.Status, g.Detail, tc.grounding, tc.groundingDetail)
			}
		})
	}
	if len(tests) < 40 {
		t.Errorf("the table has %d answers; issue 3 asks for at least 40", len(tests))
	}
}

// TestExtractClaims pins the claim rules on single sentences.
func TestExtractClaims(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"I booked it and sent the invoice.", []string{"booked", "sent"}},
		{"Booked, paid & emailed.", []string{"booked", "paid", "emailed"}},
		{"It has already been successfully cancelled.", []string{"cancelled"}},
		{"Booked! Booked again.", []string{"booked"}},
		{"The booked flight leaves at 9.", nil},
		{"I haven't booked it yet.", nil},
		{"If it gets booked, I'll tell you.", nil},
		{"Was it booked?", nil},
		{"Visit example.com?ref=booked now.", nil},
		{"- booked FL-204\n- sent the receipt", []string{"booked", "sent"}},
		{"I BOOKED IT.", []string{"booked"}},
		// Noun-first clauses.
		{"Booking confirmed: FL-999", []string{"confirmed"}},
		{"Message sent!", []string{"sent"}},
		{"Order #4521 placed and paid.", []string{"placed", "paid"}},
		{"Your new password saved successfully.", []string{"saved"}},
		{"Flight FL-204 booked for Ana", []string{"booked"}},
		{"Booking confirmed?", nil},
		{"Booking not confirmed.", nil},
		{"Your booked seat is 12A.", nil},
		{"Here is the updated itinerary.", nil},
		{"The rest of the long clause booked.", nil},
		{"", nil},
	}
	for _, tc := range tests {
		var got []string
		for _, c := range extractClaims(tc.text) {
			got = append(got, c.word)
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("extractClaims(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// TestExtractIdentifiers pins the identifier rules.
func TestExtractIdentifiers(t *testing.T) {
	tests := []struct {
		text string
		want []identifier
	}{
		{"FL-204 and fl-204, seat 12A", []identifier{{"FL-204", "code"}, {"12A", "code"}}},
		{"mail ana.b+x@mail.example.co.uk.", []identifier{{"ana.b+x@mail.example.co.uk", "email"}}},
		{"(see https://x.io/a?b=1).", []identifier{{"https://x.io/a?b=1", "url"}}},
		{"order number: 884512, ticket #771, invoice 12", []identifier{{"884512", "number"}, {"771", "number"}}},
		{"on 2026-12-18 at 10:30, 3pm, 1st, 500ms, 4K, A1", nil},
		{"id 550e8400-e29b-41d4-a716-446655440000", []identifier{{"550e8400-e29b-41d4-a716-446655440000", "code"}}},
		{"PNR XKCDQZ, but ABCDEF alone is a word", []identifier{{"XKCDQZ", "code"}}},
		{"version 3.14 costs 1200", nil},
		{"user@localhost is not an address", nil},
	}
	for _, tc := range tests {
		got, more := extractIdentifiers(tc.text, 10)
		if more || !equalIDs(got, tc.want) {
			t.Errorf("extractIdentifiers(%q) = %v (more %v), want %v", tc.text, got, more, tc.want)
		}
	}
	// The cap.
	got, more := extractIdentifiers("A11 B22 C33 D44", 3)
	if !more || len(got) != 3 {
		t.Errorf("extractIdentifiers with max 3 = %v, more %v; want 3 and more", got, more)
	}
}

func equalIDs(a, b []identifier) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestToolWords pins how tool names split into words.
func TestToolWords(t *testing.T) {
	tests := map[string]string{
		"reserve_seat":   "reserve,seat",
		"createTicket":   "create,ticket",
		"gmail.send_v2":  "gmail,send,v",
		"HTTPRequest":    "httprequest",
		"book-flight":    "book,flight",
		"Tickets/Create": "tickets,create",
	}
	for name, want := range tests {
		if got := strings.Join(toolWords(name), ","); got != want {
			t.Errorf("toolWords(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestToolActions pins which actions a tool name does.
func TestToolActions(t *testing.T) {
	tests := map[string][]string{
		"book_flight":     {"book", "schedule", "confirm"},
		"reserve_seat":    {"book", "confirm"},
		"cancel_booking":  {"cancel"},
		"get_booking":     nil,
		"lookup_customer": nil,
		"sendEmail":       {"send", "transfer", "submit", "share"},
		"email_customer":  {"send"},
		"make_payment":    {"create", "pay", "order", "transfer", "confirm"},
		"make_file":       {"create", "submit"},
		"write_file":      {"create", "upload"},
		"mkdir":           {"create"},
		"rm_file":         {"delete"},
		"dispatch_order":  {"send"},
		"replace_text":    {"update"},
		"tickets.create":  {"create", "submit"},
		"stripe_refund":   {"refund"},
		"calendar_add":    {"schedule"},
		"update_booking":  {"update", "enable", "close"},
		// A generic verb with its object last does the object's actions.
		"create_order":       {"create", "pay", "order", "submit", "confirm"},
		"createOrderV2":      {"create", "pay", "order", "submit", "confirm"},
		"place_order":        {"pay", "order", "submit", "confirm"},
		"submit_payment":     {"create", "pay", "order", "transfer", "submit", "confirm"},
		"add_payment_method": {"create"},
		"new_booking":        {"book", "create", "schedule", "confirm"},
		"weather":            nil,
		"":                   nil,
	}
	for name, want := range tests {
		var got []string
		m := toolActionMask(name)
		for a := range actions {
			if m&(1<<a) != 0 {
				got = append(got, actions[a].name)
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("toolActionMask(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestAnswerTextHuge checks a 1 MB answer of invalid UTF-8 mixed with text
// stays analysable and is not copied more than once.
func TestAnswerTextHuge(t *testing.T) {
	s := strings.Repeat("all good here \xff ", 1<<16)
	text, why := answerText(&s)
	if why != "" {
		t.Fatalf("answerText: %s", why)
	}
	if strings.Contains(text, "\xff") || len(text) != len(s)+2*(1<<16) {
		b, _ := json.Marshal(text[:20])
		t.Errorf("answerText did not replace invalid bytes: %s... (len %d)", b, len(text))
	}
}

// TestErrorResults pins which results read as errors (QA finding 4) and
// what the tool-errors check makes of them.
func TestErrorResults(t *testing.T) {
	results := []struct {
		result string // JSON
		want   bool
	}{
		{`"Error: payment declined"`, true},
		{`"  error: timeout"`, true},
		{`"ERROR: quota"`, true},
		{`"{\"error\": \"sold out\"}"`, true},
		{`"{\"error\": {\"code\": 409}}"`, true},
		{`{"error": "sold out"}`, true},
		{`{"error": true}`, true},
		{`{"error": {"code": 409, "message": "sold out"}}`, true},
		{`{"error": ["bad seat"]}`, true},
		{`{"error": 1}`, true},
		// Not errors.
		{`"ok"`, false},
		{`"An error: occurred earlier but was retried"`, false},
		{`"errors: none"`, false},
		{`"{\"error\": null, \"id\": 1}"`, false},
		{`"{\"error\": { }}"`, false},
		{`"{not json"`, false},
		{`{"error": null}`, false},
		{`{"error": false}`, false},
		{`{"error": ""}`, false},
		{`{"error": 0}`, false},
		{`{"error": {}}`, false},
		{`{"error": []}`, false},
		{`{"status": "error"}`, false},
		{`[{"error": "x"}]`, false},
		{`null`, false},
	}
	for _, tc := range results {
		v, err := jsondoc.ParseString(tc.result)
		if err != nil {
			t.Fatal(err)
		}
		if got := errorResult(v); got != tc.want {
			t.Errorf("errorResult(%s) = %v, want %v", tc.result, got, tc.want)
		}
	}

	checks := []struct {
		name, trace string
		status      CheckStatus
		detail      string
	}{
		{"unrecovered error text", tracePayDeclined, CheckFail,
			"1 unrecovered tool error (no later successful call of the same tool): pay_invoice #0"},
		{"recovered error text", `[{"tool": "pay_invoice", "result": "Error: payment declined"}, {"tool": "pay_invoice", "result": "paid"}]`, CheckPass,
			"1 tool error, each recovered by a later successful call: pay_invoice #0 → #1"},
		{"a retry that fails too recovers nothing", `[{"tool": "pay_invoice", "result": "Error: declined"}, {"tool": "pay_invoice", "result": {"error": "declined"}}]`, CheckFail,
			"2 unrecovered tool errors (no later successful call of the same tool): pay_invoice #0, pay_invoice #1"},
		{"null error is success", traceBookNullError, CheckPass, "no tool error in 1 result"},
	}
	c := mustContract(t, `[]`)
	for _, tc := range checks {
		res := mustEvaluate(t, c, mustTrace(t, tc.trace), Options{SecretScanner: testSecrets})
		if ch := checkNamed(t, res, CheckToolErrors); ch.Status != tc.status || ch.Detail != tc.detail {
			t.Errorf("%s: tool-errors = %s %q\nwant             %s %q", tc.name, ch.Status, ch.Detail, tc.status, tc.detail)
		}
	}
}
