package store

import (
	"context"
	"errors"
	"testing"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
)

// TestInvalidText checks that Postgres refusing a NUL character in text
// (SQLSTATE 22021) is record.ErrInvalidText, a client
// error.
func TestInvalidText(t *testing.T) {
	db, _ := mustMigrated(t)
	ctx := context.Background()
	bad := newResult(t, 1, func(r *record.Result) { r.Agent = "a\x00b" })
	if err := db.InsertResults(ctx, record.ResultBatch{Results: []record.Result{bad}}); !errors.Is(err, record.ErrInvalidText) {
		t.Errorf("InsertResults(NUL agent) = %v, want ErrInvalidText", err)
	}
	cv := record.ContractVersion{ProjectID: record.DefaultProject, Name: "flights", SHA256: "00", Kind: record.KindContract,
		Description: "a\x00b", Body: []byte(`{"contract_version": 2, "required": []}`)}
	if _, _, err := db.CreateContractVersion(ctx, cv); !errors.Is(err, record.ErrInvalidText) {
		t.Errorf("CreateContractVersion(NUL description) = %v, want ErrInvalidText", err)
	}
	if _, err := db.ListResults(ctx, record.DefaultProject, record.ResultFilter{Agent: "a\x00b"}, nil, 10); !errors.Is(err, record.ErrInvalidText) {
		t.Errorf("ListResults(NUL agent) = %v, want ErrInvalidText", err)
	}
	if _, err := db.Stats(ctx, record.DefaultProject, record.ResultFilter{TaskID: "\xff"}, record.GroupByAgent); !errors.Is(err, record.ErrInvalidText) {
		t.Errorf("Stats(invalid UTF-8 task) = %v, want ErrInvalidText", err)
	}
	if errors.Is(record.ErrInvalidText, engine.ErrUnavailable) {
		t.Fatal("ErrInvalidText must not be unavailability")
	}
	rs, err := db.ListResults(ctx, record.DefaultProject, record.ResultFilter{}, nil, 10)
	if err != nil || len(rs) != 0 {
		t.Errorf("ListResults = %d results, %v; want none stored", len(rs), err)
	}
}
