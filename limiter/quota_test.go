package limiter_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
)

// A request that starts later than its quota's window after it was
// planned is counted where it starts: 100 ms apart and 3 a second, with
// starts at 0, 1.2, 1.3 and a late one at 1.5 s, the next goes at 2.2 s,
// not at 1.6 s.
func TestLateStartCountsInItsQuotaWindow(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{MinDelay: ms(100),
		Quotas: []config.Quota{{Requests: 3, Window: time.Second}}}}
	c.reserveAt(m, r, 0)
	late, at := c.reserveAt(m, r, 0)
	require.Equal(t, ms(100), at)
	for _, now := range []time.Duration{ms(1200), ms(1300)} {
		_, at := c.reserveAt(m, r, now)
		require.Equal(t, now, at)
	}
	require.Zero(t, limiter.ConfirmAt(&late, c.at(ms(1500))))
	res, at := c.reserveAt(m, r, ms(1600))
	assert.Equal(t, ms(2200), at, "starts at 1.2, 1.3 and 1.5 s fill the second")
	assert.Equal(t, limiter.ReasonQuota, res.Reason())
}

// Quota windows are kept by what they are: a changed list of quotas
// keeps the starts made, so a request never goes sooner than the stricter
// of the two lists allows.
func TestQuotaHistorySurvivesAChangedList(t *testing.T) {
	hourly := config.Quota{Requests: 3, Window: time.Hour}
	daily := config.Quota{Requests: 100, Window: 24 * time.Hour}
	tests := []struct {
		name  string
		after []config.Quota
		want  time.Duration
	}{
		{"a window added", []config.Quota{hourly, daily}, time.Hour},
		{"a window added before", []config.Quota{daily, hourly}, time.Hour},
		{"tightened", []config.Quota{{Requests: 2, Window: time.Hour}}, time.Hour + time.Minute},
		{"a new, longer window", []config.Quota{{Requests: 3, Window: 2 * time.Hour}}, 2 * time.Hour},
		{"a new, shorter window", []config.Quota{{Requests: 1, Window: time.Minute}}, 2 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			m := limiter.NewMemory()
			before := limiter.Request{Key: "a.com", Rule: &limiter.Rule{Quotas: []config.Quota{hourly}}}
			for _, at := range []time.Duration{0, time.Minute, time.Minute} {
				_, start := c.reserveAt(m, before, at)
				require.Equal(t, at, start)
			}
			after := limiter.Request{Key: "a.com", Rule: &limiter.Rule{Quotas: tt.after}}
			_, start := c.reserveAt(m, after, 2*time.Minute)
			assert.Equal(t, max(tt.want, 2*time.Minute), start)
		})
	}
}
