package redislimiter

import (
	"errors"
	"fmt"
	"time"

	"github.com/polite-go/polite/limiter"
)

var errReply = errors.New("unexpected reply from a script")

// reservation is the reserve script's reply. The script's reasons are
// limiter's, but for "pause", which Limiter.reason names.
type reservation struct {
	ok     bool
	wait   time.Duration
	reason string
	id     uint64 // what the cancel script needs to find the turn again
	start  int64
}

// parseReservation reads the reserve script's reply:
// {ok, wait, reason[, id, start]}, times in microseconds.
func parseReservation(reply any) (reservation, error) {
	v, _ := reply.([]any)
	if len(v) < 3 {
		return reservation{}, fmt.Errorf("%w: %v", errReply, v)
	}
	ok, okErr := replyInt(v, 0)
	wait, waitErr := replyInt(v, 1)
	reason, reasonOK := v[2].(string)
	if err := errors.Join(okErr, waitErr); err != nil || !reasonOK {
		return reservation{}, fmt.Errorf("%w: %v", errReply, v)
	}
	res := reservation{ok: ok == 1, wait: time.Duration(wait) * time.Microsecond, reason: reason}
	if !res.ok {
		return res, nil
	}
	if len(v) < 5 {
		return reservation{}, fmt.Errorf("%w: %v", errReply, v)
	}
	id, idErr := replyInt(v, 3)
	start, startErr := replyInt(v, 4)
	if err := errors.Join(idErr, startErr); err != nil {
		return reservation{}, err
	}
	res.id, res.start = uint64(id), start
	return res, nil
}

// parseState reads the reserve script's report: {wait, reason, paused,
// then remaining and next_free for each of quotas}, times in
// microseconds. Its Reason is the script's, as in reservation.
func parseState(reply any, quotas int) (limiter.State, error) {
	v, _ := reply.([]any)
	if len(v) != 3+2*quotas {
		return limiter.State{}, fmt.Errorf("%w: %v", errReply, v)
	}
	wait, waitErr := replyInt(v, 0)
	reason, reasonOK := v[1].(string)
	paused, pausedErr := replyInt(v, 2)
	if err := errors.Join(waitErr, pausedErr); err != nil || !reasonOK {
		return limiter.State{}, fmt.Errorf("%w: %v", errReply, v)
	}
	st := limiter.State{Wait: time.Duration(wait) * time.Microsecond, Reason: limiter.Reason(reason), Paused: time.Duration(paused) * time.Microsecond}
	for i := range quotas {
		remaining, remErr := replyInt(v, 3+2*i)
		next, nextErr := replyInt(v, 4+2*i)
		if err := errors.Join(remErr, nextErr); err != nil {
			return limiter.State{}, err
		}
		st.Quotas = append(st.Quotas, limiter.QuotaState{Remaining: int(remaining), NextFree: time.Duration(next) * time.Microsecond})
	}
	return st, nil
}

func replyInt(v []any, i int) (int64, error) {
	n, ok := v[i].(int64)
	if !ok {
		return 0, fmt.Errorf("%w: element %d is %T, want an integer", errReply, i, v[i])
	}
	return n, nil
}
