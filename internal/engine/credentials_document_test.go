package engine

import (
	"context"
	"testing"
)

// TestRedactDocument checks that a document's secrets (a gitleaks secret
// in a value and in a key, a secret-named key's literal value, array
// elements and $regex under one) are hidden, that placeholders and $type
// are kept, and that a document without secrets is returned as it is.
func TestRedactDocument(t *testing.T) {
	pat := sampleGitHubPAT
	doc := `{"contract_version": 2, "description": "uses <b>` + pat + `</b>", "required": [{"tool": "login", "args": {
		"password": "hunter2hunter2", "api_key": {"$regex": "^sk-live"}, "token": {"$type": "string"}, "pins": ["1234", "x"],
		"secret": "${SECRET}", "` + pat + `": 1, "user": "ana"}}]}`
	got, err := RedactDocument(context.Background(), []byte(doc), testSecrets)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"contract_version":2,"description":"uses <b>[REDACTED:github-pat]</b>","required":[{"args":{"[REDACTED:github-pat]":1,` +
		`"api_key":{"$regex":"[REDACTED:secret-named-argument]"},"password":"[REDACTED:secret-named-argument]","pins":["1234","x"],` +
		`"secret":"${SECRET}","token":{"$type":"string"},"user":"ana"},"tool":"login"}]}`
	if string(got) != want {
		t.Errorf("RedactDocument =\n%s\nwant\n%s", got, want)
	}
	clean := `{"required": [{"tool": "search", "args": {"q": "lisbon"}}]}`
	if got, err := RedactDocument(context.Background(), []byte(clean), testSecrets); err != nil || string(got) != clean {
		t.Errorf("RedactDocument(clean) = %s, %v; want it unchanged", got, err)
	}
	if _, err := RedactDocument(context.Background(), []byte(`{"a":`), testSecrets); err == nil {
		t.Error("RedactDocument(invalid JSON) = nil error")
	}
}
