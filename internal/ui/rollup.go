package ui

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// Roller moves the overview's aggregates forward (store.DB.Rollup).
type Roller interface {
	Rollup(ctx context.Context, now time.Time, maxStep time.Duration) (upto time.Time, more bool, err error)
}

// Rollup timing: each step counts at most rollupStep of results in one
// transaction; steps follow each other while more remains, then the next
// round starts rollupEvery later. The first round waits rollupEvery too,
// so that a restarted server first resumes the work it was doing
// (rescued regrade chunks, harness tasks) rather than counting history.
const (
	rollupStep  = 7 * 24 * time.Hour
	rollupEvery = time.Minute
)

// RunRollup keeps the overview's aggregates current until ctx ends: a
// round a minute, the first a minute after the start. A failed round is
// logged and tried again at the next one; the overview stays correct
// meanwhile, reading more results itself.
func RunRollup(ctx context.Context, r Roller, log *zap.Logger) {
	if log == nil {
		log = zap.NewNop()
	}
	t := time.NewTimer(rollupEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for {
			upto, more, err := r.Rollup(ctx, time.Now(), rollupStep)
			if err != nil {
				if ctx.Err() == nil {
					log.Warn("console rollup", zap.Error(err))
				}
				break
			}
			if !more {
				break
			}
			log.Info("console rollup caught up to", zap.Time("upto", upto))
		}
		t.Reset(rollupEvery)
	}
}
