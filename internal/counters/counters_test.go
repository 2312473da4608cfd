package counters_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/internal/counters"
	"github.com/polite-go/polite/stats"
)

func TestRecorderZeroValue(t *testing.T) {
	var r counters.Counters
	assert.Equal(t, stats.Snapshot{Domain: "a.com"}, r.Snapshot("a.com"))
}

func TestRecorderDelayed(t *testing.T) {
	now := time.Date(2025, 10, 12, 10, 30, 45, 0, time.UTC)
	tests := []struct {
		wait    time.Duration
		delayed bool
	}{
		{0, false},
		{time.Millisecond, false},
		{counters.DelayThreshold, false},
		{counters.DelayThreshold + 1, true},
		{time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.wait.String(), func(t *testing.T) {
			var r counters.Counters
			r.Sent(now, tt.wait, false)
			s := r.Snapshot("a.com")
			assert.Equal(t, int64(1), s.TotalRequests)
			assert.Equal(t, tt.delayed, s.DelayedRequests == 1)
			assert.Equal(t, tt.wait, s.TotalWaitTime)
			assert.True(t, now.Equal(s.LastRequestTime))
		})
	}
}

func TestRecorderCounts(t *testing.T) {
	var r counters.Counters
	t0 := time.Date(2025, 10, 12, 10, 0, 0, 0, time.UTC)
	r.Sent(t0, 0, false)
	r.Sent(t0.Add(time.Second), 5*time.Millisecond, false)
	r.Sent(t0.Add(2*time.Second), 100*time.Millisecond, true)
	r.Sent(t0.Add(3*time.Second), 300*time.Millisecond, false)
	r.Canceled()
	r.Canceled()
	r.Failed()
	for _, status := range []int{200, 204, 301, 404, 429, 500, 503, 503, 0, 99, 600, -1, 101} {
		r.Response(status)
	}
	r.Paused(2 * time.Second)
	r.Paused(time.Second)
	r.Finished()
	r.Finished()
	r.Disallowed()

	s := r.Snapshot("a.com")
	assert.Equal(t, stats.Snapshot{
		Domain:             "a.com",
		TotalRequests:      4,
		DelayedRequests:    2,
		CanceledRequests:   2,
		FailedRequests:     1,
		DisallowedRequests: 1,
		TotalWaitTime:      405 * time.Millisecond,
		AverageWaitTime:    405 * time.Millisecond / 2,
		LastRequestTime:    s.LastRequestTime,
		DelayRate:          0.5,
		InFlight:           2,
		Responses:          [6]int64{4, 1, 2, 1, 2, 3},
		ThrottledResponses: 3,
		DegradedRequests:   1,
		PausedTime:         3 * time.Second,
	}, s)
	assert.True(t, t0.Add(3*time.Second).Equal(s.LastRequestTime))
}

func TestRecorderConcurrent(t *testing.T) {
	var r counters.Counters
	var wg sync.WaitGroup
	now := time.Now()
	for range 50 {
		wg.Go(func() {
			for range 100 {
				r.Sent(now, 20*time.Millisecond, false)
				r.Response(200)
				r.Finished()
				assert.GreaterOrEqual(t, r.Snapshot("a.com").InFlight, int64(0))
			}
		})
	}
	wg.Wait()
	s := r.Snapshot("a.com")
	assert.Equal(t, int64(5000), s.TotalRequests)
	assert.Equal(t, int64(5000), s.DelayedRequests)
	assert.Equal(t, int64(5000), s.Responses[2])
	assert.Equal(t, int64(0), s.InFlight)
	assert.Equal(t, 5000*20*time.Millisecond, s.TotalWaitTime)
}

func TestSnapshotIsCopy(t *testing.T) {
	var r counters.Counters
	r.Sent(time.Now(), 0, false)
	s := r.Snapshot("a.com")
	r.Sent(time.Now(), 0, false)
	r.Response(200)
	assert.Equal(t, int64(1), s.TotalRequests)
	assert.Equal(t, int64(0), s.Responses[2])
}

func TestSnapshotJSONInMap(t *testing.T) {
	var r counters.Counters
	r.Sent(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), 50*time.Millisecond, false)
	data, err := json.Marshal(map[string]stats.Snapshot{"a.com": r.Snapshot("a.com")})
	require.NoError(t, err)
	var out map[string]map[string]any
	require.NoError(t, json.Unmarshal(data, &out))
	assert.Equal(t, 50.0, out["a.com"]["average_wait_time_ms"])
	assert.Equal(t, 1.0, out["a.com"]["delay_rate"])
	assert.Equal(t, "2025-01-02T03:04:05Z", out["a.com"]["last_request_time"])
}

func TestRecorderQueuedAndGivenUp(t *testing.T) {
	var r counters.Counters
	r.Queued(2 * time.Second)
	r.Queued(time.Second)
	r.GivenUp()
	s := r.Snapshot("a.com")
	assert.Equal(t, 3*time.Second, s.QueuedTime)
	assert.Equal(t, int64(1), s.GivenUpRequests)
}

func TestInFlightCountsRobotsFetches(t *testing.T) {
	var r counters.Counters
	r.Sent(time.Now(), 0, false)
	r.RobotsSent(time.Now())
	assert.Equal(t, int64(2), r.Snapshot("a.com").InFlight, "a request and a robots.txt fetch")
	r.Finished()
	r.Finished()
	s := r.Snapshot("a.com")
	assert.Zero(t, s.InFlight)
	assert.Equal(t, int64(1), s.TotalRequests)
	assert.Equal(t, int64(1), s.RobotsRequests)
}
