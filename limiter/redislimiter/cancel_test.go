package redislimiter

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// TestCancelOlderTurnMakesNoBurst: giving back a queued turn that is not
// the latest frees its quota slots but not its token, so the turns kept
// and the turns reserved after it are never closer than the rules allow
// on Redis's clock. Before, its token came back at the time of the latest
// turn, when the bucket was full already: the next request shared the
// latest's start.
func TestCancelOlderTurnMakesNoBurst(t *testing.T) {
	srv := redistest.Start(t)
	ms := time.Millisecond
	oneQuota := []config.Quota{{Requests: 3, Window: time.Second}}
	tests := []struct {
		name    string
		rule    limiter.Rule
		queued  int   // reservations at 0
		cancel  []int // which of them to give back, in order
		after   int   // reservations at 10ms
		wantEnd time.Duration
	}{
		{"burst 1, the middle two", limiter.Rule{Rate: 10, Burst: 1}, 4, []int{1, 2}, 2, 500 * ms},
		{"burst 1, the middle one, then the latest", limiter.Rule{Rate: 10, Burst: 1}, 4, []int{1, 3}, 2, 400 * ms},
		{"burst 3, two queued ones", limiter.Rule{Rate: 10, Burst: 3}, 6, []int{3, 4}, 3, 600 * ms},
		{"min delay", limiter.Rule{Rate: 10, Burst: 2, MinDelay: 50 * ms}, 4, []int{1, 2}, 2, 400 * ms},
		// The quota's slot comes back: the last start is 1s after the
		// first, not after the cancelled one at 100ms.
		{"quota", limiter.Rule{Rate: 10, Burst: 1, Quotas: oneQuota}, 3, []int{1}, 2, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeClock(t, srv)
			ctx := context.Background()
			req := limiter.Request{Key: tt.name, Rule: &tt.rule}
			var held []*limiter.Reservation
			reserve := func() {
				t.Helper()
				res, err := f.Reserve(ctx, req)
				require.NoError(t, err)
				require.True(t, res.OK())
				require.IsType(t, &turn{}, res.Turn())
				held = append(held, &res)
			}
			f.at(t, 0)
			for range tt.queued {
				reserve()
			}
			for _, i := range tt.cancel {
				require.NoError(t, held[i].Cancel(ctx))
			}
			f.at(t, 10*ms)
			for range tt.after {
				reserve()
			}
			var starts []time.Time
			for i, res := range held {
				if !slices.Contains(tt.cancel, i) {
					starts = append(starts, time.UnixMicro(res.Turn().(*turn).start))
				}
			}
			slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
			assert.LessOrEqual(t, excess(starts, tt.rule.Rate, tt.rule.Burst), 1e-9, "starts within burst + rate × span: %v", offsets(starts))
			for i := 1; i < len(starts); i++ {
				assert.GreaterOrEqual(t, starts[i].Sub(starts[i-1]), tt.rule.MinDelay, "min delay between starts %d and %d", i-1, i)
			}
			for _, q := range tt.rule.Quotas {
				for i := q.Requests; i < len(starts); i++ {
					assert.GreaterOrEqual(t, starts[i].Sub(starts[i-q.Requests]), q.Window, "quota: starts %d and %d", i-q.Requests, i)
				}
			}
			assert.Equal(t, tt.wantEnd, starts[len(starts)-1].Sub(starts[0]), "the last start: %v", offsets(starts))
		})
	}
}

// offsets returns starts as offsets from the first.
func offsets(starts []time.Time) []time.Duration {
	out := make([]time.Duration, len(starts))
	for i, s := range starts {
		out[i] = s.Sub(starts[0])
	}
	return out
}
