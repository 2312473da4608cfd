package polite

import (
	"context"
	"sync"
	"time"

	"github.com/polite-go/polite/internal/maxwait"
	"github.com/polite-go/polite/internal/scopes"
	"github.com/polite-go/polite/internal/ticket"
	"github.com/polite-go/polite/limiter"
)

// waited is how a request's wait through its scopes went.
type waited struct {
	sent     time.Time
	wait     time.Duration
	scope    string         // the scope whose turn came last; empty if none made it wait
	reason   limiter.Reason // the rule that made it wait there
	degraded bool
	turns    *requestTurns // for the gate's last check before the base; nil if unpaced or atOnce
	// atOnce is the turn of a request whose one turn came at once
	// (limiter.ReserveAtOnce), kept here, not in turns, so that such a
	// request, the commonest, takes no requestTurns.
	atOnce limiter.Reservation
}

// leave is the departure gate's last check, immediately before the base,
// for a request to d: a request held up since the wait passes the gate
// again (limiter.Leave).
func (t *Transport) leave(ctx context.Context, d *domain, w *waited) error {
	if w.turns == nil {
		if !w.atOnce.Late() {
			return nil
		}
		w.turns = t.heldTurn(d, &w.atOnce)
	}
	if err := limiter.Leave(ctx, t.limiter, &w.turns.turns); err != nil {
		return t.waitError(ctx, d, time.Now(), err)
	}
	return nil
}

// heldTurn returns the turns of a request to d that holds one, res, in
// its domain, for the gate to pass it again.
//
//go:noinline
func (t *Transport) heldTurn(d *domain, res *limiter.Reservation) *requestTurns {
	rt := t.newRequestTurns(d, t.currentLimit(d), nil, false, nil)
	rt.res[0] = *res
	return rt
}

// requestTurns is a request's turns in its domain and the scopes it
// claims, for limiter.WaitTurns, with what the departure gate needs to read
// the limits in force when the request leaves. Its arrays hold one turn,
// the common case; a request with more takes slices.
type requestTurns struct {
	t          *Transport
	d          *domain
	claims     scopes.Claims
	turns      limiter.Turns
	scopes     []string
	claimOf    []int // the index in claims of each turn's scope; -1 for the domain
	req        [1]limiter.Request
	res        [1]limiter.Reservation
	scope      [1]string
	claimOfOne [1]int
}

// wait waits for the turn of a request to d in its domain and in the
// scopes it claims, and confirms its departure in each as its last step,
// noting in w how it went: the request must be sent as soon as wait
// returns nil.
func (t *Transport) wait(ctx context.Context, d *domain, lim *limitInForce, claims scopes.Claims, tk *ticket.Ticket, w *waited) error {
	unpaced := d.unpaced(lim)
	if unpaced && len(claims) == 0 {
		w.sent = time.Now()
		return nil
	}
	var rt *requestTurns
	if !unpaced && len(claims) == 0 {
		var err error
		if rt, err = t.reserveAtOnce(ctx, d, lim, tk, w); rt == nil || err != nil {
			return err
		}
	} else {
		rt = t.newRequestTurns(d, lim, claims, unpaced, tk)
	}
	lw, err := limiter.WaitTurns(ctx, t.limiter, &rt.turns)
	if lw.Far >= 0 {
		t.scopes.WaitedFor(rt.scopes[lw.Far])
	}
	if err != nil {
		return t.waitFailed(ctx, d, rt, lw.RetryAt, err)
	}
	w.sent, w.wait, w.degraded, w.turns = lw.Sent, lw.Wait, lw.Degraded, rt
	if lw.Last >= 0 {
		w.scope, w.reason = rt.scopes[lw.Last], lw.Reason
	}
	return nil
}

