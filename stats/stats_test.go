package stats_test

import (
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/stats"
)

func TestRecorderZeroValue(t *testing.T) {
	var r stats.Recorder
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
		{stats.DelayThreshold, false},
		{stats.DelayThreshold + 1, true},
		{time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.wait.String(), func(t *testing.T) {
			var r stats.Recorder
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
	var r stats.Recorder
	t0 := time.Date(2025, 10, 12, 10, 0, 0, 0, time.UTC)
	r.Sent(t0, 0, false)
	r.Sent(t0.Add(time.Second), 5*time.Millisecond, false)
	r.Sent(t0.Add(2*time.Second), 100*time.Millisecond, true)
	r.Sent(t0.Add(3*time.Second), 300*time.Millisecond, false)
	r.Canceled()
	r.Canceled()
	r.Failed()
	for _, status := range []int{200, 204, 301, 404, 429, 500, 503, 503, 0, 99, 600, -1} {
		r.Response(status)
	}
	r.Paused(2 * time.Second)
	r.Paused(time.Second)
	r.InFlight(3)
	r.InFlight(-1)
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
		Responses:          [6]int64{4, 0, 2, 1, 2, 3},
		ThrottledResponses: 3,
		DegradedRequests:   1,
		PausedTime:         3 * time.Second,
	}, s)
	assert.True(t, t0.Add(3*time.Second).Equal(s.LastRequestTime))
}

func TestRecorderConcurrent(t *testing.T) {
	var r stats.Recorder
	var wg sync.WaitGroup
	now := time.Now()
	for range 50 {
		wg.Go(func() {
			for range 100 {
				r.InFlight(1)
				r.Sent(now, 20*time.Millisecond, false)
				r.Response(200)
				r.InFlight(-1)
				_ = r.Snapshot("a.com")
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
	var r stats.Recorder
	r.Sent(time.Now(), 0, false)
	s := r.Snapshot("a.com")
	r.Sent(time.Now(), 0, false)
	r.Response(200)
	assert.Equal(t, int64(1), s.TotalRequests)
	assert.Equal(t, int64(0), s.Responses[2])
}

func TestStatusClass(t *testing.T) {
	for class, want := range []string{"other", "1xx", "2xx", "3xx", "4xx", "5xx"} {
		assert.Equal(t, want, stats.StatusClass(class))
	}
	assert.Equal(t, "other", stats.StatusClass(6))
	assert.Equal(t, "other", stats.StatusClass(-1))
}

// TestSnapshotJSON checks the field names: seed 000's, then polite's own.
func TestSnapshotJSON(t *testing.T) {
	last := time.Date(2025, 10, 12, 10, 30, 45, 0, time.UTC)
	s := stats.Snapshot{
		Domain:             "javdb.com",
		TotalRequests:      100,
		DelayedRequests:    30,
		CanceledRequests:   2,
		FailedRequests:     1,
		DisallowedRequests: 3,
		TotalWaitTime:      3 * time.Second,
		AverageWaitTime:    100 * time.Millisecond,
		LastRequestTime:    last,
		DelayRate:          0.3,
		InFlight:           4,
		Responses:          [6]int64{0, 0, 97, 0, 2, 1},
		ThrottledResponses: 1,
		DegradedRequests:   5,
		PausedUntil:        last.Add(time.Minute),
		PauseReason:        "retry-after",
		PausedTime:         1500 * time.Microsecond,
		Quotas: []stats.QuotaState{
			{Limit: 30, Window: time.Hour, Remaining: 12, NextFree: last.Add(10 * time.Minute)},
			{Limit: 100, Window: 24 * time.Hour, Remaining: 100},
		},
	}
	data, err := json.Marshal(s)
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"domain": "javdb.com",
		"total_requests": 100,
		"delayed_requests": 30,
		"total_wait_time_ms": 3000,
		"average_wait_time_ms": 100,
		"last_request_time": "2025-10-12T10:30:45Z",
		"delay_rate": 0.3,
		"canceled_requests": 2,
		"failed_requests": 1,
		"disallowed_requests": 3,
		"in_flight": 4,
		"responses": {"2xx": 97, "4xx": 2, "5xx": 1},
		"throttled_responses": 1,
		"degraded_requests": 5,
		"paused_until": "2025-10-12T10:31:45Z",
		"pause_reason": "retry-after",
		"paused_time_ms": 1.5,
		"quotas": [
			{"limit": 30, "window": "1h0m0s", "remaining": 12, "next_free": "2025-10-12T10:40:45Z"},
			{"limit": 100, "window": "24h0m0s", "remaining": 100}
		]
	}`, string(data))
}

// TestSnapshotJSONOmitsZero checks that times never set and empty parts are
// left out rather than written as year 1.
func TestSnapshotJSONOmitsZero(t *testing.T) {
	data, err := json.Marshal(stats.Snapshot{Domain: "a.com"})
	require.NoError(t, err)
	var fields map[string]any
	require.NoError(t, json.Unmarshal(data, &fields))
	assert.Equal(t, []string{
		"average_wait_time_ms", "canceled_requests", "degraded_requests", "delay_rate", "delayed_requests",
		"disallowed_requests", "domain", "failed_requests", "in_flight", "paused_time_ms", "throttled_responses", "total_requests",
		"total_wait_time_ms",
	}, slices.Sorted(maps.Keys(fields)))
	assert.NotContains(t, string(data), "0001-01-01")
}

func TestSnapshotJSONInMap(t *testing.T) {
	var r stats.Recorder
	r.Sent(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), 50*time.Millisecond, false)
	data, err := json.Marshal(map[string]stats.Snapshot{"a.com": r.Snapshot("a.com")})
	require.NoError(t, err)
	var out map[string]map[string]any
	require.NoError(t, json.Unmarshal(data, &out))
	assert.Equal(t, 50.0, out["a.com"]["average_wait_time_ms"])
	assert.Equal(t, 1.0, out["a.com"]["delay_rate"])
	assert.Equal(t, "2025-01-02T03:04:05Z", out["a.com"]["last_request_time"])
}
