// Package places counts the requests of a key that hold a place under its
// MaxConcurrent, and keeps the line of those waiting for one.
package places

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// Pool counts the requests of one key (a domain, a server, the global
// scope) that hold a place under its MaxConcurrent, whatever the limit
// each took it under: a limit changed while requests are in flight counts
// them against the new MaxConcurrent. A request that finds every place
// taken waits in line; it then waits under the MaxConcurrent it asked
// with. The zero value has no place taken. A Pool is safe for concurrent
// use.
//
// Taking and giving a place takes one atomic operation while nobody waits
// in line; the mutex is only for the line.
type Pool struct {
	mu      sync.Mutex // held to join, leave or serve the line
	waiting *list.List // of *waiter, first come first served; nil until a request waits

	// counts holds the places taken in its low 32 bits and the requests
	// in line, or deciding under mu whether to join it, in its high 32
	// bits: one word, so that a Give that frees a place either shows in
	// what a request about to join the line reads, or sees it there and
	// serves the line. Every Take and Give writes it: it comes last, to
	// lie beside what the Pool's owner puts after the Pool.
	counts atomic.Int64
}

// oneInLine is one request in line in Pool.counts.
const oneInLine = 1 << 32

// taken returns the places taken that counts c holds.
func taken(c int64) int { return int(uint32(c)) }

// inLine returns the requests in line that counts c holds.
func inLine(c int64) int { return int(c >> 32) }

// waiter is a request waiting for a place under max.
type waiter struct {
	max   int
	ready chan struct{} // closed once the place is the request's
}

// Take takes a place under max, at once if max is 0 (no cap), waiting in
// line for one until ctx ends; it then returns an *AllTakenError.
func (pl *Pool) Take(ctx context.Context, max int) error {
	if max <= 0 {
		pl.counts.Add(1)
		return nil
	}
	if c := pl.counts.Load(); inLine(c) == 0 && taken(c) < max && pl.counts.CompareAndSwap(c, c+1) {
		return nil
	}
	pl.mu.Lock()
	if c := pl.counts.Add(oneInLine); inLine(c) == 1 && taken(c) < max {
		pl.counts.Add(1 - oneInLine)
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
		pl.counts.Add(-1)
	default:
		pl.waiting.Remove(e)
		pl.counts.Add(-oneInLine)
	}
	pl.handOnLocked()
	return &AllTakenError{max: max, inFlight: taken(pl.counts.Load()), cause: context.Cause(ctx)}
}

// Give gives back a place that Take took.
func (pl *Pool) Give() {
	if c := pl.counts.Add(-1); inLine(c) > 0 {
		pl.mu.Lock()
		pl.handOnLocked()
		pl.mu.Unlock()
	}
}

// handOnLocked gives places to the requests first in line while there
// are places under the MaxConcurrent each asked with.
func (pl *Pool) handOnLocked() {
	if pl.waiting == nil {
		return
	}
	for e := pl.waiting.Front(); e != nil; e = pl.waiting.Front() {
		w := e.Value.(*waiter)
		if taken(pl.counts.Load()) >= w.max {
			return
		}
		pl.counts.Add(1 - oneInLine)
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
