package api

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Pool runs evaluations on a fixed number of worker goroutines fed by a
// bounded queue, so that load beyond the machine's capacity is refused
// (429) instead of piling up in memory. It wraps engine calls from outside
// (STYLE.md section 1). A Pool is safe for concurrent use.
type Pool struct {
	jobs    chan *job
	workers int
	timeout time.Duration
	busy    atomic.Int64
	quit    chan struct{}
	wg      sync.WaitGroup

	mu     sync.RWMutex // guards closed against admissions
	closed bool
}

const (
	jobQueued int32 = iota
	jobRunning
	jobAbandoned
)

type job struct {
	ctx   context.Context
	fn    func(context.Context) error
	state atomic.Int32
	err   error
	done  chan struct{}
}

// NewPool starts workers goroutines (at least 1) with a queue of queue
// jobs (at least 1). Each job runs with a context that ends after timeout
// (no limit when timeout <= 0) or when its caller's context ends.
func NewPool(workers, queue int, timeout time.Duration) *Pool {
	workers, queue = max(workers, 1), max(queue, 1)
	p := &Pool{jobs: make(chan *job, queue), workers: workers, timeout: timeout, quit: make(chan struct{})}
	p.wg.Add(workers)
	for range workers {
		go p.work()
	}
	return p
}

// QueueLength returns the number of jobs waiting.
func (p *Pool) QueueLength() int { return len(p.jobs) }

// Busy returns the number of workers running a job.
func (p *Pool) Busy() int { return int(p.busy.Load()) }

// Do queues fn and waits for it. When the queue is full it returns
// errQueueFull at once. When ctx ends while fn is queued, fn never runs
// and Do returns ctx.Err(); when it ends while fn runs, fn's context is
// cancelled and Do waits for fn to return. fn's context also ends after
// the pool's timeout, in which case Do returns errEvalTimeout.
func (p *Pool) Do(ctx context.Context, fn func(context.Context) error) error {
	return p.do(ctx, fn, false)
}

// DoWait is Do, but waits for room in the queue until ctx ends (then it
// returns ctx.Err()) instead of failing at once. Batches use it, since
// their items are already in memory.
func (p *Pool) DoWait(ctx context.Context, fn func(context.Context) error) error {
	return p.do(ctx, fn, true)
}

func (p *Pool) do(ctx context.Context, fn func(context.Context) error, wait bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	j := &job{ctx: ctx, fn: fn, done: make(chan struct{})}
	p.mu.RLock()
	if p.closed {
		p.mu.RUnlock()
		return errPoolClosed
	}
	if wait {
		select {
		case p.jobs <- j:
		case <-ctx.Done():
			p.mu.RUnlock()
			return ctx.Err()
		}
	} else {
		select {
		case p.jobs <- j:
		default:
			p.mu.RUnlock()
			return errQueueFull
		}
	}
	p.mu.RUnlock()
	select {
	case <-j.done:
		return j.err
	case <-ctx.Done():
		if j.state.CompareAndSwap(jobQueued, jobAbandoned) {
			return ctx.Err()
		}
		<-j.done // running: fn sees ctx end and returns soon
		return j.err
	}
}

// Close stops admitting jobs, lets the workers finish the jobs already
// queued and waits for them.
func (p *Pool) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	close(p.quit)
	p.wg.Wait()
}

func (p *Pool) work() {
	defer p.wg.Done()
	for {
		select {
		case j := <-p.jobs:
			p.run(j)
		case <-p.quit:
			for {
				select {
				case j := <-p.jobs:
					p.run(j)
				default:
					return
				}
			}
		}
	}
}

func (p *Pool) run(j *job) {
	if !j.state.CompareAndSwap(jobQueued, jobRunning) {
		return // abandoned by its caller
	}
	p.busy.Add(1)
	defer p.busy.Add(-1)
	defer close(j.done)
	ctx, cancel := j.ctx, context.CancelFunc(func() {})
	if p.timeout > 0 {
		ctx, cancel = context.WithTimeout(j.ctx, p.timeout)
	}
	defer cancel()
	defer func() {
		if v := recover(); v != nil {
			j.err = fmt.Errorf("evaluation panicked: %v", v)
		}
	}()
	j.err = j.fn(ctx)
	if j.err != nil && errors.Is(j.err, context.DeadlineExceeded) && j.ctx.Err() == nil {
		j.err = errEvalTimeout
	}
}
