package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolscore/toolscore/internal/auth"
)

// TestMethodNotAllowed checks that a 405 carries the Allow header (RFC
// 9110 section 15.5.6) listing the routed methods (HEAD wherever GET is),
// and that HEAD works on the health routes. A route without a parameter
// answers 405 to its other methods although a parameter route beside it
// matches its path (GET /v1/evaluations/batch is not an evaluation id).
func TestMethodNotAllowed(t *testing.T) {
	b := setup(t, nil)
	tests := []struct{ method, target, allow string }{
		{"POST", "/healthz", "GET, HEAD"},
		{"DELETE", "/readyz", "GET, HEAD"},
		{"PUT", "/v1/evaluations", "GET, HEAD, POST"},
		{"GET", "/v1/validate", "POST"},
		{"POST", "/v1/regrades/0193c6a0-5b1e-7c3a-9d2f-3e1f2a4b5c6d", "GET, HEAD, DELETE"},
		{"HEAD", "/v1/validate", "POST"},
		{"GET", "/v1/evaluations/batch", "POST"},
		{"HEAD", "/v1/evaluations/batch", "POST"},
		{"DELETE", "/v1/evaluations/batch", "POST"},
		{"GET", "/v1/traces/regrade", "POST"},
		{"PUT", "/v1/contracts", "GET, HEAD"},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			rec := b.do(t, tc.method, tc.target, "")
			p := problemOf(t, rec, 405, "method-not-allowed")
			if got := rec.Header().Get("Allow"); got != tc.allow {
				t.Errorf("Allow = %q, want %q", got, tc.allow)
			}
			if want := tc.method + " is not allowed on " + tc.target + "; allowed: " + tc.allow; p.Detail != want {
				t.Errorf("detail = %q, want %q", p.Detail, want)
			}
		})
	}
	for _, target := range []string{"/healthz", "/readyz"} {
		if rec := b.do(t, "HEAD", target, ""); rec.Code != 200 {
			t.Errorf("HEAD %s = %d %s", target, rec.Code, rec.Body)
		}
	}
	// Each 405 is counted under its route, the one refuseStatic answers
	// for too.
	metrics := b.do(t, "GET", "/metrics", "").Body.String()
	var got []string
	for _, line := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(line, `toolscore_http_requests_total{code="405"`) {
			got = append(got, line)
		}
	}
	want := []string{
		`toolscore_http_requests_total{code="405",method="DELETE",route="/readyz"} 1`,
		`toolscore_http_requests_total{code="405",method="DELETE",route="/v1/evaluations/batch"} 1`,
		`toolscore_http_requests_total{code="405",method="GET",route="/v1/evaluations/batch"} 1`,
		`toolscore_http_requests_total{code="405",method="GET",route="/v1/traces/regrade"} 1`,
		`toolscore_http_requests_total{code="405",method="GET",route="/v1/validate"} 1`,
		`toolscore_http_requests_total{code="405",method="HEAD",route="/v1/evaluations/batch"} 1`,
		`toolscore_http_requests_total{code="405",method="HEAD",route="/v1/validate"} 1`,
		`toolscore_http_requests_total{code="405",method="POST",route="/healthz"} 1`,
		`toolscore_http_requests_total{code="405",method="POST",route="/v1/regrades/{id}"} 1`,
		`toolscore_http_requests_total{code="405",method="PUT",route="/v1/contracts"} 1`,
		`toolscore_http_requests_total{code="405",method="PUT",route="/v1/evaluations"} 1`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("405 request counts (-want +got):\n%s", diff)
	}
}

// TestHeadOnGetRoutes checks that HEAD answers wherever GET does, with
// GET's status and headers and no body, on a real HTTP server (which
// drops a HEAD answer's body): found and not-found results, lists with
// their query parameters checked as for GET, the public routes and
// /metrics; and that HEAD needs GET's scope.
func TestHeadOnGetRoutes(t *testing.T) {
	b, keys := setupAuth(t, func(c *Config) { c.MetricsOpen = true })
	reader := keys.addKey(t, 1, auth.ScopeRead, auth.ScopeIngest)
	ingestOnly := keys.addKey(t, 1, auth.ScopeIngest)
	rec := b.do(t, "POST", "/v1/evaluations", body(`"gold":`+goldList, `"trace":`+traceHalf), bearer(reader)...)
	if rec.Code != 201 {
		t.Fatalf("POST = %d %s", rec.Code, rec.Body)
	}
	id := decode[evaluationView](t, rec).ID
	srv := httptest.NewServer(b.s.Handler())
	defer srv.Close()
	send := func(method, target, token string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+target, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		data, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res, data
	}
	for _, tc := range []struct {
		target string
		status int
	}{
		{"/v1/evaluations/" + id, 200},
		{"/v1/evaluations/0193c6a0-5b1e-7c3a-9d2f-3e1f2a4b5c6d", 404},
		{"/v1/evaluations/not-a-uuid", 400},
		{"/v1/evaluations?limit=5&passed=false", 200},
		{"/v1/evaluations?grades=A", 400},
		{"/v1/contracts", 200},
		{"/v1/stats?group_by=agent", 200},
		{"/healthz", 200},
		{"/openapi.yaml", 200},
		{"/metrics", 200},
	} {
		t.Run(tc.target, func(t *testing.T) {
			get, getBody := send("GET", tc.target, reader)
			head, headBody := send("HEAD", tc.target, reader)
			if get.StatusCode != tc.status || head.StatusCode != tc.status {
				t.Fatalf("GET = %d, HEAD = %d; want %d (GET body %s)", get.StatusCode, head.StatusCode, tc.status, getBody)
			}
			if len(headBody) != 0 {
				t.Errorf("HEAD body = %q, want none", headBody)
			}
			if g, h := get.Header.Get("Content-Type"), head.Header.Get("Content-Type"); g != h {
				t.Errorf("Content-Type: GET %q, HEAD %q", g, h)
			}
			// Every answer but the Prometheus text (sent without one) states its
			// length; HEAD's is GET's.
			if tc.target != "/metrics" {
				if g, h := get.Header.Get("Content-Length"), head.Header.Get("Content-Length"); g != strconv.Itoa(len(getBody)) || h != g {
					t.Errorf("Content-Length: GET %q (body %d bytes), HEAD %q", g, len(getBody), h)
				}
			}
		})
	}
	if res, _ := send("HEAD", "/v1/evaluations/"+id, ingestOnly); res.StatusCode != 403 {
		t.Errorf("HEAD with an ingest-only key = %d, want 403 (GET's scope read)", res.StatusCode)
	}
	if res, _ := send("HEAD", "/v1/evaluations/"+id, ""); res.StatusCode != 401 {
		t.Errorf("HEAD without a key = %d, want 401", res.StatusCode)
	}
	if res, _ := send("HEAD", "/v1/nothing", reader); res.StatusCode != 404 {
		t.Errorf("HEAD /v1/nothing = %d, want 404", res.StatusCode)
	}
}
