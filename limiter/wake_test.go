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

// TestLateDepartureMovesTheNextWakeUp checks that a request leaving late
// moves the wake-up of the request waiting after it in Memory, which
// then wakes once, when the gap from the late departure is over, instead
// of waking at its planned turn to be held back and sleep again: whether
// WaitTurns reserved its turn, or ReserveAtOnce did and handed it over
// (Turns.Reserved), as the Transport does for a request paced in its
// domain alone.
func TestLateDepartureMovesTheNextWakeUp(t *testing.T) {
	for _, handedOver := range []bool{false, true} {
		t.Run(map[bool]string{false: "reserved by WaitTurns", true: "handed over"}[handedOver], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				m := limiter.NewMemory()
				req, late := firstAndSecond(t, m, "late.example")
				require.Equal(t, 100*time.Millisecond, late.Wait())

				sleeps := 0
				done := make(chan limiter.Waited, 1)
				go func() {
					var res [1]limiter.Reservation
					turns := limiter.Turns{Requests: []limiter.Request{req}, Reservations: res[:], Held: func() { sleeps++ }}
					if handedOver {
						left, err := limiter.ReserveAtOnce(ctx, m, req, &res[0])
						assert.NoError(t, err)
						assert.False(t, left, "its turn is 200 ms away")
						turns.Reserved = 1
					}
					w, err := limiter.WaitTurns(ctx, m, &turns)
					assert.NoError(t, err)
					done <- w
				}()
				synctest.Wait() // it sleeps until its turn, planned 200 ms from now

				time.Sleep(150 * time.Millisecond) // the second request leaves 50 ms late
				more, err := late.Confirm(ctx, nil)
				require.NoError(t, err)
				require.Zero(t, more)

				w := <-done
				assert.Equal(t, 250*time.Millisecond, w.Wait, "100 ms after the late departure")
				assert.Equal(t, 1, sleeps, "woke once")
			})
		})
	}
}

// TestWakeUpsStayInTheirBubble checks that a request leaving late
// outside a testing/synctest bubble does not move the wake-up of one
// waiting inside it, on the same Memory: resetting a bubble's timer from
// outside ends the program. The waiter wakes at its own turn instead.
func TestWakeUpsStayInTheirBubble(t *testing.T) {
	ctx := context.Background()
	m := limiter.NewMemory()
	req, late := firstAndSecond(t, m, "bubble.example")

	asleep, departed := make(chan struct{}), make(chan struct{})
	go func() {
		<-asleep // the request in the bubble waits for the turn after it
		time.Sleep(150 * time.Millisecond)
		more, err := late.Confirm(ctx, nil) // it leaves late
		assert.NoError(t, err)
		assert.Zero(t, more)
		close(departed)
	}()
	synctest.Test(t, func(t *testing.T) {
		done := make(chan error, 1)
		go func() {
			_, err := limiter.Wait(ctx, m, req)
			done <- err
		}()
		synctest.Wait()
		asleep <- struct{}{}
		<-departed // a channel from outside: the bubble's clock stands still meanwhile
		assert.NoError(t, <-done)
	})
}

// firstAndSecond sends key's first request at once on m, under a rule
// 100 ms apart, and returns the request with the second one's turn,
// reserved for 100 ms after the first.
func firstAndSecond(t *testing.T, m *limiter.Memory, key string) (limiter.Request, limiter.Reservation) {
	t.Helper()
	req := limiter.Request{Key: key, Rule: &limiter.Rule{Rate: 10, Burst: 1}}
	_, err := limiter.Wait(context.Background(), m, req)
	require.NoError(t, err)
	second, err := m.Reserve(context.Background(), req)
	require.NoError(t, err)
	return req, second
}
