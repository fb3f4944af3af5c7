package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/toolscore/toolscore/internal/auth"
	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/record"
	"github.com/toolscore/toolscore/internal/store"
)

// bootstrapHint says how to make the first key; logged while no key
// exists.
const bootstrapHint = "create the first admin key with `toolscore keys create --project default --scope admin` " +
	"against the same DATABASE_URL (it prints the key once), or set TOOLSCORE_BOOTSTRAP_KEY and restart"

// bootstrap prepares authentication at start. With it off, it says so
// loudly. With it on and a database that has never had a key, it stores
// cfg.BootstrapKey as an admin key of project default, or, without one,
// logs how to make the first key (every request but the public routes is
// 401 until then). A bootstrap key is never made again once any key
// exists, so revoking it is final.
//
// Errors: the database cannot be read or written.
func bootstrap(ctx context.Context, db *store.DB, cfg Config, log *zap.Logger) error {
	if cfg.Auth == "off" {
		log.Warn("AUTHENTICATION IS OFF (TOOLSCORE_AUTH=off): every request acts as an admin of project default with every scope, " +
			"without a key; for local development only, never on a network")
		return nil
	}
	active, all, err := db.CountKeys(ctx)
	if err != nil {
		return err
	}
	switch {
	case all == 0 && cfg.BootstrapKey != "":
		k, err := auth.KeyFromToken(cfg.BootstrapKey, record.DefaultProject, "bootstrap", []auth.Scope{auth.ScopeAdmin}, uuid.Nil)
		if err != nil {
			return fmt.Errorf("TOOLSCORE_BOOTSTRAP_KEY: %w", err)
		}
		k, err = db.CreateKey(ctx, k)
		if errors.Is(err, engine.ErrConflict) {
			return nil // another replica starting at the same time made it
		}
		if err != nil {
			return err
		}
		log.Info("created the bootstrap admin key of project default from TOOLSCORE_BOOTSTRAP_KEY", zap.String("key_id", k.ID.String()),
			zap.String("key_prefix", k.Prefix))
	case all == 0:
		log.Warn("no API key exists yet: every request but /healthz, /readyz and /openapi.yaml answers 401", zap.String("hint", bootstrapHint))
	case active == 0:
		log.Warn("every API key is revoked: every request but /healthz, /readyz and /openapi.yaml answers 401",
			zap.String("hint", "create a key with `toolscore keys create --project NAME --scope ...` against the same DATABASE_URL"))
	case cfg.BootstrapKey != "":
		log.Info("TOOLSCORE_BOOTSTRAP_KEY is ignored: the database has keys already")
	}
	return nil
}
