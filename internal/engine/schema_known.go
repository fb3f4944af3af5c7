package engine

import (
	"strconv"

	"github.com/toolscore/toolscore/internal/jsondoc"
)

// knownValid reports whether the contract document d certainly satisfies
// schemas/contract-v2.schema.json, read from the document without
// decoding it into Go values: schemaErrors would then find nothing, and
// ParseContract skips it. It answers false for anything it does not
// settle (a number other than the plainest literals, a value of the
// wrong type, an unknown key, ...): those documents go through
// schemaErrors, which gives the errors. So a contract's errors are the
// schema's whether or not this check passes; FuzzKnownValid checks that
// true always means no schema error.
func knownValid(d jsondoc.Value) bool {
	if d.Kind() != jsondoc.Object {
		return false
	}
	for k, v := range d.Members() {
		ok := false
		switch k {
		case "$schema", "name", "description":
			ok = v.Kind() == jsondoc.String
		case "contract_version":
			lit, _ := v.Num()
			ok = lit == "2"
		case "required":
			ok = knownArray(v, func(el jsondoc.Value) bool {
				if el.Get("alternatives").Exists() {
					return knownGroup(el)
				}
				return knownCall(el, "description")
			})
		case "alternatives":
			ok = knownArray(v, knownGroup)
		case "optional":
			ok = knownArray(v, func(el jsondoc.Value) bool { return knownCall(el, "description") })
		case "forbidden":
			ok = knownArray(v, knownForbidden)
		case "weights":
			ok = v.Kind() == jsondoc.Object
			for wk, w := range v.Members() {
				switch wk {
				case "selection_accuracy", "argument_f1", "sequence_accuracy", "redundant_rate", "required_call_recall":
					lit, isNum := w.Num()
					// Without a sign a number is at least 0.
					ok = ok && isNum && lit[0] != '-'
				default:
					ok = false
				}
			}
		case "min_score":
			ok = knownUnit(v)
		case "metadata":
			ok = v.Kind() == jsondoc.Object
		}
		if !ok {
			return false
		}
	}
	return true
}

// knownArray reports whether v is an array whose every element passes
// ok.
func knownArray(v jsondoc.Value, ok func(jsondoc.Value) bool) bool {
	if v.Kind() != jsondoc.Array {
		return false
	}
	for _, el := range v.Elems() {
		if !ok(el) {
			return false
		}
	}
	return true
}

// knownCall reports whether v is certainly the schema's call ("call",
// with other "description"), or its forbidden rule (other "reason"): an
// object with a non-empty string tool, args an object or null, and the
// other key a string.
func knownCall(v jsondoc.Value, other string) bool {
	if v.Kind() != jsondoc.Object {
		return false
	}
	tool := false
	for k, m := range v.Members() {
		switch k {
		case "tool":
			s, ok := m.Str()
			if !ok || s == "" {
				return false
			}
			tool = true
		case "args":
			if kind := m.Kind(); kind != jsondoc.Object && kind != jsondoc.Null {
				return false
			}
		case other:
			if m.Kind() != jsondoc.String {
				return false
			}
		default:
			return false
		}
	}
	return tool
}

func knownForbidden(v jsondoc.Value) bool { return knownCall(v, "reason") }

// knownGroup reports whether v is certainly the schema's alternatives
// group: an object with a non-empty array of options (each a call or a
// non-empty array of calls), an id that is a string or an integer
// literal, and a string description.
func knownGroup(v jsondoc.Value) bool {
	if v.Kind() != jsondoc.Object {
		return false
	}
	alts := false
	for k, m := range v.Members() {
		switch k {
		case "alternatives":
			if m.Len() == 0 || !knownArray(m, knownOption) {
				return false
			}
			alts = true
		case "id":
			if m.Kind() != jsondoc.String && !integerLiteral(m) {
				return false
			}
		case "description":
			if m.Kind() != jsondoc.String {
				return false
			}
		default:
			return false
		}
	}
	return alts
}

// knownOption reports whether v is certainly an option of a group: a
// call, or a non-empty array of calls.
func knownOption(v jsondoc.Value) bool {
	if v.Kind() == jsondoc.Array {
		return v.Len() > 0 && knownArray(v, func(el jsondoc.Value) bool { return knownCall(el, "description") })
	}
	return knownCall(v, "description")
}

// integerLiteral reports whether v is a number written with digits only
// (and an optional minus sign): an integer, whatever its size.
func integerLiteral(v jsondoc.Value) bool {
	lit, ok := v.Num()
	if !ok {
		return false
	}
	for i := range len(lit) {
		if c := lit[i]; (c < '0' || c > '9') && !(i == 0 && c == '-') {
			return false
		}
	}
	return true
}

// knownUnit reports whether v is certainly a number in [0, 1]: written
// without a sign, and either "1" or a literal whose nearest float64 is
// below 1 (rounding keeps order, and 1 is a float64, so the number
// itself is below 1).
func knownUnit(v jsondoc.Value) bool {
	lit, ok := v.Num()
	if !ok || lit[0] == '-' {
		return false
	}
	if lit == "1" {
		return true
	}
	f, err := strconv.ParseFloat(lit, 64)
	return err == nil && f < 1
}
