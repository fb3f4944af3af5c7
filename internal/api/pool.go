package api

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Pool bounds the evaluations running at once (its workers) and those
// waiting for a turn (its queue), so that load beyond the machine's
// capacity is refused (429) instead of piling up in memory. A job runs on
// the goroutine that called Do, once it holds one of the workers' slots:
// no hand-over to another goroutine and back, which would cost two
// goroutine switches (and often an OS thread wake-up) per evaluation. It
// wraps engine calls from outside (STYLE.md section 1). A Pool is safe for
// concurrent use.
type Pool struct {
	slots   chan struct{} // one element per running job; cap is the workers
	workers int
	queue   int // most jobs waiting for a slot in Do (DoWait waits regardless)
	timeout time.Duration
	busy    atomic.Int64
	waiting atomic.Int64
	jobs    sync.WaitGroup // admitted jobs, waited for by Close

	mu     sync.RWMutex // guards closed against admissions
	closed bool
}

// NewPool returns a pool of workers slots (at least 1) with a queue of
// queue jobs (at least 1). Each job runs with a context that ends after
// timeout (no limit when timeout <= 0) or when its caller's context ends.
func NewPool(workers, queue int, timeout time.Duration) *Pool {
	workers, queue = max(workers, 1), max(queue, 1)
	return &Pool{slots: make(chan struct{}, workers), workers: workers, queue: queue, timeout: timeout}
}

// QueueLength returns the number of jobs waiting for a slot.
func (p *Pool) QueueLength() int { return int(p.waiting.Load()) }

// QueueCapacity returns the most jobs Do lets wait for a slot.
func (p *Pool) QueueCapacity() int { return p.queue }

// Busy returns the number of jobs running.
func (p *Pool) Busy() int { return int(p.busy.Load()) }

// Do runs fn once a slot is free and returns its error. When every slot
// is taken and the queue is full it returns errQueueFull at once. When ctx
// ends while fn waits, fn never runs and Do returns ctx.Err(); when it
// ends while fn runs, fn's context is cancelled and Do waits for fn to
// return. fn's context also ends after the pool's timeout, in which case
// Do returns errEvalTimeout. A panic in fn is returned as an error.
func (p *Pool) Do(ctx context.Context, fn func(context.Context) error) error {
	return p.do(ctx, fn, false)
}

// DoWait is Do, but waits for a slot until ctx ends (then it returns
// ctx.Err()) however many jobs wait, instead of failing at once. Batches
// use it, since their items are already in memory.
func (p *Pool) DoWait(ctx context.Context, fn func(context.Context) error) error {
	return p.do(ctx, fn, true)
}

func (p *Pool) do(ctx context.Context, fn func(context.Context) error, wait bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.RLock()
	if p.closed {
		p.mu.RUnlock()
		return errPoolClosed
	}
	p.jobs.Add(1)
	p.mu.RUnlock()
	defer p.jobs.Done()
	select {
	case p.slots <- struct{}{}:
	default:
		if n := p.waiting.Add(1); !wait && n > int64(p.queue) {
			p.waiting.Add(-1)
			return errQueueFull
		}
		select {
		case p.slots <- struct{}{}:
			p.waiting.Add(-1)
		case <-ctx.Done():
			p.waiting.Add(-1)
			return ctx.Err()
		}
	}
	defer func() { <-p.slots }()
	return p.run(ctx, fn)
}

// Close stops admitting jobs and waits for the jobs already admitted
// (running or waiting for a slot) to finish.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.jobs.Wait()
}

func (p *Pool) run(parent context.Context, fn func(context.Context) error) (err error) {
	p.busy.Add(1)
	defer p.busy.Add(-1)
	ctx, cancel := parent, context.CancelFunc(func() {})
	if p.timeout > 0 {
		ctx, cancel = context.WithTimeout(parent, p.timeout)
	}
	defer cancel()
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("evaluation panicked: %v", v)
		}
	}()
	err = fn(ctx)
	if err != nil && errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil {
		err = errEvalTimeout
	}
	return err
}
