package limiter_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter"
)

func TestHandleSharesStateWithKeyLookups(t *testing.T) {
	m := limiter.NewMemory()
	base := time.Now()
	rule := limiter.Rule{Rate: 1, Burst: 1}
	var h limiter.Handle
	first := m.ReserveAt(limiter.Request{Key: "a.com", Rule: rule, Handle: &h}, base)
	require.True(t, first.OK)
	assert.Zero(t, first.Wait)
	// Without the handle, the same key sees the token the handle's request took.
	second := m.ReserveAt(limiter.Request{Key: "a.com", Rule: rule}, base)
	assert.Equal(t, time.Second, second.Wait)
	// And with it, both earlier reservations count.
	third := m.ReserveAt(limiter.Request{Key: "a.com", Rule: rule, Handle: &h}, base)
	assert.Equal(t, 2*time.Second, third.Wait)
	m.PauseAt("a.com", time.Minute, base)
	assert.Equal(t, time.Minute, m.ReserveAt(limiter.Request{Key: "a.com", Rule: rule, Handle: &h}, base).Wait)
}

func TestHandleRebindsAfterTheStateIsDropped(t *testing.T) {
	m := limiter.NewMemory()
	base := time.Now()
	rule := limiter.Rule{Rate: 1, Burst: 1}
	var h limiter.Handle
	require.True(t, m.ReserveAt(limiter.Request{Key: "a.com", Rule: rule, Handle: &h}, base).OK)
	// Long after a.com has recovered, enough new keys make every shard
	// sweep, which drops a.com's state.
	later := base.Add(time.Hour)
	for i := range 10000 {
		m.ReserveAt(limiter.Request{Key: fmt.Sprintf("k%d.com", i), Rule: rule}, later)
	}
	// The handle's state is gone: the request is paced like a fresh key,
	// and the key lookup and the handle agree again afterwards.
	res := m.ReserveAt(limiter.Request{Key: "a.com", Rule: rule, Handle: &h}, later)
	assert.Zero(t, res.Wait)
	assert.Equal(t, time.Second, m.ReserveAt(limiter.Request{Key: "a.com", Rule: rule}, later).Wait)
	assert.Equal(t, 2*time.Second, m.ReserveAt(limiter.Request{Key: "a.com", Rule: rule, Handle: &h}, later).Wait)
}

func TestHandleWithAnotherLimiter(t *testing.T) {
	m1, m2 := limiter.NewMemory(), limiter.NewMemory()
	base := time.Now()
	rule := limiter.Rule{Rate: 1, Burst: 1}
	var h limiter.Handle
	require.Zero(t, m1.ReserveAt(limiter.Request{Key: "a.com", Rule: rule, Handle: &h}, base).Wait)
	// m2 has never seen a.com: the handle, bound to m1's state, must not leak it.
	assert.Zero(t, m2.ReserveAt(limiter.Request{Key: "a.com", Rule: rule, Handle: &h}, base).Wait)
	assert.Equal(t, time.Second, m1.ReserveAt(limiter.Request{Key: "a.com", Rule: rule, Handle: &h}, base).Wait)
}
