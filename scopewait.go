package polite

import (
	"context"
	"time"

	"github.com/polite-go/polite/internal/maxwait"
	"github.com/polite-go/polite/internal/ticket"
	"github.com/polite-go/polite/limiter"
)

// scopeTurn is a request's turn, or its want of one, in one scope.
type scopeTurn struct {
	scope   string // scopeDomain, scopeServer or scopeGlobal
	req     limiter.Request
	res     limiter.Reservation
	held    bool      // res holds a turn
	due     time.Time // when res's turn comes
	confirm bool      // res's turn was to come later than it was claimed: Confirm it when it does
}

// turnSlack is how far apart two scopes' turns may be and still be taken
// as one: a request holds a turn in one scope at most that long while it
// waits for another.
const turnSlack = time.Millisecond

// waited is how a request's wait through its scopes went.
type waited struct {
	sent     time.Time
	wait     time.Duration
	scope    string         // the scope whose turn came last; empty if none made it wait
	reason   limiter.Reason // the rule that made it wait there
	degraded bool
}

// waitTurns waits for a request's turn in every scope of turns, as
// limiter.Wait does for one: it fails at once, claiming nothing, when a
// turn would come after ctx's deadline or WithMaxWait, and gives back
// every turn it holds when ctx ends. It holds a turn in one scope while it
// waits for another only as long as that one's rules require: it claims
// the turns one by one, starting with the scope that last made a request
// wait; when one comes later than turnSlack from now, it gives back those
// it holds, waits for that one alone and confirms it, then claims the
// others again. Once the request holds the turn it waits for, it tells
// tk.
func (t *Transport) waitTurns(ctx context.Context, turns []scopeTurn, tk *ticket.Ticket) (w waited, err error) {
	if err := ctx.Err(); err != nil {
		return w, err
	}
	start := time.Now()
	maxWait, cause := maxwait.Bound(ctx, t.maxWait, limiter.ErrWaitTooLong)
	defer func() {
		if err != nil {
			giveBackTurns(ctx, turns, -1)
		}
	}()
	t.scopes.order(turns)
	var timer *time.Timer
	for {
		now := time.Now()
		for i := range turns {
			if turns[i].held {
				continue
			}
			if err := t.claimTurn(ctx, &turns[i], now, start, maxWait, cause); err != nil {
				return w, err
			}
			if turns[i].due.Sub(now) > turnSlack {
				if err := giveBackTurns(ctx, turns, i); err != nil {
					return w, err
				}
				t.scopes.waitedFor(turns[i].scope)
				break
			}
		}
		last := latestTurn(turns)
		if late := turns[last].due.Sub(start); maxWait > 0 && late > maxWait {
			// Confirm moved a turn past maxWait: fail now, as limiter.Wait does.
			return w, &turnError{wait: late, err: maxwait.Exceeded(turns[last].req.Key, time.Until(turns[last].due), cause)}
		}
		tk.Claimed()
		if d := time.Until(turns[last].due); d > 0 {
			if timer == nil {
				timer = time.NewTimer(d)
				defer timer.Stop()
			} else {
				timer.Reset(d)
			}
			select {
			case <-timer.C:
			case <-ctx.Done():
				return w, ctx.Err()
			}
			w.scope, w.reason = turns[last].scope, turns[last].res.Reason
		}
		moved, err := confirmTurns(ctx, turns)
		if err != nil {
			return w, err
		}
		if moved || !allHeld(turns) {
			continue
		}
		w.sent = time.Now()
		if w.scope != "" {
			w.wait = w.sent.Sub(start)
		}
		for i := range turns {
			w.degraded = w.degraded || turns[i].res.Degraded
		}
		return w, nil
	}
}

func allHeld(turns []scopeTurn) bool {
	for i := range turns {
		if !turns[i].held {
			return false
		}
	}
	return true
}

// claimTurn claims tu's turn at now, within what is left of maxWait
// since start.
func (t *Transport) claimTurn(ctx context.Context, tu *scopeTurn, now, start time.Time, maxWait time.Duration, cause error) error {
	r := tu.req
	if maxWait > 0 {
		r.MaxWait = max(maxWait-now.Sub(start), 1)
	}
	res, err := t.limiter.Reserve(ctx, r)
	if err != nil {
		return err
	}
	if !res.OK {
		return &turnError{wait: now.Sub(start) + res.Wait, err: maxwait.Exceeded(r.Key, res.Wait, cause)}
	}
	tu.res, tu.held, tu.due, tu.confirm = res, true, now.Add(res.Wait), res.Wait > 0
	return nil
}

// confirmTurns confirms the turns that were to come later than they were
// claimed, now that they have come, and reports whether any moved.
func confirmTurns(ctx context.Context, turns []scopeTurn) (moved bool, err error) {
	for i := range turns {
		tu := &turns[i]
		if !tu.confirm {
			continue
		}
		now := time.Now()
		more, err := tu.res.Confirm(ctx)
		if err != nil {
			return false, err
		}
		if more > 0 {
			tu.due, moved = now.Add(more), true
			continue
		}
		tu.confirm = false
	}
	return moved, nil
}

// latestTurn returns the index of the turn that comes last.
func latestTurn(turns []scopeTurn) int {
	last := 0
	for i := range turns {
		if turns[i].due.After(turns[last].due) {
			last = i
		}
	}
	return last
}

// giveBackTurns gives back every turn held but turns[keep] (none if keep
// is -1).
func giveBackTurns(ctx context.Context, turns []scopeTurn, keep int) error {
	var first error
	for i := range turns {
		if i != keep && turns[i].held {
			if err := turns[i].res.Cancel(context.WithoutCancel(ctx)); err != nil && first == nil {
				first = err
			}
			turns[i].held = false
		}
	}
	return first
}

// turnError is a turn that would come too late: after wait.
type turnError struct {
	wait time.Duration
	err  error
}

func (e *turnError) Error() string { return e.err.Error() }
func (e *turnError) Unwrap() error { return e.err }
