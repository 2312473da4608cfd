// Package ticket tells whoever handed out a request when it holds its
// turns in the Transport and when its flight has ended.
package ticket

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Ticket calls its function once, when the request that carries it ends:
// refused, failed, or answered and its response body closed. A Ticket is
// safe for concurrent use.
type Ticket struct {
	once     sync.Once
	done     func()
	heldOnce sync.Once
	held     func()       // nil unless NewHeld made it
	queued   atomic.Int64 // nanoseconds the request waited in line before it was handed out
}

type contextKey struct{}

// New returns a Ticket that calls done when its request ends.
func New(done func()) *Ticket { return &Ticket{done: done} }

// NewHeld returns a Ticket that also calls held once, when its
// request holds the turns it waits for in every scope of the Transport, or
// ends before.
func NewHeld(done, held func()) *Ticket { return &Ticket{done: done, held: held} }

// Held calls the Ticket's held function, the first time only. A nil
// Ticket does nothing.
func (t *Ticket) Held() {
	if t != nil && t.held != nil {
		t.heldOnce.Do(t.held)
	}
}

// SetQueued notes that the request waited d in line before it was handed
// out. Call it before the request goes.
func (t *Ticket) SetQueued(d time.Duration) { t.queued.Store(int64(d)) }

// TakeQueued returns the time SetQueued noted, the first time only, so
// that a request's redirects do not count it again; 0 for a nil Ticket.
func (t *Ticket) TakeQueued() time.Duration {
	if t == nil {
		return 0
	}
	return time.Duration(t.queued.Swap(0))
}

// With returns ctx carrying t.
func With(ctx context.Context, t *Ticket) context.Context {
	return context.WithValue(ctx, contextKey{}, t)
}

// From returns the Ticket ctx carries, or nil.
func From(ctx context.Context) *Ticket {
	t, _ := ctx.Value(contextKey{}).(*Ticket)
	return t
}

// Done calls the Ticket's function, the first time only. A nil Ticket does
// nothing.
func (t *Ticket) Done() {
	if t != nil {
		t.Held()
		t.once.Do(t.done)
	}
}
