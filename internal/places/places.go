// Package places counts the requests of a key that hold a place under its
// MaxConcurrent, and keeps the line of those waiting for one.
package places

import (
	"container/list"
	"context"
	"fmt"
	"sync"
)

// Pool counts the requests of one key (a domain, a server, the global
// scope) that hold a place under its MaxConcurrent, whatever the limit
// each took it under: a limit changed while requests are in flight counts
// them against the new MaxConcurrent. A request that finds every place
// taken waits in line; it then waits under the MaxConcurrent it asked
// with. The zero value has no place taken. A Pool is safe for concurrent
// use.
type Pool struct {
	mu      sync.Mutex
	taken   int
	waiting *list.List // of *waiter, first come first served; nil until a request waits
}

// waiter is a request waiting for a place under max.
type waiter struct {
	max   int
	ready chan struct{} // closed once the place is the request's
}

// Take takes a place under max, at once if max is 0 (no cap), waiting in
// line for one until ctx ends; it then returns an *AllTakenError.
func (pl *Pool) Take(ctx context.Context, max int) error {
	pl.mu.Lock()
	if max <= 0 || pl.taken < max && (pl.waiting == nil || pl.waiting.Len() == 0) {
		pl.taken++
		pl.mu.Unlock()
		return nil
	}
	if pl.waiting == nil {
		pl.waiting = list.New()
	}
	w := &waiter{max: max, ready: make(chan struct{})}
	e := pl.waiting.PushBack(w)
	pl.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	select {
	case <-w.ready:
		// Given a place as ctx ended: give it to the next in line.
		pl.taken--
	default:
		pl.waiting.Remove(e)
	}
	pl.handOnLocked()
	return &AllTakenError{max: max, inFlight: pl.taken, cause: context.Cause(ctx)}
}

// Give gives back a place that Take took.
func (pl *Pool) Give() {
	pl.mu.Lock()
	pl.taken--
	pl.handOnLocked()
	pl.mu.Unlock()
}

// handOnLocked gives places to the requests first in line while there
// are places under the MaxConcurrent each asked with.
func (pl *Pool) handOnLocked() {
	if pl.waiting == nil {
		return
	}
	for e := pl.waiting.Front(); e != nil; e = pl.waiting.Front() {
		w := e.Value.(*waiter)
		if pl.taken >= w.max {
			return
		}
		pl.taken++
		close(w.ready)
		pl.waiting.Remove(e)
	}
}

// AllTakenError is why a request found no place under its key's
// MaxConcurrent before its context ended. errors.Is sees through it to
// context.Cause of the request's context.
type AllTakenError struct {
	max, inFlight int
	cause         error // context.Cause of the request's context
}

func (e *AllTakenError) Error() string {
	why := "context canceled"
	if e.cause == context.DeadlineExceeded {
		why = "the context's deadline"
	} else if e.cause != context.Canceled {
		why = e.cause.Error()
	}
	return fmt.Sprintf("max_concurrent %d: %d in flight until %s (a response body not read to its end or closed holds its place)", e.max, e.inFlight, why)
}

// Unwrap returns the cause: context.Cause of the request's context.
func (e *AllTakenError) Unwrap() error { return e.cause }
