package redislimiter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// TestRollingDeployKeepsEveryQuota: two workers share one Redis, one with
// [3 per hour], the other with [3 per hour, 100 per day], as during a
// rolling deploy of the second; requests alternate between them. Each
// quota's list is named by what it is, so the hourly one is shared and
// each worker enforces every quota it knows: 3 starts in the hour. Before,
// each worker wiped the other's lists: 10 of 10 went within the hour.
func TestRollingDeployKeepsEveryQuota(t *testing.T) {
	srv := redistest.Start(t)
	hourly := config.Quota{Requests: 3, Window: time.Hour}
	daily := config.Quota{Requests: 100, Window: 24 * time.Hour}
	workers := []*fakeClock{newFakeClock(t, srv), newFakeClock(t, srv), newFakeClock(t, srv)}
	rules := []*limiter.Rule{
		{Quotas: []config.Quota{hourly}},
		{Quotas: []config.Quota{hourly, daily}},
		{Quotas: []config.Quota{daily, hourly}}, // another order
	}
	ctx := context.Background()
	within := 0
	for i := range 10 {
		at := time.Duration(i) * time.Minute
		w := workers[i%len(workers)]
		w.at(t, at)
		res, err := reserveScript(ctx, w.Limiter, "deploy.example", rules[i%len(rules)], 0, 0)
		require.NoError(t, err)
		if res.ok && at+res.wait < time.Hour {
			within++
		}
	}
	assert.Equal(t, 3, within, "starts within the hour")
}

// TestRollingDeployKeepsTheLongerWindow: one worker with [100 per minute],
// the other with [100 per minute, 4 per hour], requests alternating every
// 5 minutes. The first worker's rule needs a minute of history, but the
// history keeps the hour the other's rule used within the hour, so the
// second worker counts the first one's starts too: in the hour, starts at
// 0 (first), 5 (second), 10 (first), 15 (second) fill its quota, and its
// next start waits for the hour to end.
func TestRollingDeployKeepsTheLongerWindow(t *testing.T) {
	srv := redistest.Start(t)
	perMinute := config.Quota{Requests: 100, Window: time.Minute}
	perHour := config.Quota{Requests: 4, Window: time.Hour}
	workers := []*fakeClock{newFakeClock(t, srv), newFakeClock(t, srv)}
	rules := []*limiter.Rule{{Quotas: []config.Quota{perMinute}}, {Quotas: []config.Quota{perMinute, perHour}}}
	ctx := context.Background()
	var second []time.Duration // the second worker's starts
	for i := range 12 {
		at := time.Duration(i) * 5 * time.Minute
		w := workers[i%2]
		w.at(t, at)
		res, err := reserveScript(ctx, w.Limiter, "longer.example", rules[i%2], 0, 0)
		require.NoError(t, err)
		require.True(t, res.ok)
		if i%2 == 1 {
			second = append(second, at+res.wait)
		}
	}
	require.Len(t, second, 6)
	assert.Equal(t, []time.Duration{5 * time.Minute, 15 * time.Minute}, second[:2])
	assert.GreaterOrEqual(t, second[2], time.Hour, "the third start of the second worker waits for the hour")
}