// reserveAtOnce reserves the one turn of a request to d under lim, in its
// domain, and passes the departure gate when it comes at once: it then
// notes in w how the wait went and returns nil, nil. A turn to wait for
// it returns in the request's turns, held, for WaitTurns. It is a
// function of its own so that the stack a waiting request sleeps on
// holds none of it.
//
//go:noinline
func (t *Transport) reserveAtOnce(ctx context.Context, d *domain, lim *limitInForce, tk *ticket.Ticket, w *waited) (*requestTurns, error) {
	if err := ctx.Err(); err != nil {
		return nil, t.waitError(ctx, d, time.Now(), err)
	}
	req := d.request(lim)
	req.MaxWait = t.maxWait
	cause := limiter.ErrWaitTooLong
	if _, ok := ctx.Deadline(); ok {
		req.MaxWait, cause = maxwait.Bound(ctx, t.maxWait, cause, time.Now())
	}
	left, err := limiter.ReserveAtOnce(ctx, t.limiter, req, &w.atOnce)
	switch {
	case err != nil:
		return nil, t.waitError(ctx, d, time.Now(), err)
	case left:
		w.sent, w.degraded = w.atOnce.Start(), w.atOnce.Degraded()
		return nil, nil
	case !w.atOnce.OK():
		wait := w.atOnce.Wait()
		return nil, t.waitError(ctx, d, time.Now().Add(wait), maxwait.Exceeded(d.key, wait, cause))
	}
	rt := t.newRequestTurns(d, lim, nil, false, tk)
	rt.res[0], rt.turns.Reserved = w.atOnce, 1
	w.atOnce = limiter.Reservation{}
	return rt, nil
}

// waitFailed gives back rt, the turns of a request to d whose wait failed
// with err, and returns the error the request fails with: its turn would
// have come at retryAt (zero when the limiter did not say). It is a
// function of its own so that the stack a waiting request sleeps on holds
// none of it.
//
//go:noinline
func (t *Transport) waitFailed(ctx context.Context, d *domain, rt *requestTurns, retryAt time.Time, err error) error {
	rt.release()
	if retryAt.IsZero() {
		retryAt = time.Now()
	}
	return t.waitError(ctx, d, retryAt, err)
}

// newRequestTurns returns the turns of a request to d under lim in its
// domain, unless it goes unpaced there, and in the scopes it claims. It is
// a function of its own so that the frame a request sleeps under stays
// small.
//
//go:noinline
func (t *Transport) newRequestTurns(d *domain, lim *limitInForce, claims scopes.Claims, unpaced bool, tk *ticket.Ticket) *requestTurns {
	rt := requestTurnsPool.Get().(*requestTurns)
	rt.t, rt.d, rt.claims = t, d, claims
	rt.turns = limiter.Turns{MaxWait: t.maxWait, Rules: rt}
	if n := len(claims); unpaced && n == 1 || !unpaced && n == 0 {
		rt.turns.Requests, rt.turns.Reservations, rt.scopes, rt.claimOf = rt.req[:0], rt.res[:], rt.scope[:0], rt.claimOfOne[:0]
	} else {
		if !unpaced {
			n++
		}
		rt.turns.Requests, rt.turns.Reservations = make([]limiter.Request, 0, n), make([]limiter.Reservation, n)
		rt.scopes, rt.claimOf = make([]string, 0, n), make([]int, 0, n)
	}
	if !unpaced {
		rt.add(scopes.Domain, d.request(lim), -1)
	}
	for i, c := range claims {
		rt.add(c.Scope.Name, c.Scope.Request(c.Rule), i)
	}
	t.scopes.Order(rt.turns.Requests, rt.scopes, rt.claimOf)
	if tk != nil {
		rt.turns.Held = tk.Held
	}
	return rt
}

// requestTurnsPool keeps the requestTurns of requests that left, so that
// a request that does not wait allocates none: its turns live on the
// heap, to keep the frame a waiting request sleeps under small.
var requestTurnsPool = sync.Pool{New: func() any { return new(requestTurns) }}

// release gives w's turns back to the pool once the request left or
// failed at the gate: nothing reads them after the base was called.
func (w *waited) release() {
	if w.turns != nil {
		w.turns.release()
		w.turns = nil
	}
}

// release gives rt back to the pool. What it still points to stays
// reachable until the pool drops it, at the next garbage collections.
func (rt *requestTurns) release() {
	requestTurnsPool.Put(rt)
}

// add adds a turn: req in scope, claims[claim] (-1 for the domain).
func (rt *requestTurns) add(scope string, req limiter.Request, claim int) {
	rt.turns.Requests = append(rt.turns.Requests, req)
	rt.scopes, rt.claimOf = append(rt.scopes, scope), append(rt.claimOf, claim)
}

// RuleNow implements limiter.RulesNow: the rule in force now for turn i,
// which the departure gate checks it under. A scope no longer in force
// keeps the rule the request claimed it under.
func (rt *requestTurns) RuleNow(i int) *limiter.Rule {
	t := rt.t
	if c := rt.claimOf[i]; c >= 0 {
		claim := rt.claims[c]
		if lim := t.limits.Load().scopeLimit(claim.Scope.Name); lim != nil {
			return &lim.rule
		}
		return claim.Rule
	}
	return &t.currentLimit(rt.d).rule
}
