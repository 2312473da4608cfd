// Package ticket tells whoever handed out a request when its flight through
// the Transport has ended.
package ticket

import (
	"context"
	"sync"
)

// Ticket calls its function once, when the request that carries it ends:
// refused, failed, or answered and its response body closed. A Ticket is
// safe for concurrent use.
type Ticket struct {
	once sync.Once
	done func()
}

type contextKey struct{}

// New returns a Ticket that calls done when its request ends.
func New(done func()) *Ticket { return &Ticket{done: done} }

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
		t.once.Do(t.done)
	}
}
