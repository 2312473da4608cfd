package redislimiter

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/polite-go/polite/limiter"
)

// turn is a reservation Redis made: what giving it back or confirming it
// needs. It is the limiter.Turn of the reservations of a Limiter while
// Redis answers; the fallback's reservations have the Memory's.
type turn struct {
	l     *Limiter
	key   string
	rule  *limiter.Rule // the caller's, without the gap this process observed
	id    uint64        // the state's epoch above the reservation's number below
	start int64         // on Redis's clock, in microseconds
	given bool          // given back already: a new turn, or none, replaced it
	// begun is true when the reserve script noted the turn's departure
	// at once (it granted no wait), at granted on this process's clock:
	// Confirm then calls Redis only if the request leaves later than
	// departSlack after it.
	begun   bool
	granted time.Time
}

// departSlack is how much later than its granted start a request whose
// turn came at once may leave without telling Redis: the reserve script
// noted its departure then, and a request that leaves within it costs no
// second round trip. One that leaves later tells Redis when it really
// left (the confirm script), which moves the turns after it.
const departSlack = 2 * time.Millisecond

var _ limiter.Turn = (*turn)(nil)

// Cancel implements limiter.Turn with the cancel script. While Redis does
// not answer, the turn cannot be given back; Cancel then returns nil, or
// an error wrapping ErrUnavailable with WithFailClosed.
func (t *turn) Cancel(ctx context.Context, _ *limiter.Reservation) error {
	l := t.l
	switch {
	case t.given:
		return nil
	case l.downFor(ctx, t.key):
		return l.whileDown(ctx, t.key)
	}
	err := l.cancel(ctx, t)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("redislimiter: %w", ctx.Err())
	}
	l.markDown(ctx, t.key, err)
	return l.whileDown(ctx, t.key)
}

func (l *Limiter) cancel(ctx context.Context, t *turn) error {
	args := cancelArgs(t.rule, t.id, t.start)
	if _, err := l.run(ctx, &l.scripts.cancel, l.keys(t.key), args); err != nil {
		return err
	}
	t.given = true
	return nil
}

// Confirm implements limiter.Turn: one round trip tells Redis
// that the turn starts now, and asks whether a worker paused the key since
// the turn was held. If one did, or the turn starts so late that its
// start would overfill a quota's window, the turn is given back, the first
// one after the turns handed out held into res, and the wait for it
// returned. If an
// earlier request started later than planned, after the turn was granted,
// the turn waits as long as the rules ask after that start, and Confirm
// returns how long. Otherwise Redis records the start, and one later than
// planned (by more than slip) moves the turns held after it, as
// limiter.Memory does. While Redis does not answer, the turn stands
// (WithFailClosed: an error wrapping ErrUnavailable) unless this process knows
// of a pause in force: then the fallback holds the turn after it. When
// a turn Redis granted goes, this process's own pace counts it as going
// now.
//
// Confirm is the departure gate (limiter.Turn): rule, when not nil, is the
// rule in force now, which the turn is checked under. A turn the reserve
// script began at once, whose request leaves within departSlack of it,
// needs no round trip: Confirm returns 0 at once.
func (t *turn) Confirm(ctx context.Context, res *limiter.Reservation, rule *limiter.Rule) (time.Duration, error) {
	if rule != nil {
		t.rule = rule
	}
	if t.begun && t.l.now().Sub(t.granted) <= departSlack {
		return 0, nil
	}
	wait, err := t.confirmOrFallBack(ctx, res)
	if shared := !res.Degraded(); shared && err == nil && wait == 0 && t.l.handoff != nil {
		now := t.l.now()
		t.l.handoff.started(t.key, t.rule, now, now, false)
	}
	return wait, err
}

// confirmOrFallBack is Confirm but for telling the handoff.
func (t *turn) confirmOrFallBack(ctx context.Context, res *limiter.Reservation) (time.Duration, error) {
	l := t.l
	if !l.downFor(ctx, t.key) {
		wait, paused, err := t.confirm(ctx, res)
		if err == nil {
			return wait, nil
		}
		if ctx.Err() != nil {
			return 0, fmt.Errorf("redislimiter: %w", ctx.Err())
		}
		l.markDown(ctx, t.key, err)
		if paused > 0 && l.mode == modeFallback {
			return paused, nil // wait out the pause Redis reported, then go as the fallback says
		}
	}
	switch l.mode {
	case modeFailOpen:
		return 0, nil
	case modeFailClosed:
		return 0, l.unavailable(ctx, t.key)
	}
	r := limiter.Request{Key: t.key, Rule: t.rule}
	if st, err := l.local.State(ctx, r); err != nil || st.Paused <= 0 {
		return 0, err
	}
	l.reserveFallback(&r, res)
	return res.Wait(), nil
}

// confirm is Confirm through Redis, with the confirm script. It returns
// the wait for the turn, or for the new turn held after a pause or in
// place of a start that would overfill a quota's window, and the pause
// Redis reported.
func (t *turn) confirm(ctx context.Context, res *limiter.Reservation) (wait, paused time.Duration, err error) {
	l := t.l
	paced := *t.rule
	// The gap the server asks for now: a Crawl-delay or an adaptive gap
	// observed while the turn waited holds at its start, as in limiter.Memory.
	paced.MinDelay = l.local.StateAt(limiter.Request{Key: t.key, Rule: t.rule}, l.now()).MinDelay
	args := append(ruleArgs(paced, 3), t.id>>32, t.id&math.MaxUint32, t.start)
	v, err := l.run(ctx, &l.scripts.confirm, l.keys(t.key), args)
	if err != nil {
		return 0, 0, err
	}
	again, paused, wait, err := parseConfirm(v)
	if err != nil || !again {
		return wait, 0, err
	}
	if err := l.cancel(ctx, t); err != nil {
		return 0, paused, err
	}
	if err := l.reserveShared(ctx, &limiter.Request{Key: t.key, Rule: t.rule}, res); err != nil {
		return 0, paused, err
	}
	return res.Wait(), paused, nil
}
