package redislimiter

import (
	"context"
	"time"

	"github.com/polite-go/polite/limiter"
)

// reserveFallback is Reserve through this process's limiter.Memory, in
// the default mode: seeded first with the turns Redis granted this
// process, it counts each start it grants into this process's own pace,
// with the gap this process learned, as reserveShared does, and counts it
// again where it goes when its turn is confirmed. The reservation is made
// at the time of the call, after the attempt through Redis.
func (l *Limiter) reserveFallback(r *limiter.Request, res *limiter.Reservation) {
	now := time.Now()
	paced := *r.EffectiveRule()
	paced.MinDelay = l.local.StateAt(*r, now).MinDelay
	l.handoff.seedFallback(l.local, r.Key, &paced, now)
	*res = l.local.ReserveAt(*r, now)
	res.Degraded = true
	if res.OK {
		planned := now.Add(res.Wait)
		l.handoff.note(r.Key, &paced, planned, true)
		res.Turn = &fallbackTurn{Turn: res.Turn, h: l.handoff, key: r.Key, rule: paced, planned: planned}
	}
}

// fallbackTurn is the limiter.Turn of the fallback's reservations: the
// limiter.Memory's, which also tells the handoff when its start goes.
type fallbackTurn struct {
	limiter.Turn
	h       *handoff
	key     string
	rule    limiter.Rule // with the gap this process learned
	planned time.Time    // the start granted, as counted
}

// Confirm implements limiter.Turn: the Memory's Confirm, and
// when it lets the start go, the handoff learns that it goes now.
func (t *fallbackTurn) Confirm(ctx context.Context, res *limiter.Reservation, rule *limiter.Rule) (time.Duration, error) {
	wait, err := t.Turn.Confirm(ctx, res, rule)
	if err == nil && wait == 0 {
		t.h.started(t.key, &t.rule, t.planned, time.Now(), true)
	}
	return wait, err
}
