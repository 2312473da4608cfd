package places

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
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
		assert.Equal(t, 3, taken(pl.counts.Load()))

		leaving, leave := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- pl.Take(leaving, 3) }()
		synctest.Wait()
		pl.mu.Lock()
		pl.counts.Add(-1) // a place given back as the request leaves the line
		pl.handOnLocked()
		leave()
		pl.mu.Unlock()
		err := <-done
		if err != nil {
			assert.Equal(t, 2, taken(pl.counts.Load()), "the place that came as it left is given back")
		} else {
			assert.Equal(t, 3, taken(pl.counts.Load()))
		}
		assert.Zero(t, pl.waiting.Len())
		assert.Zero(t, inLine(pl.counts.Load()))
	})
}

// TestPoolStormWakesEveryWaiter has many requests take and give places
// at once under caps that change from one request to the next, some with
// no cap, so that places are given back while others decide whether to
// join the line: every request must get its place (a lost wake-up leaves
// one waiting while places are free), no more than the largest cap may be
// held while only capped requests run, and nothing stays taken or in line.
func TestPoolStormWakesEveryWaiter(t *testing.T) {
	for _, uncapped := range []bool{false, true} {
		t.Run(fmt.Sprintf("uncapped=%t", uncapped), func(t *testing.T) {
			const workers, rounds, largestCap = 16, 5000, 3
			var pl Pool
			var held, mostHeld atomic.Int64
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range rounds {
						max := 1 + (w+i)%largestCap
						if uncapped && (w+i)%5 == 0 {
							max = 0
						}
						if err := pl.Take(context.Background(), max); err != nil {
							t.Error(err)
							return
						}
						n := held.Add(1)
						for m := mostHeld.Load(); n > m && !mostHeld.CompareAndSwap(m, n); m = mostHeld.Load() {
						}
						if i%7 == 0 {
							runtime.Gosched()
						}
						held.Add(-1)
						pl.Give()
					}
				}()
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(time.Minute):
				c := pl.counts.Load()
				t.Fatalf("requests still waiting after a minute: %d taken, %d in line", taken(c), inLine(c))
			}
			c := pl.counts.Load()
			assert.Zero(t, taken(c), "taken at rest")
			assert.Zero(t, inLine(c), "in line at rest")
			if !uncapped {
				assert.LessOrEqual(t, mostHeld.Load(), int64(largestCap), "held under caps of at most 3")
			}
		})
	}
}
