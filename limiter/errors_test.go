package limiter_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
)

// A failing server backs its key off, the reason says so, and a transport
// failure is not mistaken for a robots.txt Crawl-delay (both have no
// status).
func TestMemoryErrorBackoff(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	m := limiter.NewMemory()
	rule := limiter.RuleOf(config.Limit{MinDelay: 100 * time.Millisecond})
	r := limiter.Request{Key: "failing.example", Rule: &rule}

	added := m.ObserveAt(r, limiter.Observation{Failed: true, Sent: t0}, t0)
	assert.Equal(t, time.Second, added)
	st := m.StateAt(r, t0)
	assert.Equal(t, limiter.Reason("errors"), st.PauseReason)
	assert.Equal(t, time.Second, st.Wait)
	assert.Equal(t, 100*time.Millisecond, st.MinDelay, "a failure is no Crawl-delay")

	t1 := t0.Add(time.Second)
	m.ObserveAt(r, limiter.Observation{Status: http.StatusGatewayTimeout, Sent: t1}, t1)
	assert.Equal(t, 2*time.Second, m.StateAt(r, t1).Wait, "doubled")

	t2 := t1.Add(2 * time.Second)
	m.ObserveAt(r, limiter.Observation{Status: http.StatusOK, Sent: t2}, t2)
	t3 := t2.Add(time.Second)
	assert.Equal(t, time.Second, m.ObserveAt(r, limiter.Observation{Status: http.StatusBadGateway, Sent: t3}, t3), "a success ended the backoff")

	off := limiter.RuleOf(config.Limit{MinDelay: 100 * time.Millisecond, ErrorStatuses: []int{}})
	quiet := limiter.Request{Key: "quiet.example", Rule: &off}
	assert.Zero(t, m.ObserveAt(quiet, limiter.Observation{Failed: true, Sent: t0}, t0), "error backoff turned off")
	assert.Zero(t, m.ObserveAt(quiet, limiter.Observation{Status: http.StatusBadGateway, Sent: t0}, t0))
}

// A backoff step outlives its pause by as long again, however many other
// keys come meanwhile: a server failing again soon after pauses twice as
// long. Past that, the key starts over from the first step.
func TestMemoryBackoffOutlivesOtherKeys(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	m := limiter.NewMemory()
	rule := limiter.RuleOf(config.Limit{RequestsPerSecond: 100, Burst: 1})
	others := func(at time.Time, prefix string, n int) {
		for i := range n {
			m.ReserveAt(limiter.Request{Key: fmt.Sprintf("%s%d.example", prefix, i), Rule: &rule}, at)
		}
	}
	r := limiter.Request{Key: "failing.example", Rule: &rule}
	m.ReserveAt(r, t0)
	require.Equal(t, time.Second, m.ObserveAt(r, limiter.Observation{Status: http.StatusServiceUnavailable, Sent: t0}, t0))

	t1 := t0.Add(1500 * time.Millisecond) // the pause is over
	others(t1, "a", 200)
	m.ReserveAt(r, t1)
	assert.Equal(t, 2*time.Second, m.ObserveAt(r, limiter.Observation{Status: http.StatusServiceUnavailable, Sent: t1}, t1), "doubled")

	t2 := t1.Add(4500 * time.Millisecond) // 2 s of pause and 2 s more are over
	// Each new key drops at most two quiet ones of its shard: ten times as
	// many as the shard holds reach the failing key, however the keys fall.
	others(t2, "b", 2000)
	m.ReserveAt(r, t2)
	assert.Equal(t, time.Second, m.ObserveAt(r, limiter.Observation{Status: http.StatusServiceUnavailable, Sent: t2}, t2), "forgotten")
}

// An adaptive gap outlives itself by as long again, however many other
// keys come meanwhile: a slow server is not sped up by a short idle time.
func TestMemoryAdaptiveGapOutlivesOtherKeys(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	m := limiter.NewMemory()
	rule := limiter.RuleOf(config.Limit{RequestsPerSecond: 100, Burst: 1, Adaptive: true, AdaptiveStartDelay: time.Second})
	r := limiter.Request{Key: "slow.example", Rule: &rule}
	m.ReserveAt(r, t0)
	m.ObserveAt(r, limiter.Observation{Status: http.StatusOK, Sent: t0, Latency: 7 * time.Second}, t0)
	require.Equal(t, 4*time.Second, m.StateAt(r, t0).MinDelay, "halfway from 1s to 7s")

	t1 := t0.Add(5 * time.Second) // past the gap, within as long again
	for i := range 200 {
		m.ReserveAt(limiter.Request{Key: fmt.Sprintf("k%d.example", i), Rule: &rule}, t1)
	}
	first, second := m.ReserveAt(r, t1), m.ReserveAt(r, t1)
	require.Zero(t, first.Wait())
	assert.Equal(t, 4*time.Second, second.Wait())
}

// Adaptive pacing keeps its start delay from the first request on, and
// never goes past its maximum.
func TestMemoryAdaptiveStartAndMaxDelay(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	m := limiter.NewMemory()
	rule := limiter.RuleOf(config.Limit{MinDelay: 100 * time.Millisecond, Adaptive: true,
		AdaptiveStartDelay: 5 * time.Second, AdaptiveMaxDelay: 8 * time.Second})
	r := limiter.Request{Key: "adaptive.example", Rule: &rule}

	st := m.StateAt(r, t0)
	assert.Equal(t, 5*time.Second, st.MinDelay, "before any request")
	first := m.ReserveAt(r, t0)
	require.True(t, first.OK())
	assert.Zero(t, first.Wait())
	second := m.ReserveAt(r, t0)
	assert.Equal(t, 5*time.Second, second.Wait(), "the second request, before any response, waits the start delay")
	assert.Equal(t, limiter.Reason("adaptive"), second.Reason())

	at := t0
	for range 30 {
		at = at.Add(time.Minute)
		m.ObserveAt(r, limiter.Observation{Status: http.StatusOK, Sent: at.Add(-time.Minute), Latency: time.Minute}, at)
	}
	gap := m.StateAt(r, at).MinDelay
	assert.LessOrEqual(t, gap, 8*time.Second, "a minute's latency, capped at the maximum")
	assert.Greater(t, gap, 7*time.Second)

	plain := limiter.RuleOf(config.Limit{MinDelay: 100 * time.Millisecond, AdaptiveStartDelay: 5 * time.Second})
	assert.Equal(t, 100*time.Millisecond, m.StateAt(limiter.Request{Key: "plain.example", Rule: &plain}, t0).MinDelay,
		"a start delay without adaptive pacing does nothing")
}
