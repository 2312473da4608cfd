package redislimiter

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
)

var errReply = errors.New("unexpected reply from a script")

// reservation is the reserve script's reply. The script's reasons are
// limiter's, but for "pause", which Limiter.reason names.
type reservation struct {
	ok     bool
	wait   time.Duration
	reason string
	id     uint64 // the state's epoch above the reservation's number below, as cancelArgs reads it
	start  int64  // on Redis's clock, in microseconds
}

// parseReservation reads the reserve script's reply:
// {ok, wait, reason[, serial, start, epoch]}, times in microseconds.
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
	res := reservation{ok: ok == 1, wait: fromMicros(wait), reason: reason}
	if !res.ok {
		return res, nil
	}
	if len(v) < 6 {
		return reservation{}, fmt.Errorf("%w: %v", errReply, v)
	}
	serial, serialErr := replyInt(v, 3)
	start, startErr := replyInt(v, 4)
	epoch, epochErr := replyInt(v, 5)
	if err := errors.Join(serialErr, startErr, epochErr); err != nil {
		return reservation{}, err
	}
	res.id, res.start = uint64(epoch)<<32|uint64(serial)&math.MaxUint32, start
	return res, nil
}

// cancelArgs returns the cancel script's arguments for the reservation id
// that starts at start, made under rule: the rule, then id's epoch and
// number, and the start.
func cancelArgs(rule *limiter.Rule, id uint64, start int64) []any {
	return append(ruleArgs(*rule, 3), id>>32, id&math.MaxUint32, start)
}

// parseConfirm reads the confirm script's reply: {paused, wait, again},
// times in microseconds; again is 1 when the turn is to be held anew.
func parseConfirm(reply any) (again bool, paused, wait time.Duration, err error) {
	v, _ := reply.([]any)
	if len(v) != 3 {
		return false, 0, 0, fmt.Errorf("%w: %v", errReply, v)
	}
	p, pErr := replyInt(v, 0)
	w, wErr := replyInt(v, 1)
	a, aErr := replyInt(v, 2)
	if err := errors.Join(pErr, wErr, aErr); err != nil {
		return false, 0, 0, err
	}
	return a == 1, fromMicros(p), fromMicros(w), nil
}

// parseState reads the reserve script's report: {wait, reason, paused,
// then remaining and next_free for each of quotas}, times in
// microseconds. Its Reason is the script's, as in reservation.
func parseState(reply any, quotas []config.Quota) (limiter.State, error) {
	now := time.Now()
	v, _ := reply.([]any)
	if len(v) != 3+2*len(quotas) {
		return limiter.State{}, fmt.Errorf("%w: %v", errReply, v)
	}
	wait, waitErr := replyInt(v, 0)
	reason, reasonOK := v[1].(string)
	paused, pausedErr := replyInt(v, 2)
	if err := errors.Join(waitErr, pausedErr); err != nil || !reasonOK {
		return limiter.State{}, fmt.Errorf("%w: %v", errReply, v)
	}
	st := limiter.State{Wait: fromMicros(wait), Reason: limiter.Reason(reason), Paused: fromMicros(paused)}
	for i, q := range quotas {
		remaining, remErr := replyInt(v, 3+2*i)
		next, nextErr := replyInt(v, 4+2*i)
		if err := errors.Join(remErr, nextErr); err != nil {
			return limiter.State{}, err
		}
		qs := limiter.QuotaState{Limit: q.Requests, Window: q.Window, Remaining: int(remaining)}
		if next > 0 {
			qs.NextFree = now.Add(fromMicros(next))
		}
		st.Quotas = append(st.Quotas, qs)
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

// fromMicros is a duration the scripts reply in microseconds, never
// negative, and saturated rather than wrapped where it would overflow.
func fromMicros(us int64) time.Duration {
	switch {
	case us <= 0:
		return 0
	case us > math.MaxInt64/int64(time.Microsecond):
		return math.MaxInt64
	}
	return time.Duration(us) * time.Microsecond
}
