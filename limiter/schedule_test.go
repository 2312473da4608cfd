package limiter

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
)

// TestQuietStateIsFresh checks the claim that eviction rests on: from
// quietAt on, a key's state schedules exactly as a fresh one does, so
// dropping it loses nothing.
func TestQuietStateIsFresh(t *testing.T) {
	ms := time.Millisecond
	rules := []Rule{
		{Rate: 1, Burst: 1},
		{Rate: 3, Burst: 2},
		{Rate: 7.3, Burst: 5},
		{Rate: 1e-3, Burst: 1},
		{MinDelay: 250 * ms},
		{MinDelay: 100 * ms, Jitter: 80 * ms},
		{Rate: 2, Burst: 3, MinDelay: 300 * ms, Jitter: 50 * ms},
		{Quotas: []config.Quota{{Requests: 3, Window: time.Second}}},
		{Rate: 10, Burst: 4, Quotas: []config.Quota{{Requests: 2, Window: 300 * ms}, {Requests: 5, Window: 2 * time.Second}}},
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for _, rule := range rules {
		t.Run(fmt.Sprintf("%+v", rule), func(t *testing.T) {
			for trial := range 200 {
				s := newKeyState()
				now := int64(0)
				var made []*Reservation
				started := map[*Reservation]bool{}
				for range 1 + rng.IntN(12) {
					now += rng.Int64N(int64(400 * ms))
					switch op := rng.IntN(10); {
					case op == 0:
						s.pause(now+rng.Int64N(int64(time.Second)), ReasonShared)
					case op == 1 && len(made) > 0:
						// A turn is given back only before its request starts.
						if res := made[rng.IntN(len(made))]; !started[res] {
							s.cancel(res.id, res.at, &rule)
						}
					case op == 2 && len(made) > 0:
						res := made[rng.IntN(len(made))]
						if !started[res] && res.at <= now && s.confirm(now, res, &rule, drawJitter(rng, rule)) == 0 {
							started[res] = true // late, perhaps
						}
					default:
						res := new(Reservation)
						s.reserve(now, &rule, drawJitter(rng, rule), 0, res)
						made = append(made, res)
						started[res] = res.Wait() == 0 && s.confirm(now, res, &rule, drawJitter(rng, rule)) == 0
					}
				}
				quiet := max(s.quiet(&rule, s.minDelay(&rule)), now)
				jitters := make([]time.Duration, 6)
				for i := range jitters {
					jitters[i] = drawJitter(rng, rule)
				}
				s.fit(quiet, &rule)
				at, why := s.earliest(quiet, &rule, s.minDelay(&rule), jitters[0])
				require.Equal(t, [2]any{quiet, Reason("")}, [2]any{at, why}, "trial %d: the plan holds back a quiet state", trial)
				require.Equal(t, quiet, s.allowed(quiet, &rule, s.minDelay(&rule).d), "trial %d: the sent schedule holds back a quiet state", trial)
				require.Equal(t, describe(newKeyState(), rule, quiet, jitters), describe(s, rule, quiet, jitters),
					"trial %d: a state at its quietAt differs from a fresh one", trial)
			}
		})
	}
}

func drawJitter(rng *rand.Rand, rule Rule) time.Duration {
	if rule.Jitter <= 0 {
		return 0
	}
	return time.Duration(rng.Int64N(int64(rule.Jitter)))
}

// describe describes the state and the starts a few requests get from now
// on, each 100ms after the one before.
func describe(s *keyState, rule Rule, now int64, jitters []time.Duration) []string {
	var out []string
	for i, j := range jitters {
		at := now + int64(i)*int64(100*time.Millisecond)
		st := s.state(at, &rule, time.Unix(0, at))
		var res Reservation
		s.reserve(at, &rule, j, 0, &res)
		out = append(out, fmt.Sprintf("%+v %d %s", st, res.Wait(), res.Reason()))
	}
	return out
}

// TestTurnsStayFewWithoutConfirms checks that a caller who never confirms
// its turns (it sleeps through each wait and goes) leaves the state with
// no more turns than wait ahead.
func TestTurnsStayFewWithoutConfirms(t *testing.T) {
	rule := Rule{Rate: 10, Burst: 1}
	s := newKeyState()
	for i := range 1000 {
		now := int64(i) * int64(50*time.Millisecond) // twice the rate: the queue grows
		var res Reservation
		s.reserve(now, &rule, 0, 0, &res)
		waiting := int64(0)
		for _, tr := range s.turns {
			if tr.at > now {
				waiting++
			}
		}
		require.LessOrEqual(t, len(s.turns), int(waiting)+1, "reservation %d", i)
	}
}

// TestTurnsForgetTheirWakers checks that a key's turns keep the waker of
// a request only while it waits: once the request left, or gave its turn
// back, no place of the key's list, used or not, still points to it, so
// that a key does not keep the memory of requests long gone.
func TestTurnsForgetTheirWakers(t *testing.T) {
	rule := Rule{Rate: 10, Burst: 1}
	gap := int64(100 * time.Millisecond)
	s := newKeyState()
	var first Reservation
	s.reserve(0, &rule, 0, 0, &first) // leaves at once
	wakers := make([]waker, 5)
	res := make([]Reservation, len(wakers))
	for i := range wakers {
		wakers[i].timer.Store(time.NewTimer(time.Hour))
		s.reserve(0, &rule, 0, 0, &res[i])
		s.giveWaker(res[i].id, 0, 0, &wakers[i])
	}
	holds := func(w *waker) bool {
		for _, tr := range s.turns[:cap(s.turns)] {
			if tr.wake == w {
				return true
			}
		}
		return false
	}
	for i := range wakers {
		require.True(t, holds(&wakers[i]), "waiting request %d", i)
	}
	now := int64(0)
	for i := range 3 { // the first three leave in turn, late
		now = res[i].at + gap/2
		require.Zero(t, s.confirm(now, &res[i], &rule, 0))
		require.False(t, holds(&wakers[i]), "request %d left", i)
	}
	s.cancel(res[4].id, res[4].at, &rule) // the last gives its turn back
	require.False(t, holds(&wakers[4]), "request 4 gave its turn back")
	require.True(t, holds(&wakers[3]), "request 3 still waits")
	require.Zero(t, s.confirm(now+gap, &res[3], &rule, 0))
	for i := range wakers {
		require.False(t, holds(&wakers[i]), "request %d", i)
	}
}
