package redislimiter

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// poolGuard keeps the Limiter from closing the gate of a *redis.Client's
// connection pool. After as many failed dials as the pool has connections
// (failed dials that go-redis counts over the pool's life), go-redis fails
// every call at once with the last dial error, and dials again only once a
// second, in the background, until a dial works: Redis answering again,
// or a Sentinel naming a new primary, would then wait up to a second more
// before the shared pace comes back. So:
//
//   - while Redis is down, the Limiter dials it outside the pool
//     (dialable) before it probes it through the client;
//   - once calls have waited stallAfter with none answered, the Limiter
//     dials Redis outside the pool to see whether it is there; if not,
//     Redis is down at once, and the calls under way are cut short, so
//     that neither they, retrying, nor the calls that follow, paced by the
//     fallback, dial in the pool;
//   - at most half the pool's connections are under way in the Limiter's
//     round trips (a batch of calls is one: batch.go), so that the dials of the calls that Redis's failure finds
//     under way (each one fails once, whatever its context, as go-redis
//     dials apart from the call) cannot close the gate on their own.
//
// A dial that works holds off the next stall check for the time the
// shared pace must hold to end an outage, so that a Redis that is only
// slow or far costs at most one dial a second.
type poolGuard struct {
	slots      chan struct{} // one per call under way
	waiting    atomic.Int64  // calls under way
	checkAfter atomic.Int64  // when waiting calls have stalled, in UnixNano
	calmUntil  atomic.Int64  // no stall check before then, in UnixNano: a dial found Redis there
	armed      atomic.Bool   // a timer will look at the calls under way
	checking   atomic.Bool   // a stall check runs
}

// stallAfter is how long calls to Redis wait, none of them answered, before
// the Limiter dials Redis to see whether it is there: far longer than a
// round trip on a local network, far shorter than go-redis takes to fail a
// call to a Redis that refuses connections (it retries the dial, and then
// the call).
const stallAfter = 10 * time.Millisecond

// newPoolGuard returns the guard of client's pool, or nil for a client
// with more than one node (a Cluster's failover moves slots to another
// node's pool).
func newPoolGuard(client redis.UniversalClient) *poolGuard {
	c, ok := client.(*redis.Client)
	if !ok {
		return nil
	}
	return &poolGuard{slots: make(chan struct{}, max(c.Options().PoolSize/2, 1))}
}

// enter takes a slot for a call that starts, waiting until ctx ends at
// most.
func (l *Limiter) enter(ctx context.Context) error {
	g := l.guard
	if g == nil {
		return nil
	}
	select {
	case g.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	if g.waiting.Add(1) == 1 {
		g.checkAfter.Store(time.Now().Add(stallAfter).UnixNano())
	}
	if g.armed.CompareAndSwap(false, true) {
		time.AfterFunc(stallAfter, l.lookAtStalls)
	}
	return nil
}

// leave gives back the slot of a call that returned.
func (l *Limiter) leave() {
	g := l.guard
	if g == nil {
		return
	}
	g.checkAfter.Store(time.Now().Add(stallAfter).UnixNano())
	g.waiting.Add(-1)
	<-g.slots
}

// lookAtStalls checks Redis if the calls under way stalled, and looks
// again later while calls are under way.
func (l *Limiter) lookAtStalls() {
	g := l.guard
	g.armed.Store(false)
	if g.waiting.Load() == 0 {
		return
	}
	if wait := time.Duration(max(g.checkAfter.Load(), g.calmUntil.Load()) - time.Now().UnixNano()); wait > 0 {
		if g.armed.CompareAndSwap(false, true) {
			time.AfterFunc(wait, l.lookAtStalls)
		}
		return
	}
	if g.checking.CompareAndSwap(false, true) {
		if !l.health.start(l.checkStall) {
			g.checking.Store(false)
		}
	}
}

// checkStall dials Redis outside the client's pool, and marks it down if
// that fails.
func (l *Limiter) checkStall() {
	g := l.guard
	defer g.checking.Store(false)
	defer l.health.wg.Done()
	if l.down() {
		return
	}
	ctx := context.Background()
	if err := l.dialable(ctx); err != nil {
		l.markDown(ctx, "", err) // one Redis: the probe of any domain reaches it
		return
	}
	g.calmUntil.Store(time.Now().Add(steady).UnixNano())
}

// dialable reports whether a connection to the Redis that a *redis.Client
// sends its commands to opens, with the client's own dialer (for a
// Sentinel-managed client, to the primary the Sentinels name now), outside
// the client's pool. Other clients are not dialled.
func (l *Limiter) dialable(ctx context.Context) error {
	c, ok := l.client.(*redis.Client)
	if !ok {
		return nil
	}
	o := c.Options()
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	conn, err := o.Dialer(ctx, o.Network, o.Addr)
	if err != nil {
		return err
	}
	return conn.Close()
}
