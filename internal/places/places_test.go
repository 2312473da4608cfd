package places

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPoolCountsAcrossMaxima checks that places taken under one
// MaxConcurrent count against another, that the line is served in order
// under the MaxConcurrent each asked with, and that a request that leaves
// the line, even as its place came, leaves no place taken.
func TestPoolCountsAcrossMaxima(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var pl Pool
		ctx := t.Context()
		require.NoError(t, pl.Take(ctx, 0), "no cap")
		require.NoError(t, pl.Take(ctx, 3))
		require.NoError(t, pl.Take(ctx, 3))

		short, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		var full *AllTakenError
		require.ErrorAs(t, pl.Take(short, 2), &full, "3 taken, 2 of them under another cap")
		assert.Equal(t, 3, full.inFlight)

		got := make(chan int, 2)
		for i, max := range []int{2, 4} {
			go func() {
				assert.NoError(t, pl.Take(ctx, max))
				got <- i
			}()
			synctest.Wait()
		}
		assert.Empty(t, got, "the first in line waits under its cap of 2, the second behind it")
		pl.Give()
		synctest.Wait()
		assert.Empty(t, got, "2 taken: still none under a cap of 2")
		pl.Give()
		synctest.Wait()
		assert.ElementsMatch(t, []int{0, 1}, []int{<-got, <-got}, "one place free: both in line go, the second under its cap of 4")
		assert.Equal(t, 3, pl.taken)

		leaving, leave := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- pl.Take(leaving, 3) }()
		synctest.Wait()
		pl.mu.Lock()
		pl.taken-- // a place given back as the request leaves the line
		pl.handOnLocked()
		leave()
		pl.mu.Unlock()
		err := <-done
		if err != nil {
			assert.Equal(t, 2, pl.taken, "the place that came as it left is given back")
		} else {
			assert.Equal(t, 3, pl.taken)
		}
		assert.Zero(t, pl.waiting.Len())
	})
}
