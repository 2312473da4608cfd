package limiter_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
)

// TestGeneratedRunsKeepEveryRule drives a Memory as callers do, at random
// (reservations, wake-ups on time or late, each start through the
// departure gate, cancels, pauses), and checks
// the starts that went against every rule: the gap, the bucket and each
// quota's window.
func TestGeneratedRunsKeepEveryRule(t *testing.T) {
	rules := []limiter.Rule{
		{Rate: 4, Burst: 1},
		{Rate: 3, Burst: 3},
		{MinDelay: ms(250)},
		{Rate: 7.3, Burst: 5, MinDelay: ms(50), Jitter: ms(80)},
		{Rate: 10, Burst: 2, MinDelay: ms(100), Quotas: []config.Quota{{Requests: 3, Window: time.Second}}},
		{Quotas: []config.Quota{{Requests: 2, Window: ms(500)}, {Requests: 5, Window: 3 * time.Second}}},
	}
	rng := rand.New(rand.NewPCG(30, 23))
	for _, rule := range rules {
		t.Run(fmt.Sprintf("%+v", rule), func(t *testing.T) {
			for trial := range 300 {
				starts := generatedRun(t, rng, rule)
				checkStarts(t, rule, starts, fmt.Sprintf("trial %d", trial))
			}
		})
	}
}

// generatedRun makes random calls on one key under rule and returns the
// starts that went.
func generatedRun(t *testing.T, rng *rand.Rand, rule limiter.Rule) []time.Duration {
	c := newClock()
	m := limiter.NewMemory()
	r := limiter.Request{Key: "a.com", Rule: &rule}
	type waiting struct {
		res limiter.Reservation
		at  time.Duration // when its caller wakes
	}
	var queue []*waiting
	var starts []time.Duration
	now := time.Duration(0)
	for range 40 {
		now += time.Duration(rng.Int64N(int64(ms(300))))
		switch op := rng.IntN(10); {
		case op < 4:
			res, at := c.reserveAt(m, r, now)
			if res.Wait() == 0 && limiter.ConfirmAt(&res, c.at(now)) == 0 {
				starts = append(starts, now)
			} else {
				queue = append(queue, &waiting{res: res, at: at + time.Duration(rng.Int64N(int64(ms(200))))})
			}
		case op < 5 && len(queue) > 0:
			i := rng.IntN(len(queue))
			require.NoError(t, queue[i].res.Cancel(context.Background()))
			queue = slices.Delete(queue, i, i+1)
		case op < 6:
			m.ObserveAt(r, limiter.Observation{Status: 429, RetryAfter: time.Duration(rng.Int64N(int64(time.Second))),
				Sent: c.at(now)}, c.at(now))
		default:
			for i := 0; i < len(queue); i++ {
				w := queue[i]
				if w.at > now {
					continue
				}
				if more := limiter.ConfirmAt(&w.res, c.at(now)); more > 0 {
					w.at = now + more
					continue
				}
				starts = append(starts, now)
				queue = slices.Delete(queue, i, i+1)
				i--
			}
		}
	}
	return starts
}

// checkStarts fails the test where starts break a rule.
func checkStarts(t *testing.T, rule limiter.Rule, starts []time.Duration, where string) {
	t.Helper()
	for i := 1; i < len(starts); i++ {
		require.GreaterOrEqual(t, starts[i]-starts[i-1], rule.MinDelay, "%s: gap before start %d of %v", where, i, starts)
	}
	for i := range starts {
		for j := i; j < len(starts); j++ {
			if rule.Rate > 0 {
				allowed := float64(rule.Burst) + rule.Rate*(starts[j]-starts[i]).Seconds() + 1e-6
				require.LessOrEqual(t, float64(j-i+1), allowed, "%s: bucket from start %d to %d of %v", where, i, j, starts)
			}
			for _, q := range rule.Quotas {
				if starts[j]-starts[i] < q.Window {
					require.LessOrEqual(t, j-i+1, q.Requests, "%s: quota %v from start %d of %v", where, q, i, starts)
				}
			}
		}
	}
}
