package engine

import (
	"encoding/json"
	"testing"
)

// minLenScanner is a scanner with a MinTextLen.
type minLenScanner struct {
	*fakeScanner
	minLen int
}

func (s minLenScanner) MinTextLen() int { return s.minLen }

// FuzzContractShownArgs checks the contract's shown arguments
// (shownArgsCache: one scan of every string, the document's nodes or the
// compiled form telling which argument maps hold nothing to hide)
// against hideWritten of each map alone, scanning string by string: the
// same JSON for every expected call, with a scanner that finds "SECRET"
// and "tok-1", without and with a MinTextLen (5: no shorter text holds
// either).
func FuzzContractShownArgs(f *testing.F) {
	for _, s := range []string{
		`[{"tool":"a","args":{"x":"plain","n":1,"l":["a",2,null,true]}}]`,
		`[{"tool":"a","args":{"x":"has SECRET inside"}},{"tool":"b","args":{"y":"other"}}]`,
		`[{"tool":"a","args":{"password":"hunter22","api_key":1234567,"token":["abcd","x"]}}]`,
		`[{"tool":"a","args":{"o":{"access_token":{"v":"tok-1"}},"m":{"$regex":"tok-1.*"}}}]`,
		`{"required":[{"tool":"a","args":{"x":{"$contains":"SECRET"},"y":{"$one_of":["tok-1",2]}}}],"forbidden":[{"tool":"f","args":{"k":"tok-1"}}]}`,
		`[{"tool":"a","args":{"k":"SECRET","k2":"SECRET"}},{"tool":"a","args":{"k":"SECRET"}}]`,
		`[{"tool":"a","args":{"k":"a","k":"SECRET"}},{"tool":"a","args":{"o":{"X-Api-Key":"abcdef"},"t":"tok-1"}}]`,
		`[{"tool":"a","args":{"SECRET":"tok-","nexttoken":"abcdefg","l":[{"pwd":"\u0053ECRET"}]}}]`,
	} {
		f.Add([]byte(s))
	}
	fake := &fakeScanner{secrets: map[string]string{"SECRET": "fake", "tok-1": "tok"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseContract(data)
		if err != nil {
			return
		}
		for _, scanner := range []SecretScanner{fake, minLenScanner{fake, 5}} {
			checkShownArgs(t, c, scanner)
		}
	})
}

// checkShownArgs is FuzzContractShownArgs for contract c and scanner.
func checkShownArgs(t *testing.T, c *Contract, scanner SecretScanner) {
	var sc shownArgsCache
	m, same := sc.get(c, scanner)
	allSame := true
	if m == nil {
		t.Fatal("no shown arguments made")
	}
	check := func(args Args) {
		if !args.Checked() {
			return
		}
		want, _ := (&redactor{named: true, scanner: scanner}).hideWritten(args.Map(), false)
		e, ok := m[args.a]
		if !ok {
			t.Fatalf("no shown arguments for %v", args)
		}
		got := e.shown
		allSame = allSame && got.same(args)
		red := &redactor{contractShown: m}
		if st := red.contractText(args, got); st == nil || st.Load() != nil {
			t.Errorf("shown arguments %v: text slot %v, want an empty one", got, st)
		}
		gj, err1 := json.Marshal(got)
		wj, err2 := json.Marshal(want)
		if err1 != nil || err2 != nil || string(gj) != string(wj) {
			t.Errorf("shown %s (%v), want %s (%v)", gj, err1, wj, err2)
		}
	}
	for _, st := range c.Required {
		if st.Call != nil {
			check(st.Call.Args)
		}
		if st.Group != nil {
			for _, opt := range st.Group.Options {
				for i := range opt {
					check(opt[i].Args)
				}
			}
		}
	}
	for i := range c.Forbidden {
		check(c.Forbidden[i].Args)
	}
	if same != allSame {
		t.Errorf("shownArgsCache says same %v, the arguments %v", same, allSame)
	}
}
