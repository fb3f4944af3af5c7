package api

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolscore/toolscore/internal/workload"
)

// fastContracts are the inline contracts and gold lists FuzzParseBody
// caches before reading bodies around them.
var fastContracts = []string{
	string(workload.Contract(workload.Small)),
	`{"contract_version": 2, "required": [{"tool": "search", "args": {"q": "lisbon"}}]}`,
	`[{"tool": "search_flights", "args": {"destination": "OPO"}}, {"tool": "book"}]`,
	`{"contract_version": 2, "required": [{"tool": "a", "args": {"x": "\u0000"}}]}`,
}

// decodedView is what decodeParsed made of a body, or its error, in a
// form cmp compares.
func decodedView(in *evalInput, err error) string {
	if err != nil {
		p := problemFor(err)
		return fmt.Sprintf("error %s %q %v", p.kind.slug, p.detail, p.errors)
	}
	r := &in.req
	return fmt.Sprintf("contract %q gold %q trace %q forbidden %q format %q answer %v task %q run %q agent %q labels %v strict %v gate %v weights %v min %v | inline %q %q %v ref %q %d",
		r.Contract, r.Gold, r.Trace, r.Forbidden, r.Format, deref(r.FinalAnswer), r.TaskID, r.RunID, r.Agent, r.Labels,
		r.Strict, deref(r.SafetyGate), r.Weights, deref(r.MinScore), in.inline, in.inlinePtr, in.wantGold, in.refName, in.refVersion)
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// FuzzParseBody checks that reading a body around a cached inline
// contract (contractCache.parseBody, which does not read the contract
// again) decodes what reading all of it does (parseOwnedRequest), errors
// included, and leaves the body as it was; and that the input's
// mayHoldNUL, from what the parser and the cache noted, is
// mayHoldNUL(body), which reads the body.
func FuzzParseBody(f *testing.F) {
	for _, seed := range []struct{ before, after string }{
		{`{"contract": `, `, "trace": []}`},
		{`{"agent": "a", "contract":`, `, "trace": [{"tool": "search"}], "task_id": "t"}`},
		{`{"gold": `, `, "trace": {"calls": []}}`},
		{"{\n  \"contract\" :\t", "\n}"},
		{`{"contract": `, `}`},
		{`{"contract": `, ``},
		{`{"contract": `, `, "contract": "x", "trace": []}`},
		{`{"contract": "x", "contract": `, `, "trace": []}`},
		{`{"trace": [{"tool": "a", "args": {"contract": `, `}}]}`},
		{`{"agent": "\"contract\": `, `", "trace": []}`},
		{`{"contract": [`, `], "trace": []}`},
		{`{"contract": `, `, "trace": [}`},
		{`{"contract": `, `, "trace": [], "task_id": 7}`},
		{`{"gold": `, `, "contract": "x", "trace": []}`},
		{`{"contract": `, `x, "trace": []}`},
		{`{"agent": "\u0041", "contract": `, `, "trace": []}`},
		{`{"contract": `, `, "trace": [{"tool": "a\\u"}]}`},
		{`{"contract": `, `, "trace": [{"tool": "a\\"}], "agent": "u"}`},
	} {
		for i := range fastContracts {
			f.Add(seed.before, uint8(i), seed.after)
		}
	}
	cc := newContractCache(nil, 64<<20)
	for _, c := range fastContracts {
		if _, err := cc.parseInline([]byte(c)); err != nil {
			f.Fatalf("%s: %v", c, err)
		}
	}
	f.Fuzz(func(t *testing.T, before string, which uint8, after string) {
		body := []byte(before + fastContracts[int(which)%len(fastContracts)] + after)
		orig := bytes.Clone(body)
		plainBody := bytes.Clone(body)
		doc, err := cc.parseBody(body)
		if !bytes.Equal(body, orig) {
			t.Fatalf("parseBody changed the body %q to %q", orig, body)
		}
		var got string
		if err != nil {
			got = decodedView(nil, err)
		} else {
			in, err := decodeParsed(body, doc)
			got = decodedView(in, err)
			if err == nil {
				var pc *parsedContract
				if in.inline != nil {
					pc, err = cc.parseInline(in.inline)
				}
				if err == nil {
					if got, want := in.mayHoldNUL(pc), mayHoldNUL(body); got != want {
						t.Errorf("%q: mayHoldNUL of the input %v, of the body %v", orig, got, want)
					}
				}
			}
		}
		pdoc, perr := parseOwnedRequest(plainBody)
		var want string
		if perr != nil {
			want = decodedView(nil, perr)
		} else {
			want = decodedView(decodeParsed(plainBody, pdoc))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q: parseBody (-parseOwnedRequest +parseBody):\n%s", orig, diff)
		}
	})
}

// TestParseBodySkipsContract checks that parseBody reads a body around a
// cached inline contract: the contract member is an empty object whose
// text is the contract.
func TestParseBodySkipsContract(t *testing.T) {
	cc := newContractCache(nil, 64<<20)
	c := fastContracts[1]
	body := []byte(`{"agent": "a", "contract": ` + c + `, "trace": []}`)
	doc, err := cc.parseBody(bytes.Clone(body))
	if err != nil {
		t.Fatal(err)
	}
	if n := doc.Get("contract").Len(); n != 2 {
		t.Fatalf("before caching: contract has %d members, want 2", n)
	}
	if _, err := cc.parseInline([]byte(c)); err != nil {
		t.Fatal(err)
	}
	doc, err = cc.parseBody(bytes.Clone(body))
	if err != nil {
		t.Fatal(err)
	}
	m := doc.Get("contract")
	if m.Len() != 0 || m.Raw() != c {
		t.Errorf("cached: contract has %d members and text %q, want 0 and %q", m.Len(), m.Raw(), c)
	}
}

// FuzzMayHoldNUL checks the shortcut of evaluate's NUL check: a request
// whose body holds no `\u` (mayHoldNUL false) grades to a result in which
// storedNULProblem finds no NUL.
func FuzzMayHoldNUL(f *testing.F) {
	for _, b := range []string{
		body(`"gold":`+goldList, `"trace":[{"tool":"search","args":{"q":"a\u0000b"}}]`),
		body(`"gold":`+goldList, `"trace":[{"tool":"search_flights","args":{"destination":"OPO"}}]`, `"final_answer":"ok"`),
		body(`"gold":`+goldList, `"trace":"{\"tool\":\"search\",\"args\":{\"q\":\"a\\u0000b\"}}"`),
		body(`"gold":`+goldList, `"trace":"{\"tool\":\"search\",\"args\":{\"q\":\"a\u005cu0000b\"}}"`),
		body(`"gold":`+goldList,
			`"trace":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"search","arguments":"{\"q\":\"a\\\\\\u0075000b\"}"}}]}]`),
		body(`"contract":{"contract_version":2,"required":[{"tool":"a","args":{"x":"y"}}]}`, `"trace":[{"tool":"a","args":{"x":"y"}}]`),
	} {
		f.Add([]byte(b))
	}
	s := New(Config{Store: newFakeStore(), Registerer: prometheus.NewRegistry(), Workers: 1, AuthOff: true})
	f.Cleanup(s.Close)
	id := uuid.MustParse("01890000-0000-7000-8000-000000000001")
	f.Fuzz(func(t *testing.T, data []byte) {
		if mayHoldNUL(data) {
			return
		}
		in, err := decodeEvaluation(data)
		if err != nil || in.refName != "" {
			return
		}
		out, err := s.evaluate(context.Background(), in, 1, id)
		if err != nil {
			return
		}
		if err := storedNULProblem(out, in, &parsedContract{}); err != nil {
			t.Errorf("%q holds no \\u, but its result holds a NUL: %v", data, err)
		}
	})
}
