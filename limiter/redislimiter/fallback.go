package redislimiter

import (
	"context"
	"time"

	"github.com/polite-go/polite/limiter"
)

// reserveFallback is Reserve through this process's limiter.Memory, in
// the default mode: seeded first with the turns Redis granted this
// process, it counts each start it grants into this process's own pace,
// with the gap this process observed, as reserveShared does, and counts it
// again where it goes when its turn is confirmed. The reservation is made
// at the time of the call, after the attempt through Redis.
func (l *Limiter) reserveFallback(r *limiter.Request, res *limiter.Reservation) {
	now := time.Now()
	paced := *r.EffectiveRule()
	paced.MinDelay = l.local.StateAt(*r, now).MinDelay
	l.handoff.seedFallback(l.local, r.Key, &paced, now)
	local := l.local.ReserveAt(*r, now)
	if !local.OK() {
		*res = limiter.Degrade(local)
		return
	}
	planned := now.Add(local.Wait())
	l.handoff.note(r.Key, &paced, planned, true)
	ft := &fallbackTurn{local: local, h: l.handoff, key: r.Key, rule: paced, planned: planned}
	*res = ft.reservation()
}

// fallbackTurn is the limiter.Turn of the fallback's reservations: it
// gives back and confirms the limiter.Memory's reservation, local, and
// tells the handoff when its start goes.
type fallbackTurn struct {
	local   limiter.Reservation
	h       *handoff
	key     string
	rule    limiter.Rule // with the gap this process observed
	planned time.Time    // the start granted, as counted
}

// reservation returns the fallback's reservation of local's turn.
func (t *fallbackTurn) reservation() limiter.Reservation {
	return limiter.Degrade(limiter.Granted(t.local.Wait(), t.local.Reason(), t.local.Start(), t))
}

// Cancel implements limiter.Turn: the Memory's Cancel.
func (t *fallbackTurn) Cancel(ctx context.Context, _ *limiter.Reservation) error {
	return t.local.Cancel(ctx)
}

// Confirm implements limiter.Turn: the Memory's Confirm, and
// when it lets the start go, the handoff counts it as going now.
func (t *fallbackTurn) Confirm(ctx context.Context, res *limiter.Reservation, rule *limiter.Rule) (time.Duration, error) {
	wait, err := t.local.Confirm(ctx, rule)
	if err == nil && wait == 0 {
		t.h.started(t.key, &t.rule, t.planned, time.Now(), true)
	}
	if wait > 0 {
		*res = t.reservation() // the turn the Memory's Confirm moved it to
	}
	return wait, err
}
