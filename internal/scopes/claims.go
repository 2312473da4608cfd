package scopes

import (
	"context"
	"fmt"
	"time"

	"github.com/polite-go/polite/limiter"
)

// Claim is a request's claim on a scope, under the limit in force when
// the request made it.
type Claim struct {
	Scope         *Scope
	Rule          *limiter.Rule // the rule its turn is asked under
	MaxConcurrent int           // 0: no cap
}

// Claims are a request's claims on the scopes it passes besides its
// domain, in order: its server's, then the global one.
type Claims []Claim

// TakePlaces takes a place under each scope's MaxConcurrent, in order. If
// ctx ends first, it gives back those it took.
func (c Claims) TakePlaces(ctx context.Context) error {
	for i, cl := range c {
		if err := cl.Scope.places.Take(ctx, cl.MaxConcurrent); err != nil {
			c[:i].GivePlaces()
			return fmt.Errorf("%s scope: %w", cl.Scope.Name, err)
		}
	}
	return nil
}

// GivePlaces gives back the places TakePlaces took.
func (c Claims) GivePlaces() {
	for _, cl := range c {
		cl.Scope.places.Give()
	}
}

// Sent notes that the request that made the claims was sent at at.
func (c Claims) Sent(at time.Time) {
	for _, cl := range c {
		cl.Scope.last.Store(at)
	}
}

// Release ends the claims.
func (c Claims) Release() {
	for _, cl := range c {
		cl.Scope.claimed.Add(-1)
	}
}

// End ends the flight of a request that took its places.
func (c Claims) End() {
	c.GivePlaces()
	c.Release()
}
