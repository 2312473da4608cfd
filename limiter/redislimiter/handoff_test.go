package redislimiter

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// TestFallbackStartsFromTheTurnsHeld checks the handoff on explicit times:
// after the starts Redis granted this process, a seeded fallback grants
// its next starts only where this process's own pace allows them; after
// the fallback's starts, Redis is asked for none sooner.
func TestFallbackStartsFromTheTurnsHeld(t *testing.T) {
	ms := time.Millisecond
	t0 := time.Now()
	tests := []struct {
		name    string
		rule    limiter.Rule
		granted []time.Duration // starts Redis granted, from t0
		askAt   time.Duration   // when the fallback is first asked
		want    []time.Duration // the fallback's next starts, from t0
	}{
		{"nothing held: a fresh bucket", limiter.Rule{Rate: 5, Burst: 1}, nil, 0, []time.Duration{0, 200 * ms, 400 * ms}},
		{"burst 1: after the latest held turn", limiter.Rule{Rate: 5, Burst: 1},
			[]time.Duration{0, 200 * ms, 1400 * ms}, 10 * ms, []time.Duration{1600 * ms, 1800 * ms}},
		{"burst 3 spent at once", limiter.Rule{Rate: 10, Burst: 3},
			[]time.Duration{0, 0, 0}, 10 * ms, []time.Duration{100 * ms, 200 * ms, 300 * ms}},
		{"burst 3, two tokens left", limiter.Rule{Rate: 10, Burst: 3},
			[]time.Duration{0, 500 * ms}, 510 * ms, []time.Duration{510 * ms, 510 * ms, 600 * ms}},
		{"min delay from the latest", limiter.Rule{MinDelay: 300 * ms},
			[]time.Duration{0, 300 * ms}, 310 * ms, []time.Duration{600 * ms, 900 * ms}},
		{"long over: a fresh bucket", limiter.Rule{Rate: 5, Burst: 1},
			[]time.Duration{0}, 5 * time.Second, []time.Duration{5 * time.Second, 5200 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, m := newHandoff(), limiter.NewMemory()
			key := "handoff.example"
			for _, d := range tt.granted {
				h.note(key, &tt.rule, t0.Add(d), false)
			}
			now := t0.Add(tt.askAt)
			var got []time.Duration
			for range tt.want {
				h.seedFallback(m, key, &tt.rule, now)
				res := m.ReserveAt(limiter.Request{Key: key, Rule: &tt.rule}, now)
				require.True(t, res.OK())
				start := now.Add(res.Wait())
				h.note(key, &tt.rule, start, true)
				got = append(got, start.Sub(t0))
			}
			assert.Equal(t, tt.want, got)

			// Back to Redis: nothing before the fallback's pace allows.
			last := got[len(got)-1]
			for _, at := range []time.Duration{last - 50*ms, last} {
				nb := h.notBefore(key, &tt.rule, t0.Add(at))
				next := at + nb
				assert.GreaterOrEqual(t, next-last, tt.rule.MinDelay, "at %v", at)
				if tt.rule.Rate > 0 && tt.rule.Burst == 1 {
					assert.Equal(t, last+time.Duration(float64(time.Second)/tt.rule.Rate), next, "at %v", at)
				}
			}
			assert.Zero(t, h.notBefore(key, &tt.rule, t0.Add(last+10*time.Second)), "over once the pace allows a start")
			assert.Zero(t, h.fellBack.Load(), "and forgotten")
		})
	}
}

