package api

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestQueryParamsMatchOpenAPI checks that queryParams lists exactly the
// query parameters openapi.yaml documents for each /v1 operation.
func TestQueryParamsMatchOpenAPI(t *testing.T) {
	s := loadSpec(t)
	components := s.doc["components"].(map[string]any)["parameters"].(map[string]any)
	got := map[string][]string{}
	for path, item := range s.doc["paths"].(map[string]any) {
		if !strings.HasPrefix(path, "/v1/") {
			continue
		}
		pathItem := item.(map[string]any)
		shared, _ := pathItem["parameters"].([]any)
		for method, op := range pathItem {
			if method == "parameters" {
				continue
			}
			params, _ := op.(map[string]any)["parameters"].([]any)
			params = append(slices.Clone(shared), params...)
			names := []string{}
			for _, p := range params {
				pm := p.(map[string]any)
				if ref, ok := pm["$ref"].(string); ok {
					pm = components[strings.TrimPrefix(ref, "#/components/parameters/")].(map[string]any)
				}
				if pm["in"] == "query" {
					names = append(names, pm["name"].(string))
				}
			}
			slices.Sort(names)
			got[strings.ToUpper(method)+" "+path] = names
		}
	}
	want := map[string][]string{}
	for k, v := range queryParams {
		names := append([]string{}, v...)
		slices.Sort(names)
		want[k] = names
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("queryParams (-code +openapi.yaml):\n%s", diff)
	}
}

// TestQueryChecks checks that unknown query parameters, cursors this
// server could not have made and since after until are 400s naming the
// parameter.
func TestQueryChecks(t *testing.T) {
	b, _ := setupRegrades(t)
	cursor := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		target string
		want   FieldProblem
	}{
		{"/v1/evaluations?grades=A", FieldProblem{Parameter: "grades", Message: "unknown query parameter; this route takes limit, cursor, latest, contract, task_id, run_id, agent, label, passed, grade, since, until, regrades"}},
		{"/v1/evaluations/0193c6a0-5b1e-7c3a-9d2f-3e1f2a4b5c6d?limit=2", FieldProblem{Parameter: "limit", Message: "unknown query parameter; this route takes none"}},
		{"/v1/stats/compare?contract=flights&a=1&b=2&since=2026-11-01T00:00:00Z", FieldProblem{Parameter: "since", Message: "unknown query parameter; this route takes contract, a, b, task_id, run_id, agent, label"}},
		{"/v1/evaluations?cursor=" + cursor(`{}`), FieldProblem{Parameter: "cursor", Message: "is not a cursor returned by this endpoint"}},
		{"/v1/evaluations?latest=true&cursor=" + cursor(`{"t":"2026-11-01T00:00:00Z"}`), FieldProblem{Parameter: "cursor", Message: "is not a cursor returned by this endpoint"}},
		{"/v1/contracts?cursor=" + cursor(`""`), FieldProblem{Parameter: "cursor", Message: "is not a cursor returned by this endpoint"}},
		{"/v1/contracts/flights/versions?cursor=" + cursor(`0`), FieldProblem{Parameter: "cursor", Message: "is not a cursor returned by this endpoint"}},
		{"/v1/regrades/0193c6a0-5b1e-7c3a-9d2f-3e1f2a4b5c6d/changes?cursor=" + cursor(`{}`), FieldProblem{Parameter: "cursor", Message: "is not a cursor returned by this endpoint"}},
		{"/v1/stats?since=2026-11-02T00:00:00Z&until=2026-11-01T00:00:00Z", FieldProblem{Parameter: "until", Message: "must not be before since"}},
	}
	for _, tc := range tests {
		t.Run(tc.target, func(t *testing.T) {
			p := problemOf(t, b.do(t, "GET", tc.target, ""), 400, "invalid-parameter")
			if diff := cmp.Diff([]FieldProblem{tc.want}, p.Errors); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
	// Documented parameters still pass, on every kind of route.
	for _, target := range []string{"/v1/evaluations?agent=a&label=env=dev&limit=5", "/v1/stats?group_by=agent", "/v1/contracts?limit=1"} {
		if rec := b.do(t, "GET", target, ""); rec.Code != 200 {
			t.Errorf("GET %s = %d %s", target, rec.Code, rec.Body)
		}
	}
}
