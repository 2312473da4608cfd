package limiter_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
)

// TestLastStartCountsWhereNoStateIs checks that a key Memory holds no
// state for counts Request.LastStart as a start, under each rule, in
// Reserve and in State alike.
func TestLastStartCountsWhereNoStateIs(t *testing.T) {
	tests := []struct {
		name   string
		rule   limiter.Rule
		ago    time.Duration // the last start, before now
		wait   time.Duration // the first reservation's
		reason limiter.Reason
		second time.Duration // the next one's, at the same time
	}{
		{"min delay", limiter.Rule{MinDelay: time.Minute}, 2 * time.Second, 58 * time.Second, limiter.ReasonMinDelay, time.Minute + 58*time.Second},
		{"min delay long over", limiter.Rule{MinDelay: time.Second}, time.Hour, 0, "", time.Second},
		{"bucket takes its token", limiter.Rule{Rate: 1, Burst: 2}, 0, 0, "", time.Second},
		{"empty bucket refills", limiter.Rule{Rate: 1, Burst: 1}, 300 * time.Millisecond, 700 * time.Millisecond, limiter.ReasonRate, 1700 * time.Millisecond},
		{"quota", limiter.Rule{Quotas: []config.Quota{{Requests: 2, Window: 10 * time.Second}}}, 3 * time.Second, 0, "", 7 * time.Second},
		{"a start to come counts as now", limiter.Rule{MinDelay: time.Second}, -time.Hour, time.Second, limiter.ReasonMinDelay, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			now := time.Hour
			r := limiter.Request{Key: "forgotten.example", Rule: &tt.rule, LastStart: c.at(now - tt.ago)}
			state := limiter.NewMemory().StateAt(r, c.at(now))
			assert.Equal(t, tt.wait, state.Wait, "State")
			assert.Equal(t, tt.reason, state.Reason, "State's reason")

			m := limiter.NewMemory()
			res, _ := c.reserveAt(m, r, now)
			require.True(t, res.OK())
			assert.Equal(t, tt.wait, res.Wait(), "Reserve")
			assert.Equal(t, tt.reason, res.Reason(), "Reserve's reason")
			next, _ := c.reserveAt(m, r, now)
			assert.Equal(t, tt.second, next.Wait(), "the next Reserve")
		})
	}
}

// TestLastStartIgnoredWhereStateIs checks that a key Memory holds state
// for ignores Request.LastStart: the state knows its starts.
func TestLastStartIgnoredWhereStateIs(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	rule := limiter.Rule{MinDelay: time.Second}
	res, _ := c.reserveAt(m, limiter.Request{Key: "held.example", Rule: &rule}, 0)
	require.Zero(t, res.Wait())
	r := limiter.Request{Key: "held.example", Rule: &rule, LastStart: c.at(1900 * time.Millisecond)}
	assert.Zero(t, m.StateAt(r, c.at(2*time.Second)).Wait)
	res, _ = c.reserveAt(m, r, 2*time.Second)
	assert.Zero(t, res.Wait(), "a second after the start the state holds")
}

// TestLastStartAfterMemoryForgot checks the case LastStart is for: a key
// whose pace Memory dropped once it recovered keeps a stricter rule's gap
// from its latest start.
func TestLastStartAfterMemoryForgot(t *testing.T) {
	c := newClock()
	loose, strict := limiter.Rule{MinDelay: time.Second}, limiter.Rule{MinDelay: time.Minute}
	// nextWait starts idle.example, lets 2,000 new keys come once it has
	// recovered, and returns the wait of its next reservation under the
	// strict rule, told of its last start or not.
	nextWait := func(told bool) time.Duration {
		m := limiter.NewMemory()
		res, _ := c.reserveAt(m, limiter.Request{Key: "idle.example", Rule: &loose}, 0)
		require.Zero(t, res.Wait())
		for i := range 2000 {
			c.reserveAt(m, limiter.Request{Key: fmt.Sprintf("k%d.example", i), Rule: &loose}, 2*time.Second)
		}
		r := limiter.Request{Key: "idle.example", Rule: &strict}
		if told {
			r.LastStart = c.at(0)
		}
		res, _ = c.reserveAt(m, r, 2*time.Second)
		return res.Wait()
	}
	require.Zero(t, nextWait(false), "Memory forgot the key: without LastStart it starts afresh")
	assert.Equal(t, 58*time.Second, nextWait(true))
}
