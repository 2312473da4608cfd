package limiter_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
)

// TestQuotaListChangeKeepsEachWindow: a key's quota windows are kept by what
// they are, (requests, window), not by their place in the list. Requests
// alternating between [3 per hour] and [3 per hour, 100 per day], as during a
// rolling deploy of the second, start at most 3 times in the hour. Before,
// each change of the list wiped every window: 10 of 10 went within the hour.
func TestQuotaListChangeKeepsEachWindow(t *testing.T) {
	hourly := config.Quota{Requests: 3, Window: time.Hour}
	rules := []*limiter.Rule{
		{Quotas: []config.Quota{hourly}},
		{Quotas: []config.Quota{hourly, {Requests: 100, Window: 24 * time.Hour}}},
		{Quotas: []config.Quota{{Requests: 100, Window: 24 * time.Hour}, hourly}}, // another order
	}
	m := limiter.NewMemory()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	within := 0
	for i := range 10 {
		now := base.Add(time.Duration(i) * time.Minute)
		res := m.ReserveAt(limiter.Request{Key: "deploy.example", Rule: rules[i%len(rules)]}, now)
		if res.OK() && now.Add(res.Wait()).Before(base.Add(time.Hour)) {
			within++
		}
	}
	assert.Equal(t, 3, within, "starts within the hour")
}
