package limiter_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter"
)

// At 1/s, burst 1: the first request goes at once, and is late 10 ms on;
// the second holds the turn at 1 s, which WaitTurns waits for without
// taking another (a third request's turn comes at 2 s, not 3 s); a
// request that cannot wait that long is refused, holding nothing.
func TestReserveAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := limiter.NewMemory()
		r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{Rate: 1, Burst: 1}}
		ctx := context.Background()
		start := time.Now()

		var first limiter.Reservation
		left, err := limiter.ReserveAtOnce(ctx, m, r, &first)
		require.NoError(t, err)
		require.True(t, left)
		assert.Equal(t, start, first.Start())
		assert.False(t, first.Late())
		time.Sleep(11 * time.Millisecond)
		assert.True(t, first.Late())

		short := r
		short.MaxWait = 100 * time.Millisecond
		var refused limiter.Reservation
		left, err = limiter.ReserveAtOnce(ctx, m, short, &refused)
		require.NoError(t, err)
		assert.False(t, left)
		assert.False(t, refused.OK())
		assert.Equal(t, time.Second-11*time.Millisecond, refused.Wait())

		turns := limiter.Turns{Requests: []limiter.Request{r}, Reservations: make([]limiter.Reservation, 1), Reserved: 1}
		left, err = limiter.ReserveAtOnce(ctx, m, r, &turns.Reservations[0])
		require.NoError(t, err)
		require.False(t, left)
		require.True(t, turns.Reservations[0].OK())
		w, err := limiter.WaitTurns(ctx, m, &turns)
		require.NoError(t, err)
		assert.Equal(t, start.Add(time.Second), w.Sent)
		assert.Equal(t, time.Second-11*time.Millisecond, w.Wait)

		_, err = limiter.Wait(ctx, m, r)
		require.NoError(t, err)
		assert.Equal(t, 2*time.Second, time.Since(start))
	})
}

// A Limiter of a user's own whose Confirm holds a turn granted at once
// back: ReserveAtOnce leaves the turn it waits for in res, and WaitTurns
// waits for it and confirms it again, reserving nothing more.
func TestReserveAtOnceHeldBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		turn := &countingTurn{hold: 50 * time.Millisecond}
		l := &fixedLimiter{turn: turn}
		r := limiter.Request{Key: "a.com"}
		start := time.Now()
		turns := limiter.Turns{Requests: []limiter.Request{r}, Reservations: make([]limiter.Reservation, 1), Reserved: 1}
		left, err := limiter.ReserveAtOnce(context.Background(), l, r, &turns.Reservations[0])
		require.NoError(t, err)
		require.False(t, left)
		assert.Equal(t, 50*time.Millisecond, turns.Reservations[0].Wait())
		w, err := limiter.WaitTurns(context.Background(), l, &turns)
		require.NoError(t, err)
		assert.Equal(t, start.Add(50*time.Millisecond), w.Sent)
		assert.Equal(t, 2, turn.confirms)
		assert.Equal(t, 0, turn.cancels)
	})
}

// A Confirm that fails gives the turn back, and ReserveAtOnce returns its
// error.
func TestReserveAtOnceConfirmFails(t *testing.T) {
	turn := &failingTurn{}
	var res limiter.Reservation
	left, err := limiter.ReserveAtOnce(context.Background(), turnLimiter{&fixedLimiter{}, turn}, limiter.Request{Key: "a.com"}, &res)
	assert.False(t, left)
	assert.ErrorIs(t, err, errConfirm)
	assert.Equal(t, 1, turn.cancels)
}

var errConfirm = errors.New("confirm failed")

// failingTurn fails every Confirm.
type failingTurn struct{ cancels int }

func (t *failingTurn) Cancel(context.Context, *limiter.Reservation) error {
	t.cancels++
	return nil
}

func (t *failingTurn) Confirm(context.Context, *limiter.Reservation, *limiter.Rule) (time.Duration, error) {
	return 0, errConfirm
}

// turnLimiter is fixedLimiter granting its turns at once with turn,
// saying no start.
type turnLimiter struct {
	*fixedLimiter
	turn limiter.Turn
}

func (l turnLimiter) Reserve(_ context.Context, r limiter.Request) (limiter.Reservation, error) {
	return limiter.Granted(0, "", time.Time{}, l.turn), nil
}
