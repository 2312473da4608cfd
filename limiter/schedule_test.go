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
				s := fresh()
				now := int64(0)
				var made []*Reservation
				started := map[*Reservation]bool{}
				for range 1 + rng.IntN(12) {
					now += rng.Int64N(int64(400 * ms))
					switch op := rng.IntN(10); {
					case op == 0:
						s.pause(now+rng.Int64N(int64(time.Second)), reasonShared)
					case op == 1 && len(made) > 0:
						// A turn is given back only before its request starts.
						if res := made[rng.IntN(len(made))]; !started[res] {
							s.cancel(res.id, res.at, &rule)
						}
					case op == 2 && len(made) > 0:
						res := made[rng.IntN(len(made))]
						if !started[res] && res.at <= now && s.confirm(now, res, randJitter(rng, rule)) == 0 {
							started[res] = true // late, perhaps
						}
					default:
						res := new(Reservation)
						s.reserve(now, &rule, randJitter(rng, rule), 0, res)
						made = append(made, res)
						started[res] = res.Wait == 0
					}
				}
				quiet := max(s.quietAt, now)
				jitters := make([]time.Duration, 6)
				for i := range jitters {
					jitters[i] = randJitter(rng, rule)
				}
				// What lets reserve skip the rules of a quiet state.
				s.fitWindows(&rule)
				at, why := s.earliest(quiet, &rule, jitters[0])
				require.Equal(t, [2]any{quiet, Reason("")}, [2]any{at, why}, "trial %d: the plan holds back a quiet state", trial)
				require.Equal(t, quiet, s.recorded(quiet, &rule), "trial %d: the record holds back a quiet state", trial)
				require.Equal(t, schedule(fresh(), rule, quiet, jitters), schedule(s, rule, quiet, jitters),
					"trial %d: a state at its quietAt differs from a fresh one", trial)
			}
		})
	}
}

// fresh is a new key state, of generation 1 as Memory would number it.
func fresh() *keyState {
	s := newKeyState()
	s.gen = 1
	return s
}

func randJitter(rng *rand.Rand, rule Rule) time.Duration {
	if rule.Jitter <= 0 {
		return 0
	}
	return time.Duration(rng.Int64N(int64(rule.Jitter)))
}

// schedule describes the state and the starts a few requests get from now
// on, each 100ms after the one before.
func schedule(s *keyState, rule Rule, now int64, jitters []time.Duration) []string {
	var out []string
	for i, j := range jitters {
		at := now + int64(i)*int64(100*time.Millisecond)
		st := s.state(at, &rule, time.Unix(0, at))
		var res Reservation
		s.reserve(at, &rule, j, 0, &res)
		out = append(out, fmt.Sprintf("%+v %d %s", st, res.Wait, res.Reason))
	}
	return out
}

// TestInStepStartIsTheRecords checks the shortcut reserve takes while the
// record is the plan, or the state is quiet: a turn at once is one the
// record allows, and recording it gives what record would, as late
// starts, pauses and cancels come and go.
func TestInStepStartIsTheRecords(t *testing.T) {
	ms := time.Millisecond
	rules := []Rule{
		{Rate: 3, Burst: 2},
		{MinDelay: 100 * ms, Jitter: 80 * ms},
		{Rate: 2, Burst: 3, MinDelay: 300 * ms, Jitter: 50 * ms},
		{Rate: 10, Burst: 4, Quotas: []config.Quota{{Requests: 2, Window: 300 * ms}}},
	}
	rng := rand.New(rand.NewPCG(3, 5))
	for _, rule := range rules {
		t.Run(fmt.Sprintf("%+v", rule), func(t *testing.T) {
			shortcuts := 0
			for range 200 {
				s := fresh()
				now := int64(0)
				var waiting []*Reservation
				for range 20 {
					now += rng.Int64N(int64(400 * ms))
					switch op := rng.IntN(6); {
					case op == 0:
						s.pause(now+rng.Int64N(int64(time.Second)), reasonShared)
					case op == 1 && len(waiting) > 0:
						s.cancel(waiting[0].id, waiting[0].at, &rule)
						waiting = waiting[1:]
					case op == 2 && len(waiting) > 0 && waiting[0].at <= now:
						if s.confirm(now, waiting[0], randJitter(rng, rule)) == 0 {
							waiting = waiting[1:] // late, perhaps
						}
					default:
						inStep, before := s.inStep() || now >= s.quietAt, *s
						res := new(Reservation)
						s.reserve(now, &rule, randJitter(rng, rule), 0, res)
						if res.Wait > 0 {
							waiting = append(waiting, res)
							continue
						}
						if !inStep {
							continue
						}
						shortcuts++
						require.Equal(t, now, before.recorded(now, &rule), "the record holds back a turn the plan gives at once")
						before.record(now, &rule)
						require.Equal(t, [4]any{before.sent, before.hasSent, before.sentBucket, before.records},
							[4]any{s.sent, s.hasSent, s.sentBucket, s.records})
						require.GreaterOrEqual(t, s.quietAt, before.quietAt)
					}
				}
			}
			require.Positive(t, shortcuts)
		})
	}
}
