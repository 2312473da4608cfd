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
// ctx.Err() returned. res.Wait is the whole time waited. While Wait
// reserves, r.MaxWait holds what ctx's deadline leaves, if that is less:
// r must not be shared with another goroutine meanwhile.
//
// The caller's request must start as soon as Wait returns: its turn is
// the time Wait returned, and the next turns of the key follow from it.
func Wait(ctx context.Context, l Limiter, r *Request, res *Reservation) error {
	if err := ctx.Err(); err != nil {
		*res = Reservation{}
		return err
	}
	cause, maxWait := ErrWaitTooLong, r.MaxWait
	if deadline, ok := ctx.Deadline(); ok {
		if left := time.Until(deadline); maxWait == 0 || left < maxWait {
			maxWait, cause = max(left, 1), context.DeadlineExceeded
		}
	}
	// r is not copied: through the Limiter interface, a copy would cost an
	// allocation on every call.
	r.MaxWait, maxWait = maxWait, r.MaxWait
	err := l.Reserve(ctx, r, res)
	r.MaxWait, maxWait = maxWait, r.MaxWait
	if err != nil {
		return err
	}
	if !res.OK {
		return fmt.Errorf("limiter: %s: turn in %v: %w", r.Key, res.Wait, cause)
	}
	if res.Wait == 0 {
		return nil
	}
	return sleep(ctx, r.Key, res, maxWait, cause)
}

// sleep sleeps through res's wait, confirming the turn when it ends and
// sleeping again while Confirm moves it; see Wait.
func sleep(ctx context.Context, key string, res *Reservation, maxWait time.Duration, cause error) error {
	wait, waited := res.Wait, time.Duration(0)
	var timer *time.Timer
	for wait > 0 {
		if maxWait > 0 && waited+wait > maxWait {
			res.Wait = waited + wait
			err := fmt.Errorf("limiter: %s: turn in %v: %w", key, res.Wait, cause)
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
