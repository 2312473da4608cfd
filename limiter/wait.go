package limiter

import (
	"context"
	"fmt"
	"time"

	"github.com/polite-go/polite/internal/maxwait"
)

// Wait reserves r's turn in l, sleeps until it comes and confirms it,
// sleeping again while Confirm moves it (a pause the server asked for
// meanwhile, an earlier request that started late). It fails at once,
// claiming nothing, when the turn would come after ctx's deadline (an
// error wrapping context.DeadlineExceeded) or after r.MaxWait
// (ErrWaitTooLong); the Reservation's Wait then says how long the request
// would have waited. When ctx ends during the wait, the turn is given back
// and ctx.Err() returned. Otherwise the Reservation's Wait is the whole
// time waited.
//
// The caller's request must start as soon as Wait returns: its turn is
// the time Wait returned, and the next turns of the key follow from it.
func Wait(ctx context.Context, l Limiter, r Request) (Reservation, error) {
	if err := ctx.Err(); err != nil {
		return Reservation{}, err
	}
	maxWait, cause := maxwait.Bound(ctx, r.MaxWait, ErrWaitTooLong)
	r.MaxWait = maxWait
	res, err := l.Reserve(ctx, r)
	switch {
	case err != nil:
		return res, err
	case !res.OK:
		return res, maxwait.Exceeded(r.Key, res.Wait, cause)
	case res.Wait == 0:
		return res, nil
	}
	return sleep(ctx, r.Key, res, maxWait, cause)
}

// sleep sleeps through res's wait, confirming the turn when it ends and
// sleeping again while Confirm moves it; see Wait. Only a request that
// waits comes here, so only such a request puts its reservation on the
// heap, as Confirm and Cancel take its address through an interface.
func sleep(ctx context.Context, key string, res Reservation, maxWait time.Duration, cause error) (Reservation, error) {
	wait, waited := res.Wait, time.Duration(0)
	var timer *time.Timer
	for wait > 0 {
		if maxWait > 0 && waited+wait > maxWait {
			res.Wait = waited + wait
			err := giveBack(ctx, &res, maxwait.Exceeded(key, res.Wait, cause))
			return res, err
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
			err := giveBack(ctx, &res, ctx.Err())
			return res, err
		}
		waited += wait
		var err error
		if wait, err = res.Confirm(ctx); err != nil {
			err = giveBack(ctx, &res, err)
			return res, err
		}
	}
	res.Wait = waited
	return res, nil
}

// giveBack cancels res, whose request will not be sent, and returns err.
func giveBack(ctx context.Context, res *Reservation, err error) error {
	if cerr := res.Cancel(context.WithoutCancel(ctx)); cerr != nil {
		return fmt.Errorf("%w (and giving the turn back failed: %v)", err, cerr)
	}
	res.OK = false
	return err
}
