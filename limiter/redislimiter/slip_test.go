package redislimiter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// TestLateStartHoldsTheNextTurns checks, on Redis's clock, that a request
// that starts later than planned keeps the next ones of its domain as far
// apart as the rules ask, also in another process, whose turn Redis
// granted before the late start.
func TestLateStartHoldsTheNextTurns(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	ms := time.Millisecond
	a, b := newFakeClock(t, srv), newFakeClock(t, srv) // two processes on one Redis and one clock
	r := limiter.Request{Key: "late.example", Rule: &limiter.Rule{Rate: 4, Burst: 1}}
	reserve := func(f *fakeClock, at time.Duration) *limiter.Reservation {
		t.Helper()
		f.at(t, at)
		res, err := f.Reserve(ctx, r)
		require.NoError(t, err)
		require.True(t, res.OK())
		return &res
	}

	reserve(a, 0) // goes at once
	first := reserve(a, 0)
	second := reserve(b, 0)
	require.Equal(t, []time.Duration{250 * ms, 500 * ms}, []time.Duration{first.Wait(), second.Wait()})

	// a's request wakes 200ms late. Before, Redis did not know of it, and
	// b's went at 500ms, 50ms after a's.
	assert.Equal(t, 450*ms, confirmAll(t, a, first, 450*ms))
	b.at(t, 500*ms)
	more, err := second.Confirm(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, 200*ms, more, "b's turn waits 250ms after a's late start")
	assert.Equal(t, 700*ms, confirmAll(t, b, second, 700*ms))

	// b's start was late too, by 200ms: the turns held after it follow
	// from it, in either process.
	third := reserve(a, 700*ms)
	assert.Equal(t, 250*ms, third.Wait(), "a new turn follows b's late start")
	assert.Equal(t, limiter.Reason("rate"), third.Reason())

	// A start late by no more than slip counts as on time: the plan stays,
	// and the next turn, confirmed on time, does not wait for the record.
	assert.Equal(t, 950*ms+slip/2, confirmAll(t, a, third, 950*ms+slip/2))
	fourth := reserve(b, 950*ms+slip/2)
	assert.Equal(t, 250*ms-slip/2, fourth.Wait(), "the plan did not move")
	b.at(t, 1200*ms)
	more, err = fourth.Confirm(ctx, nil)
	require.NoError(t, err)
	assert.Zero(t, more, "a wait of up to slip is not made")

	// A start late by more than slip, the latest one: the plan moves.
	fifth := reserve(b, 1200*ms)
	require.Equal(t, 250*ms, fifth.Wait())
	assert.Equal(t, 1460*ms, confirmAll(t, b, fifth, 1460*ms), "goes 10ms late")
	assert.Equal(t, 250*ms, reserve(a, 1460*ms).Wait(), "a new turn follows the late start")
}
