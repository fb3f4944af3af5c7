package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v5"
	"sigs.k8s.io/yaml"

	"github.com/toolscore/toolscore"
	"github.com/toolscore/toolscore/internal/engine/format"
	"github.com/toolscore/toolscore/schemas"
)

// spec is openapi.yaml decoded, with compiled response schemas.
type spec struct {
	doc      map[string]any
	compiler *jsonschema.Compiler
	mu       sync.Mutex
	schemas  map[string]*jsonschema.Schema
}

var (
	specOnce   sync.Once
	specLoaded *spec
	specErr    error
)

func loadSpec(tb testing.TB) *spec {
	tb.Helper()
	specOnce.Do(func() {
		js, err := yaml.YAMLToJSON(toolscore.OpenAPI)
		if err != nil {
			specErr = fmt.Errorf("openapi.yaml: %w", err)
			return
		}
		var doc map[string]any
		if err := json.Unmarshal(js, &doc); err != nil {
			specErr = err
			return
		}
		// The handlers' responses are checked against a strict copy of
		// the schemas, so that a field the spec does not document fails.
		closeObjects(doc)
		if js, err = json.Marshal(doc); err != nil {
			specErr = err
			return
		}
		c := jsonschema.NewCompiler()
		c.Draft = jsonschema.Draft2020
		if err := c.AddResource("openapi.json", bytes.NewReader(js)); err != nil {
			specErr = err
			return
		}
		specLoaded = &spec{doc: doc, compiler: c, schemas: map[string]*jsonschema.Schema{}}
	})
	if specErr != nil {
		tb.Fatal(specErr)
	}
	return specLoaded
}

// closeObjects gives every schema in v that lists properties without
// saying whether others are allowed additionalProperties: false. The
// document promises clients that new optional fields may appear; the
// tests hold the server to the fields it documents today.
func closeObjects(v any) {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["properties"].(map[string]any); ok {
			_, ap := v["additionalProperties"]
			_, up := v["unevaluatedProperties"]
			if !ap && !up {
				v["additionalProperties"] = false
			}
		}
		for k, x := range v {
			if k != "examples" && k != "example" {
				closeObjects(x)
			}
		}
	case []any:
		for _, x := range v {
			closeObjects(x)
		}
	}
}

// operations returns "METHOD pattern" for every operation of the spec.
func (s *spec) operations() []string {
	var out []string
	for path, item := range s.doc["paths"].(map[string]any) {
		for method := range item.(map[string]any) {
			switch method {
			case "get", "post", "put", "patch", "delete", "head", "options":
				out = append(out, strings.ToUpper(method)+" "+path)
			}
		}
	}
	sort.Strings(out)
	return out
}

func ptrToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// check validates a recorded response against the spec's response for
// the route pattern, method and status: the status must be documented,
// the content type must be one of the documented ones, and a JSON body
// must satisfy the schema.
func (s *spec) check(tb testing.TB, pattern, method string, rec *httptest.ResponseRecorder) {
	tb.Helper()
	op, ok := s.doc["paths"].(map[string]any)[pattern].(map[string]any)[strings.ToLower(method)].(map[string]any)
	if !ok {
		tb.Errorf("openapi.yaml has no operation %s %s", method, pattern)
		return
	}
	status := strconv.Itoa(rec.Code)
	resp, ok := op["responses"].(map[string]any)[status].(map[string]any)
	if !ok {
		tb.Errorf("openapi.yaml: %s %s does not document status %s (body %s)", method, pattern, status, rec.Body)
		return
	}
	loc := "#/paths/" + ptrToken(pattern) + "/" + strings.ToLower(method) + "/responses/" + status
	if ref, ok := resp["$ref"].(string); ok {
		loc = ref
		name := strings.TrimPrefix(ref, "#/components/responses/")
		resp = s.doc["components"].(map[string]any)["responses"].(map[string]any)[name].(map[string]any)
	}
	mt, _, _ := mime.ParseMediaType(rec.Header().Get("Content-Type"))
	content, _ := resp["content"].(map[string]any)
	if _, ok := content[mt]; !ok {
		tb.Errorf("openapi.yaml: %s %s %s does not document content type %q", method, pattern, status, mt)
		return
	}
	if mt != "application/json" && mt != "application/problem+json" {
		return
	}
	url := "openapi.json" + loc + "/content/" + ptrToken(mt) + "/schema"
	s.mu.Lock()
	sch, ok := s.schemas[url]
	if !ok {
		var err error
		sch, err = s.compiler.Compile(url)
		if err != nil {
			s.mu.Unlock()
			tb.Fatalf("compile %s: %v", url, err)
		}
		s.schemas[url] = sch
	}
	s.mu.Unlock()
	var v any
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		tb.Errorf("%s %s %s: body is not JSON: %v", method, pattern, status, err)
		return
	}
	if err := sch.Validate(v); err != nil {
		tb.Errorf("%s %s %s: response does not match openapi.yaml: %#v\nbody: %s", method, pattern, status, err, rec.Body)
	}
}

