package api

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// busyPool returns a pool of one worker and the given queue whose worker is
// held by a job until release is called.
func busyPool(t *testing.T, queue int) (p *Pool, release func()) {
	t.Helper()
	p = NewPool(1, queue, 0)
	gate, started, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- p.Do(context.Background(), func(context.Context) error {
			close(started)
			<-gate
			return nil
		})
	}()
	<-started
	return p, func() {
		close(gate)
		if err := <-done; err != nil {
			t.Errorf("holding job: %v", err)
		}
	}
}

// waitQueued waits until n jobs are queued.
func waitQueued(p *Pool, n int) {
	for p.QueueLength() < n {
		runtime.Gosched()
	}
}

func TestPoolCancelWhileQueued(t *testing.T) {
	p, release := busyPool(t, 1)
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var ran atomic.Bool
	errc := make(chan error, 1)
	go func() { errc <- p.Do(ctx, func(context.Context) error { ran.Store(true); return nil }) }()
	waitQueued(p, 1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Do() after cancel = %v, want context.Canceled", err)
	}
	release()
	// The abandoned job is skipped by the worker: a later job runs after it.
	if err := p.Do(context.Background(), func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if ran.Load() {
		t.Error("a job whose request was cancelled while queued still ran")
	}
}

func TestPoolQueueFull(t *testing.T) {
	p, release := busyPool(t, 1)
	defer p.Close()
	errc := make(chan error, 1)
	go func() { errc <- p.Do(context.Background(), func(context.Context) error { return nil }) }()
	waitQueued(p, 1)
	if err := p.Do(context.Background(), func(context.Context) error { return nil }); !errors.Is(err, errQueueFull) {
		t.Errorf("Do() on a full queue = %v, want errQueueFull", err)
	}
	// DoWait gives up when its context ends.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.DoWait(ctx, func(context.Context) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("DoWait() with an ended context = %v, want context.Canceled", err)
	}
	release()
	if err := <-errc; err != nil {
		t.Errorf("queued job = %v", err)
	}
}

func TestPoolTimeoutAndPanic(t *testing.T) {
	p := NewPool(1, 1, 1) // 1ns: every job's context is already over
	defer p.Close()
	err := p.Do(context.Background(), func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	if !errors.Is(err, errEvalTimeout) {
		t.Errorf("Do() past the timeout = %v, want errEvalTimeout", err)
	}
	err = p.Do(context.Background(), func(context.Context) error { panic("boom") })
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("Do() of a panicking job = %v, want its panic as an error", err)
	}
	if err := p.Do(context.Background(), func(context.Context) error { return nil }); err != nil {
		t.Errorf("the worker did not survive the panic: %v", err)
	}
}

func TestPoolCloseDrains(t *testing.T) {
	p, release := busyPool(t, 2)
	var ran atomic.Int32
	errc := make(chan error, 2)
	for range 2 {
		go func() { errc <- p.Do(context.Background(), func(context.Context) error { ran.Add(1); return nil }) }()
	}
	waitQueued(p, 2)
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	release()
	<-closed
	for range 2 {
		if err := <-errc; err != nil {
			t.Errorf("queued job at close = %v", err)
		}
	}
	if ran.Load() != 2 {
		t.Errorf("Close ran %d queued jobs, want 2", ran.Load())
	}
	if err := p.Do(context.Background(), func(context.Context) error { return nil }); !errors.Is(err, errPoolClosed) {
		t.Errorf("Do() after Close = %v, want errPoolClosed", err)
	}
}
