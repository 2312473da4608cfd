package polite

import (
	"container/list"
	"context"
	"sync"
)

// places counts the requests of one key (a domain, a server, the global
// scope) that hold a place under its MaxConcurrent, whatever the limit
// each took it under: a limit changed while requests are in flight counts
// them against the new MaxConcurrent. A request that finds every place
// taken waits in line; it then waits under the MaxConcurrent it asked
// with. The zero value has no place taken.
type places struct {
	mu      sync.Mutex
	taken   int
	waiting *list.List // of *placeWaiter, first come first served; nil until a request waits
}

// placeWaiter is a request waiting for a place under max.
type placeWaiter struct {
	max   int
	ready chan struct{} // closed once the place is the request's
}

// take takes a place under max, at once if max is 0 (no cap), waiting in
// line for one until ctx ends; it then returns a *placesTaken.
func (pl *places) take(ctx context.Context, max int) error {
	pl.mu.Lock()
	if max <= 0 || pl.taken < max && (pl.waiting == nil || pl.waiting.Len() == 0) {
		pl.taken++
		pl.mu.Unlock()
		return nil
	}
	if pl.waiting == nil {
		pl.waiting = list.New()
	}
	w := &placeWaiter{max: max, ready: make(chan struct{})}
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
	return &placesTaken{max: max, inFlight: pl.taken, cause: context.Cause(ctx)}
}

// give gives back a place that take took.
func (pl *places) give() {
	pl.mu.Lock()
	pl.taken--
	pl.handOnLocked()
	pl.mu.Unlock()
}

// handOnLocked gives places to the requests first in line while there
// are places under the MaxConcurrent each asked with.
func (pl *places) handOnLocked() {
	if pl.waiting == nil {
		return
	}
	for e := pl.waiting.Front(); e != nil; e = pl.waiting.Front() {
		w := e.Value.(*placeWaiter)
		if pl.taken >= w.max {
			return
		}
		pl.taken++
		close(w.ready)
		pl.waiting.Remove(e)
	}
}
