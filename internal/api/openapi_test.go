package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
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