// TestHandoffFollowsLateStarts checks on explicit times that a start
// going later than counted moves what comes after it: the wait through
// Redis after the fallback's turns, and the fallback's seed after Redis's.
func TestHandoffFollowsLateStarts(t *testing.T) {
	ms := time.Millisecond
	t0 := time.Now()
	rule := &limiter.Rule{Rate: 5, Burst: 1}
	const key = "late.example"

	t.Run("the fallback's waiting turns", func(t *testing.T) {
		h := newHandoff()
		for _, d := range []time.Duration{0, 200 * ms, 400 * ms, 600 * ms} {
			h.note(key, rule, t0.Add(d), true)
		}
		assert.Equal(t, 800*ms, h.notBefore(key, rule, t0), "the turns as planned")
		h.started(key, rule, t0, t0.Add(30*ms), true)
		assert.Equal(t, 830*ms, h.notBefore(key, rule, t0), "the latest turn as late as the first went")
		h.started(key, rule, t0.Add(200*ms), t0.Add(210*ms), true)
		assert.Equal(t, 810*ms, h.notBefore(key, rule, t0), "as late as the latest start that went")
		h.started(key, rule, t0.Add(600*ms), t0.Add(650*ms), true)
		assert.Equal(t, 850*ms, h.notBefore(key, rule, t0), "the latest itself went")
		assert.Zero(t, h.notBefore(key, rule, t0.Add(850*ms)))
	})
	t.Run("a turn Redis granted", func(t *testing.T) {
		h, m := newHandoff(), limiter.NewMemory()
		h.note(key, rule, t0, false)
		h.note(key, rule, t0.Add(200*ms), false)
		h.started(key, rule, t0.Add(200*ms), t0.Add(260*ms), false)
		now := t0.Add(270 * ms)
		h.seedFallback(m, key, rule, now)
		res := m.ReserveAt(limiter.Request{Key: key, Rule: rule}, now)
		assert.Equal(t, 190*ms, res.Wait(), "the fallback starts a gap after the start that went late")
		h.started(key, rule, t0, t0.Add(time.Hour), false)
		assert.Zero(t, h.notBefore(key, rule, t0.Add(time.Hour)), "a start long after counts anew, and through Redis it waits for no fallback")
	})
}

// TestHandoffForgetsIdleDomains: only domains used in the recent past
// cost memory.
func TestHandoffForgetsIdleDomains(t *testing.T) {
	h := newHandoff()
	rule := limiter.Rule{Rate: 10, Burst: 1} // recovers 100ms after a start
	t0 := time.Now()
	for i := range 10_000 {
		h.note(fmt.Sprintf("d%d.example", i), &rule, t0.Add(time.Duration(i)*time.Millisecond), i%2 == 0)
	}
	size := func() int {
		n := 0
		for i := range h.shards {
			n += len(h.shards[i].keys.m)
		}
		return n
	}
	// Each new domain drops idle ones: what stays is the domains active
	// in the last 100ms, and idle ones not looked at yet, fewer than those
	// (134 to 166 in 300 runs).
	assert.LessOrEqual(t, size(), 2*100)
	assert.GreaterOrEqual(t, size(), 100, "the domains active in the last 100ms are kept")
	assert.LessOrEqual(t, h.fellBack.Load(), int64(size()))
}

// TestNotBeforeHoldsTheSharedTurn checks reserve.lua's not-before: the
// start waits for it, the bucket is read at the later start, and the
// queue goes on from there.
func TestNotBeforeHoldsTheSharedTurn(t *testing.T) {
	srv := redistest.Start(t)
	f := newFakeClock(t, srv)
	ctx := context.Background()
	ms := time.Millisecond
	key, rule := "notbefore.example", &limiter.Rule{Rate: 10, Burst: 2, Quotas: []config.Quota{{Requests: 10, Window: time.Minute}}}
	f.at(t, 0)
	first, err := f.reserveAfter(ctx, key, rule, 0, 0, int64(500*ms/time.Microsecond), -1)
	require.NoError(t, err)
	assert.Equal(t, 500*ms, first.wait)
	assert.Equal(t, "queue", first.reason)
	for _, want := range []time.Duration{500 * ms, 600 * ms} {
		res, err := reserveScript(ctx, f.Limiter, key, rule, 0, 0)
		require.NoError(t, err)
		assert.Equal(t, want, res.wait, "a bucket of 2, full at 500ms")
	}
	res, err := f.reserveAfter(ctx, key, rule, 0, 0, int64(100*ms/time.Microsecond), -1)
	require.NoError(t, err)
	assert.Equal(t, 700*ms, res.wait, "a not-before already passed changes nothing")
}

// BenchmarkHandoff measures what the handoff adds to each reservation
// through Redis while Redis answers: the not-before check, which finds no
// fallback to wait for, and counting the start granted.
func BenchmarkHandoff(b *testing.B) {
	rule := limiter.Rule{Rate: 10, Burst: 1}
	for _, keys := range []int{1, 10_000} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			h := newHandoff()
			names := make([]string, keys)
			for i := range names {
				names[i] = fmt.Sprintf("d%d.example", i)
			}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					key := names[i%keys]
					i++
					now := time.Now()
					if h.notBefore(key, &rule, now) != 0 {
						b.Error("no fallback, no wait")
					}
					h.note(key, &rule, now, false)
				}
			})
		})
	}
}
