package limiter_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter"
)

// fixedLimiter is a Limiter of a user's own, built on the exported API
// only: it grants every turn wait from now, or refuses it past the
// request's MaxWait, and its Turn holds the first departure back by hold.
type fixedLimiter struct {
	wait time.Duration
	turn *countingTurn
}

func (l *fixedLimiter) Reserve(_ context.Context, r limiter.Request) (limiter.Reservation, error) {
	if r.MaxWait > 0 && l.wait > r.MaxWait {
		return limiter.Refused(l.wait, limiter.ReasonRate), nil
	}
	return limiter.Granted(l.wait, limiter.ReasonRate, time.Now().Add(l.wait), l.turn), nil
}

func (l *fixedLimiter) Observe(context.Context, limiter.Request, limiter.Observation) (time.Duration, error) {
	return 0, nil
}

func (l *fixedLimiter) State(context.Context, limiter.Request) (limiter.State, error) {
	return limiter.State{Wait: l.wait}, nil
}

// countingTurn counts the calls a Reservation makes to its Limiter's Turn.
type countingTurn struct {
	hold              time.Duration
	cancels, confirms int
}

func (t *countingTurn) Cancel(context.Context, *limiter.Reservation) error {
	t.cancels++
	return nil
}

func (t *countingTurn) Confirm(_ context.Context, res *limiter.Reservation, _ *limiter.Rule) (time.Duration, error) {
	t.confirms++
	if t.confirms > 1 || t.hold == 0 {
		return 0, nil
	}
	*res = limiter.Granted(t.hold, limiter.ReasonShared, time.Now().Add(t.hold), t)
	return t.hold, nil
}

func newFixedLimiter(wait, hold time.Duration) *fixedLimiter {
	return &fixedLimiter{wait: wait, turn: &countingTurn{hold: hold}}
}

// TestReservationConstructors checks what each constructor's Reservation
// reports, and that the zero Reservation is a refusal with nothing to give
// back.
func TestReservationConstructors(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	turn := &countingTurn{}
	granted := limiter.Granted(time.Second, limiter.ReasonQuota, start, turn)
	assert.True(t, granted.OK())
	assert.False(t, granted.Degraded())
	assert.Equal(t, time.Second, granted.Wait())
	assert.Equal(t, limiter.ReasonQuota, granted.Reason())
	assert.Equal(t, start, granted.Start())
	assert.Same(t, turn, granted.Turn())

	refused := limiter.Refused(time.Minute, limiter.ReasonRate)
	assert.False(t, refused.OK())
	assert.Equal(t, time.Minute, refused.Wait())
	assert.Equal(t, limiter.ReasonRate, refused.Reason())
	assert.Nil(t, refused.Turn())

	degraded := limiter.Degrade(granted)
	assert.True(t, degraded.Degraded())
	assert.True(t, degraded.OK())
	assert.False(t, granted.Degraded(), "Degrade returns a copy")

	var zero limiter.Reservation
	assert.False(t, zero.OK())
	require.NoError(t, zero.Cancel(context.Background()))
	more, err := zero.Confirm(context.Background(), nil)
	require.NoError(t, err)
	assert.Zero(t, more)
	require.NoError(t, refused.Cancel(context.Background()))
	assert.Zero(t, turn.cancels, "a refusal gives nothing back")
}

// TestOwnLimiterWaits checks that a Limiter of one's own, built with
// Granted and a Turn, is waited for as Memory is: its departure gate is
// called until it lets the request go, the turn it moves to is waited
// for, and Waited reports the whole time waited, apart from each
// reservation's planned wait.
func TestOwnLimiterWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newFixedLimiter(time.Second, 300*time.Millisecond)
		begun := time.Now()
		w, err := limiter.Wait(context.Background(), l, limiter.Request{Key: "own.example"})
		require.NoError(t, err)
		assert.Equal(t, 1300*time.Millisecond, w.Wait, "the planned wait and the time held back")
		assert.Equal(t, begun.Add(1300*time.Millisecond), w.Sent)
		assert.Equal(t, limiter.ReasonShared, w.Reason, "the turn Confirm moved it to came last")
		assert.Equal(t, 2, l.turn.confirms)
		assert.Zero(t, l.turn.cancels)
	})
}

// TestOwnLimiterRefusalAndCancel checks that a refusal fails Wait with
// ErrWaitTooLong, holding nothing, and that a wait ended by its context
// gives the turn back through the Limiter's Turn.
func TestOwnLimiterRefusalAndCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newFixedLimiter(time.Second, 0)
		w, err := limiter.Wait(context.Background(), l, limiter.Request{Key: "own.example", MaxWait: 500 * time.Millisecond})
		require.ErrorIs(t, err, limiter.ErrWaitTooLong)
		assert.Equal(t, time.Second, w.Wait, "how long it would have waited")
		assert.Zero(t, l.turn.cancels+l.turn.confirms)

		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err = limiter.Wait(ctx, l, limiter.Request{Key: "own.example"})
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 1, l.turn.cancels)
		assert.Zero(t, l.turn.confirms)
	})
}
