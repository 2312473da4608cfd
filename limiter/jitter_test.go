package limiter_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/polite-go/polite/limiter"
)

func TestSetJitterSource(t *testing.T) {
	m := limiter.NewMemory()
	var bounds []time.Duration
	m.SetJitterSource(func(bound time.Duration) time.Duration {
		bounds = append(bounds, bound)
		return bound / 2
	})
	rule := limiter.Rule{MinDelay: 100 * time.Millisecond, Jitter: 50 * time.Millisecond}
	now := time.Now()
	first := m.ReserveAt(limiter.Request{Key: "a", Rule: &rule}, now)
	second := m.ReserveAt(limiter.Request{Key: "a", Rule: &rule}, now)
	assert.Zero(t, first.Wait())
	assert.Equal(t, 125*time.Millisecond, second.Wait(), "min delay, then the sample drawn")
	assert.Equal(t, []time.Duration{50 * time.Millisecond, 50 * time.Millisecond}, bounds)
	none := m.ReserveAt(limiter.Request{Key: "b", Rule: &limiter.Rule{MinDelay: time.Second}}, now)
	assert.Zero(t, none.Wait())
	assert.Len(t, bounds, 2, "no jitter, no sample")
}