func TestRoutesMatchOpenAPI(t *testing.T) {
	s := New(Config{Store: newFakeStore()})
	defer s.Close()
	var routes []string
	err := chi.Walk(s.router, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		routes = append(routes, method+" "+strings.TrimSuffix(strings.ReplaceAll(route, "/*/", "/"), "/*"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(routes)
	if diff := cmp.Diff(loadSpec(t).operations(), routes); diff != "" {
		t.Errorf("router routes and openapi.yaml paths differ (-openapi +router):\n%s", diff)
	}
}

// component returns components/<kind>/<name> of the spec.
func (s *spec) component(tb testing.TB, kind, name string) map[string]any {
	tb.Helper()
	v, ok := s.doc["components"].(map[string]any)[kind].(map[string]any)[name].(map[string]any)
	if !ok {
		tb.Fatalf("openapi.yaml has no components/%s/%s", kind, name)
	}
	return v
}

// schema compiles a schema of the strict copy by its JSON pointer.
func (s *spec) schema(tb testing.TB, ptr string) *jsonschema.Schema {
	tb.Helper()
	url := "openapi.json#" + ptr
	s.mu.Lock()
	defer s.mu.Unlock()
	sch, ok := s.schemas[url]
	if !ok {
		var err error
		if sch, err = s.compiler.Compile(url); err != nil {
			tb.Fatalf("compile %s: %v", url, err)
		}
		s.schemas[url] = sch
	}
	return sch
}

// exampleJSON returns the value of components/examples/<name> as JSON.
func (s *spec) exampleJSON(tb testing.TB, name string) string {
	tb.Helper()
	b, err := json.Marshal(s.component(tb, "examples", name)["value"])
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// TestOpenAPISchemasDocumented checks that every schema of components/schemas
// has a description and that every property, at any depth, has a
// description and says what it holds (a type, a $ref, a composition, a
// const or an enum). ToolCall.result is any JSON value on purpose.
func TestOpenAPISchemasDocumented(t *testing.T) {
	s := loadSpec(t)
	anyValue := map[string]bool{"/components/schemas/ToolCall/properties/result": true}
	var walk func(ptr string, sch map[string]any)
	walk = func(ptr string, sch map[string]any) {
		if props, ok := sch["properties"].(map[string]any); ok {
			for name, p := range props {
				pp := ptr + "/properties/" + ptrToken(name)
				pm := p.(map[string]any)
				if _, ref := pm["$ref"]; ref {
					continue
				}
				if d, _ := pm["description"].(string); d == "" {
					t.Errorf("%s has no description", pp)
				}
				typed := false
				for _, k := range []string{"type", "oneOf", "anyOf", "const", "enum"} {
					if _, ok := pm[k]; ok {
						typed = true
					}
				}
				if !typed && !anyValue[pp] {
					t.Errorf("%s has no type", pp)
				}
				walk(pp, pm)
			}
		}
		if items, ok := sch["items"].(map[string]any); ok {
			walk(ptr+"/items", items)
		}
		for _, k := range []string{"oneOf", "anyOf"} {
			alts, _ := sch[k].([]any)
			for i, a := range alts {
				walk(ptr+"/"+k+"/"+strconv.Itoa(i), a.(map[string]any))
			}
		}
	}
	for name, sch := range s.doc["components"].(map[string]any)["schemas"].(map[string]any) {
		sm := sch.(map[string]any)
		if d, _ := sm["description"].(string); d == "" {
			t.Errorf("components/schemas/%s has no description", name)
		}
		walk("/components/schemas/"+ptrToken(name), sm)
	}
}

// TestOpenAPIFreeFormObjectsSayOpen checks that every object schema without
// properties says additionalProperties: openapi-typescript reads a bare
// {type: object} as an object with no keys at all, which no caller can
// fill.
func TestOpenAPIFreeFormObjectsSayOpen(t *testing.T) {
	var walk func(ptr string, v any)
	walk = func(ptr string, v any) {
		switch v := v.(type) {
		case map[string]any:
			isObject := v["type"] == "object"
			if ts, ok := v["type"].([]any); ok {
				for _, x := range ts {
					isObject = isObject || x == "object"
				}
			}
			_, props := v["properties"]
			_, ap := v["additionalProperties"]
			if isObject && !props && !ap {
				t.Errorf("%s: an object schema without properties must say additionalProperties", ptr)
			}
			for k, x := range v {
				if k != "examples" && k != "example" {
					walk(ptr+"/"+ptrToken(k), x)
				}
			}
		case []any:
			for i, x := range v {
				walk(ptr+"/"+strconv.Itoa(i), x)
			}
		}
	}
	walk("", loadSpec(t).doc)
}

// TestExamplesMatchSchemas validates every example of every request and
// response body against its schema, strictly (no undocumented field).
func TestExamplesMatchSchemas(t *testing.T) {
	s := loadSpec(t)
	n := 0
	check := func(where string, content map[string]any, ptr string) {
		for mt, m := range content {
			if mt != "application/json" && mt != "application/problem+json" {
				continue
			}
			examples, _ := m.(map[string]any)["examples"].(map[string]any)
			for name, e := range examples {
				em := e.(map[string]any)
				if ref, ok := em["$ref"].(string); ok {
					em = s.component(t, "examples", strings.TrimPrefix(ref, "#/components/examples/"))
				}
				if err := s.schema(t, ptr+"/content/"+ptrToken(mt)+"/schema").Validate(em["value"]); err != nil {
					t.Errorf("%s %s example %s does not match its schema: %#v", where, mt, name, err)
				}
				n++
			}
		}
	}
	for path, item := range s.doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			om, ok := op.(map[string]any)
			if !ok || method == "parameters" {
				continue
			}
			base := "/paths/" + ptrToken(path) + "/" + method
			if rb, ok := om["requestBody"].(map[string]any); ok {
				check(strings.ToUpper(method)+" "+path+" request", rb["content"].(map[string]any), base+"/requestBody")
			}
			for status, r := range om["responses"].(map[string]any) {
				rm := r.(map[string]any)
				ptr := base + "/responses/" + status
				if ref, ok := rm["$ref"].(string); ok {
					ptr = strings.TrimPrefix(ref, "#")
					rm = s.component(t, "responses", strings.TrimPrefix(ref, "#/components/responses/"))
				}
				if content, ok := rm["content"].(map[string]any); ok {
					check(strings.ToUpper(method)+" "+path+" "+status, content, ptr)
				}
			}
		}
	}
	if n < 40 {
		t.Errorf("checked %d examples, want the spec's 40 or more", n)
	}
}

// TestOpenAPIFormatEnums checks that the trace format enums are the engine's
// format names (plus auto where a request may give it).
func TestOpenAPIFormatEnums(t *testing.T) {
	s := loadSpec(t)
	enum := func(sch map[string]any) []string {
		var out []string
		for _, v := range sch["enum"].([]any) {
			out = append(out, v.(string))
		}
		return out
	}
	names := format.Names()
	if diff := cmp.Diff(names, enum(s.component(t, "schemas", "TraceFormat"))); diff != "" {
		t.Errorf("TraceFormat enum (-format.Names() +openapi.yaml):\n%s", diff)
	}
	withAuto := append([]string{"auto"}, names...)
	for _, name := range []string{"EvaluationRequest", "EvaluationOptions"} {
		f := s.component(t, "schemas", name)["properties"].(map[string]any)["format"].(map[string]any)
		if diff := cmp.Diff(withAuto, enum(f)); diff != "" {
			t.Errorf("%s.format enum (-auto and format.Names() +openapi.yaml):\n%s", name, diff)
		}
	}
}

// TestOpenAPIContractSchemaMatchesFile checks that openapi.yaml's ContractV2
// accepts and refuses the same documents as schemas/contract-v2.schema.json,
// which the engine validates contracts with.
func TestOpenAPIContractSchemaMatchesFile(t *testing.T) {
	s := loadSpec(t)
	api := s.schema(t, "/components/schemas/ContractV2")
	file, err := schemas.ContractV2Schema()
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{"contractA": contractA}
	for _, path := range []string{"../../examples/contracts/contract.json", "../engine/testdata/seed/contract.json"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		docs[path] = string(b)
	}
	suite, err := os.ReadFile("../../examples/harness/suite.json")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Tasks []struct {
			ID       string          `json:"id"`
			Contract json.RawMessage `json:"contract"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(suite, &st); err != nil {
		t.Fatal(err)
	}
	for _, task := range st.Tasks {
		if task.Contract != nil {
			docs["suite task "+task.ID] = string(task.Contract)
		}
	}
	for name, doc := range map[string]string{
		"empty tool":         `{"contract_version": 2, "required": [{"tool": ""}]}`,
		"unknown key":        `{"contract_version": 2, "extra": 1}`,
		"version 3":          `{"contract_version": 3}`,
		"empty group":        `{"required": [{"alternatives": []}]}`,
		"empty option":       `{"required": [{"alternatives": [[]]}]}`,
		"group without list": `{"required": [{"id": "g", "alternatives": [{"tool": "a"}, [{"tool": "b"}, {"tool": "c"}]]}]}`,
		"group id number":    `{"required": [{"id": 7, "alternatives": [{"tool": "a"}]}]}`,
		"group id bool":      `{"required": [{"id": true, "alternatives": [{"tool": "a"}]}]}`,
		"unknown weight":     `{"contract_version": 2, "weights": {"speed": 1}}`,
		"negative weight":    `{"contract_version": 2, "weights": {"argument_f1": -1}}`,
		"min_score 2":        `{"contract_version": 2, "min_score": 2}`,
		"args number":        `{"contract_version": 2, "required": [{"tool": "a", "args": 5}]}`,
		"args null":          `{"contract_version": 2, "optional": [{"tool": "a", "args": null}]}`,
		"call extra key":     `{"contract_version": 2, "required": [{"tool": "a", "why": "x"}]}`,
		"forbidden reason":   `{"contract_version": 2, "forbidden": [{"tool": "a", "reason": 1}]}`,
		"metadata":           `{"contract_version": 2, "metadata": {"owner": "x"}, "$schema": "x", "name": "n"}`,
		"top alternatives":   `{"contract_version": 2, "alternatives": [{"alternatives": [{"tool": "a"}]}]}`,
	} {
		docs[name] = doc
	}
	for name, doc := range docs {
		var v any
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fileErr, apiErr := file.Validate(v), api.Validate(v)
		if (fileErr == nil) != (apiErr == nil) {
			t.Errorf("%s: contract-v2.schema.json says %v, openapi.yaml ContractV2 says %v", name, fileErr, apiErr)
		}
	}
}

// TestSeedExamplesMatchHandlers sends the spec's request examples for the
// shipped flight example through the handlers and checks that the
// answers are the spec's response examples (ids, times and request ids
// aside), so the examples show what the server really answers.
func TestSeedExamplesMatchHandlers(t *testing.T) {
	b := setup(t, nil)
	s := b.spec
	trace, err := os.ReadFile("../../examples/contracts/trace.json")
	if err != nil {
		t.Fatal(err)
	}
	var evaluationID string
	steps := []struct {
		method, target, body string
		headers              []string
		status               int
		example              string
	}{
		{"POST", "/v1/validate", s.exampleJSON(t, "ContractFlights"), nil, 200, "ValidationFlights"},
		{"POST", "/v1/contracts/flights/versions", s.exampleJSON(t, "ContractFlights"), nil, 201, "ContractVersionFlights"},
		{"POST", "/v1/contracts/flights/versions", s.exampleJSON(t, "ContractFlights"), nil, 200, "ContractVersionFlights"},
		{"GET", "/v1/contracts/flights/versions/latest", "", nil, 200, "ContractVersionFlights"},
		{"GET", "/v1/contracts/flights/versions", "", nil, 200, "ContractVersionPageFlights"},
		{"GET", "/v1/contracts", "", nil, 200, "ContractPageFlights"},
		{"POST", "/v1/evaluations", s.exampleJSON(t, "EvaluationRequestFlights"), []string{"Idempotency-Key", "lisbon-run-1"}, 201, "EvaluationFlights"},
		{"GET", "/v1/evaluations/{id}", "", nil, 200, "EvaluationFlights"},
		{"POST", "/v1/evaluations?store=false", s.exampleJSON(t, "EvaluationRequestGold"), nil, 200, "EvaluationGoldDryRun"},
		{"POST", "/v1/evaluations/batch?store=false", s.exampleJSON(t, "BatchRequestFlights"), nil, 200, "BatchFlights"},
		{"POST", "/v1/evaluations", `{"contract": "flights", "trace": [`, nil, 400, "ProblemInvalidJSON"},
		{"GET", "/v1/evaluations?limit=0", "", nil, 400, "ProblemInvalidParameter"},
		{"GET", "/healthz?%zz", "", nil, 400, "ProblemMalformedQuery"},
		{"GET", "/v1/evaluations/01a2290e-7d9f-7ed6-92f2-4772fdded5b2", "", nil, 404, "ProblemNotFound"},
		{"POST", "/v1/evaluations", `{"contract": "flights@1", "trace": ` + string(trace) + `}`, []string{"Idempotency-Key", "lisbon-run-1"}, 409, "ProblemIdempotencyConflict"},
		{"POST", "/v1/evaluations", "x", []string{"Content-Type", "text/plain"}, 415, "ProblemUnsupportedMediaType"},
		{"POST", "/v1/evaluations", strings.Repeat(" ", 1100000), nil, 413, "ProblemBodyTooLarge"},
		{"POST", "/v1/evaluations?store=false", `{"contract": "flights", "trace": {"not": "a trace"}}`, nil, 422, "ProblemInvalidTrace"},
		{"POST", "/v1/validate", `{"contract_version": 2, "required": [{"tool": "search_flights", "args": {"date": {"$regex": "("}}}]}`, nil, 422, "ProblemInvalidContract"},
		{"POST", "/v1/evaluations?store=false", `{"contract": "hotels@2", "trace": []}`, nil, 422, "ProblemUnknownContract"},
		{"POST", "/v1/evaluations?store=false", `{"contract": "flights", "trace": [], "weights": {"speed": 1}}`, nil, 422, "ProblemInvalidRequest"},
	}
	for _, st := range steps {
		target := strings.Replace(st.target, "{id}", evaluationID, 1)
		rec := b.do(t, st.method, target, st.body, st.headers...)
		if rec.Code != st.status {
			t.Errorf("%s %s = %d, want %d: %s", st.method, target, rec.Code, st.status, rec.Body)
			continue
		}
		var got, want any
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatalf("%s %s: %v", st.method, target, err)
		}
		if err := json.Unmarshal([]byte(s.exampleJSON(t, st.example)), &want); err != nil {
			t.Fatal(err)
		}
		if st.example == "EvaluationFlights" && evaluationID == "" {
			evaluationID, _ = got.(map[string]any)["id"].(string)
		}
		adoptVolatile(got, want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s %s: the answer is not openapi.yaml's example %s (-example +answer):\n%s\nanswer: %s",
				st.method, target, st.example, diff, rec.Body)
		}
	}
}

// adoptVolatile copies into got the example's values of the fields that
// differ on every run: ids, times and request ids.
func adoptVolatile(got, want any) {
	switch g := got.(type) {
	case map[string]any:
		w, ok := want.(map[string]any)
		if !ok {
			return
		}
		for k, gv := range g {
			switch k {
			case "id", "created_at", "updated_at", "request_id":
				if _, isString := gv.(string); isString {
					if wv, ok := w[k].(string); ok {
						g[k] = wv
					}
				}
			default:
				adoptVolatile(gv, w[k])
			}
		}
	case []any:
		w, ok := want.([]any)
		if !ok {
			return
		}
		for i := range g {
			if i < len(w) {
				adoptVolatile(g[i], w[i])
			}
		}
	}
}
