package feedback

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAdaptiveDelay(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name         string
		old, latency time.Duration
		status       int
		target       float64
		floor, want  time.Duration
	}{
		{"first response starts from the floor", 0, 2000 * ms, 200, 1, 100 * ms, 1050 * ms},
		{"mean of old and latency/target", 1000 * ms, 3000 * ms, 200, 1, 0, 2000 * ms},
		{"target concurrency divides latency", 1000 * ms, 3000 * ms, 204, 3, 0, 1000 * ms},
		{"fast server lowers the delay", 2000 * ms, 0, 200, 1, 0, 1000 * ms},
		{"never below the floor", 200 * ms, 10 * ms, 200, 1, 150 * ms, 150 * ms},
		{"capped", defaultMaxAdaptiveDelay, 1000 * time.Second, 200, 1, 0, defaultMaxAdaptiveDelay},
		{"slow latency moves towards the cap", 50 * time.Second, 1000 * time.Second, 200, 1, 0, 55 * time.Second},
		{"a slow configured pace stays", 0, 0, 200, 1, 2 * time.Minute, 2 * time.Minute},
		{"a 404 does not lower it", 2000 * ms, 10 * ms, 404, 1, 0, 2000 * ms},
		{"a 404 may raise it", 1000 * ms, 3000 * ms, 404, 1, 0, 2000 * ms},
		{"a 301 does not lower it", 2000 * ms, 10 * ms, 301, 1, 0, 2000 * ms},
		{"a 429 doubles it", 1000 * ms, 10 * ms, 429, 1, 0, 2000 * ms},
		{"a 503 doubles it, capped", 40 * time.Second, 0, 503, 1, 0, defaultMaxAdaptiveDelay},
		{"a negative latency counts as none", 1000 * ms, -5 * time.Second, 200, 1, 0, 500 * ms},
		{"a tiny target cannot overflow", 1000 * ms, time.Second, 200, 1e-300, 0, (1000*ms + defaultMaxAdaptiveDelay) / 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, adaptDelay(tt.old, tt.latency, tt.status, tt.target, tt.floor, defaultMaxAdaptiveDelay))
		})
	}
}

func FuzzAdaptiveDelay(f *testing.F) {
	f.Add(int64(time.Second), int64(2*time.Second), 200, 1.0, int64(0), int64(time.Minute))
	f.Add(int64(math.MaxInt64), int64(math.MaxInt64), 503, 1e-9, int64(time.Hour), int64(24*time.Hour))
	f.Fuzz(func(t *testing.T, old, latency int64, status int, target float64, floor, ceiling int64) {
		if !(target > 0) || math.IsInf(target, 1) || floor < 0 || old < 0 || ceiling <= 0 || ceiling > int64(24*time.Hour) {
			return // NewTransport refuses such a target and ceiling; floors and delays are never negative
		}
		got := adaptDelay(time.Duration(old), time.Duration(latency), status, target, time.Duration(floor), time.Duration(ceiling))
		require.GreaterOrEqual(t, got, time.Duration(floor), "never below the floor")
		require.LessOrEqual(t, got, max(time.Duration(ceiling), time.Duration(floor), time.Duration(old)), "never above the cap, a slower floor, or where it was")
		if status < 200 || status > 299 {
			require.GreaterOrEqual(t, got, max(time.Duration(old), time.Duration(floor)), "a non-2xx never lowers it")
		}
	})
}

// TestAdaptiveDelayInWholeMicroseconds checks that the gap is rounded up
// to the microsecond, as the Redis scripts count time: a gap with a
// fraction would queue each turn a little earlier in Go than in Redis.
func TestAdaptiveDelayInWholeMicroseconds(t *testing.T) {
	got := adaptDelay(0, 1_000_001, 200, 3, 0, defaultMaxAdaptiveDelay) // (0 + 333,333.67ns) / 2
	assert.Equal(t, 167*time.Microsecond, got)
	got = adaptDelay(100*time.Microsecond, 2*time.Microsecond, 200, 1, 0, defaultMaxAdaptiveDelay)
	assert.Equal(t, 51*time.Microsecond, got, "already whole")
}
