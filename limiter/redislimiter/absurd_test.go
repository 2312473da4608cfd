package redislimiter

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// TestAbsurdRulesNeitherGoAtOnceNorStay checks rules that config.Validate
// refuses but a caller can still build (a limiter.Rule is a plain value,
// and Crawl-delay widens min_delay at run time): no wait comes back
// negative, or zero where the rule asks for one; a wait beyond the horizon
// is refused rather than held; Redis is not marked down; and every key
// the scripts write has an expiry.
func TestAbsurdRulesNeitherGoAtOnceNorStay(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	forever := time.Duration(math.MaxInt64)
	tests := []struct {
		name   string
		rule   limiter.Rule
		pause  time.Duration
		sample time.Duration // the jitter sample of the second request
		atOnce bool          // the rule lets the second request go at once
	}{
		{name: "rate of 1e-10", rule: limiter.Rule{Rate: 1e-10, Burst: 1}},
		{name: "rate of 1e-300", rule: limiter.Rule{Rate: 1e-300, Burst: 1}},
		{name: "rate of 1e-300, huge burst", rule: limiter.Rule{Rate: 1e-300, Burst: math.MaxInt32}, atOnce: true},
		{name: "endless min_delay", rule: limiter.Rule{MinDelay: forever}},
		{name: "endless jitter", rule: limiter.Rule{MinDelay: time.Second, Jitter: forever}, sample: forever - time.Second},
		{name: "endless quota window", rule: limiter.Rule{MinDelay: time.Millisecond, Quotas: []config.Quota{{Requests: 1, Window: forever}}}},
		{name: "endless pause", rule: limiter.Rule{Rate: 1, Burst: 1}, pause: forever},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, _ := newTestLimiter(t, srv)
			req := limiter.Request{Key: tt.name, Rule: &tt.rule}
			if tt.pause > 0 {
				require.NoError(t, l.pause(ctx, req.Key, tt.pause))
			} else {
				first, err := reserveScript(ctx, l, req.Key, req.Rule, 0, 0)
				require.NoError(t, err)
				require.True(t, first.ok)
				require.Zero(t, first.wait)
			}
			second, err := reserveScript(ctx, l, req.Key, req.Rule, 0, int64(tt.sample/time.Microsecond))
			require.NoError(t, err, "Redis takes the script's writes")
			if tt.atOnce {
				assert.True(t, second.ok)
				assert.Zero(t, second.wait)
			} else {
				assert.False(t, second.ok, "a wait beyond the horizon is refused, not held")
				assert.Equal(t, horizon, second.wait)
			}
			st, err := l.State(ctx, req)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, st.Paused, time.Duration(0))
			assert.LessOrEqual(t, st.Wait, horizon)
			if !tt.atOnce && tt.sample == 0 {
				assert.Equal(t, horizon, st.Wait)
			}
			for _, key := range l.keys(req.Key) {
				ttl, err := l.client.PTTL(ctx, key).Result()
				require.NoError(t, err)
				if ttl != -2*time.Nanosecond { // -2: no such key (no quota, no history)
					assert.Positive(t, ttl, "%s has an expiry", key)
				}
			}
			assert.False(t, l.down())
		})
	}
}

// TestAbsurdWaitsThroughReserve checks the same through Reserve, which
// before marked Redis down on the script error of a rate of 1e-300, and
// let the second request at 1e-10 go at once, its wait wrapped negative.
func TestAbsurdWaitsThroughReserve(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	for _, rate := range []float64{1e-10, 1e-300} {
		l, logs := newTestLimiter(t, srv)
		req := limiter.Request{Key: "absurd.example", Rule: &limiter.Rule{Rate: rate, Burst: 1}}
		require.NoError(t, l.client.Del(ctx, l.keys(req.Key)...).Err())
		for i := range 3 {
			res, err := l.Reserve(ctx, req)
			require.NoError(t, err)
			assert.False(t, res.Degraded(), "rate %v, request %d", rate, i)
			if i > 0 {
				assert.False(t, res.OK(), "rate %v, request %d", rate, i)
				assert.Equal(t, horizon, res.Wait(), "rate %v, request %d", rate, i)
			}
		}
		_, err := limiter.Wait(ctx, l, req)
		assert.ErrorIs(t, err, limiter.ErrWaitTooLong, "rate %v: Wait refuses the turn", rate)
		assert.Zero(t, logs.count(downLog))
	}
}
