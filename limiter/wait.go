package limiter

import (
	"context"
	"fmt"
	"time"
)

// Wait reserves r's turn in l into res, sleeps until it comes and
// confirms it, sleeping again while Confirm moves it (a pause the server
// asked for meanwhile, an earlier request that started late). It fails at
// once, claiming nothing, when the turn would come after ctx's deadline
// (an error wrapping context.DeadlineExceeded) or after r.MaxWait
// (ErrWaitTooLong); res.Wait then says how long the request would have
// waited. When ctx ends during the wait, the turn is given back and
// ctx.Err() returned. res.Wait is the whole time waited.
//
// The caller's request must start as soon as Wait returns: its turn is
// the time Wait returned, and the next turns of the key follow from it.
func Wait(ctx context.Context, l Limiter, r *Request, res *Reservation) error {
	if err := ctx.Err(); err != nil {
		*res = Reservation{}
		return err
	}
	deadline, hasDeadline := ctx.Deadline()
	req := *r
	cause := ErrWaitTooLong
	if hasDeadline {
		if left := time.Until(deadline); req.MaxWait == 0 || left < req.MaxWait {
			req.MaxWait, cause = max(left, 1), context.DeadlineExceeded
		}
	}
	if err := l.Reserve(ctx, &req, res); err != nil {
		return err
	}
	if !res.OK {
		return fmt.Errorf("limiter: %s: turn in %v: %w", r.Key, res.Wait, cause)
	}
	wait, waited := res.Wait, time.Duration(0)
	var timer *time.Timer
	for wait > 0 {
		if req.MaxWait > 0 && waited+wait > req.MaxWait {
			res.Wait = waited + wait
			err := fmt.Errorf("limiter: %s: turn in %v: %w", r.Key, res.Wait, cause)
			return giveBack(ctx, res, err)
		}
		if timer == nil {
			timer = time.NewTimer(wait)
			defer timer.Stop()
		} else {
			timer.Reset(wait)
		}
		select {
		case <-timer.C:
		case <-ctx.Done():
			return giveBack(ctx, res, ctx.Err())
		}
		waited += wait
		var err error
		if wait, err = res.Confirm(ctx); err != nil {
			return giveBack(ctx, res, err)
		}
	}
	res.Wait = waited
	return nil
}

// giveBack cancels res, whose request will not be sent, and returns err.
func giveBack(ctx context.Context, res *Reservation, err error) error {
	if cerr := res.Cancel(context.WithoutCancel(ctx)); cerr != nil {
		return fmt.Errorf("%w (and giving the turn back failed: %v)", err, cerr)
	}
	res.OK = false
	return err
}
