package limiter

import (
	"context"
	"fmt"
	"time"
)

// ReserveAtOnce is WaitTurns's first steps for a request with one turn,
// for a caller that keeps res on its stack: it reserves r's turn in l
// into *res and, when the turn comes at once, passes the departure gate
// (Turn.Confirm under the rule r gives), reporting true: the request
// must then leave, Late being its last check. Otherwise it reports false,
// holding in *res the turn to wait for (which the gate may have moved),
// for the caller to hand to WaitTurns (see Turns.Reserved), or a refusal
// (res.OK() is false; nothing is held). On an error nothing is held.
//
// A departure l noted as it reserved the turn (as Memory does) needs no
// Confirm now, its turn having come at once: Late, the request's last
// check, tells whether it is still fresh. ReserveAtOnce then reads no
// clock of its own and puts nothing on the heap.
func ReserveAtOnce(ctx context.Context, l Limiter, r Request, res *Reservation) (bool, error) {
	got, err := l.Reserve(ctx, r)
	if err != nil {
		return false, err
	}
	*res = got
	if !got.ok || got.wait > 0 {
		return false, nil
	}
	more, err := confirmAtOnce(ctx, res)
	if err != nil {
		return false, err
	}
	if more > 0 {
		return false, nil
	}
	if res.start.IsZero() {
		res.start = time.Now()
	}
	return true, nil
}

// confirmAtOnce is res.Confirm for a turn granted at once, under the rule
// it was reserved with. A departure its Limiter noted as it reserved the
// turn needs no more (Late checks it); otherwise it confirms a copy of res
// on the heap, so that res, which the Limiter's Turn may keep, stays on
// its caller's stack. On an error it gives the turn back.
func confirmAtOnce(ctx context.Context, res *Reservation) (time.Duration, error) {
	if res.begun {
		return 0, nil
	}
	c := new(Reservation)
	*c = *res
	more, err := c.Confirm(ctx, nil)
	*res = *c
	if err != nil {
		if cerr := c.Cancel(context.WithoutCancel(ctx)); cerr != nil {
			return 0, fmt.Errorf("%w (and limiter: giving the turn back: %v)", err, cerr)
		}
	}
	return more, err
}

// Late reports whether a request that ReserveAtOnce let go with r
// reaches it more than 10 ms after the departure noted for it (its
// goroutine was held up after the gate): it must then pass the gate
// again, with Leave, r being a Turns' one Reservation. Called as the very
// last step before the request is sent, it reads the clock's monotonic
// reading only.
func (r *Reservation) Late() bool {
	return r.ok && time.Since(r.start) > departSlack
}
