package stats_test

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/stats"
)

// TestSnapshotJSON checks the field names: seed 000's, then polite's own.
func TestSnapshotJSON(t *testing.T) {
	last := time.Date(2025, 10, 12, 10, 30, 45, 0, time.UTC)
	s := stats.Snapshot{
		Domain:             "javdb.com",
		TotalRequests:      100,
		RobotsRequests:     2,
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
		Quotas: []limiter.QuotaState{
			{Limit: 30, Window: time.Hour, Remaining: 12, NextFree: last.Add(10 * time.Minute)},
			{Limit: 100, Window: 24 * time.Hour, Remaining: 100},
		},
	}
	data, err := json.Marshal(s)
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"domain": "javdb.com",
		"total_requests": 100,
		"robots_requests": 2,
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
		"disallowed_requests", "domain", "failed_requests", "in_flight", "paused_time_ms", "robots_requests", "throttled_responses", "total_requests",
		"total_wait_time_ms",
	}, slices.Sorted(maps.Keys(fields)))
	assert.NotContains(t, string(data), "0001-01-01")
}
