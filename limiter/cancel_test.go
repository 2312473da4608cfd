package limiter_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter"
)

// Callers that time out give their turns back, whatever order their
// contexts end in: at 1/s, burst 1, one request goes, n more wait until
// their contexts end at 300 ms, and the next request goes at 1 s, as if
// they had never asked.
func TestCancelledWaitsGiveTheirTurnsBack(t *testing.T) {
	r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{Rate: 1, Burst: 1}}
	for _, n := range []int{1, 2, 5, 20} {
		t.Run(fmt.Sprint(n, " waiting"), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := limiter.NewMemory()
				start := time.Now()
				_, err := limiter.Wait(context.Background(), m, r)
				require.NoError(t, err)
				var wg sync.WaitGroup
				for range n {
					wg.Go(func() {
						ctx, cancel := context.WithCancel(context.Background())
						defer cancel()
						time.AfterFunc(ms(300), cancel)
						_, err := limiter.Wait(ctx, m, r)
						assert.True(t, errors.Is(err, context.Canceled))
					})
				}
				wg.Wait()
				_, err = limiter.Wait(context.Background(), m, r)
				require.NoError(t, err)
				assert.Equal(t, time.Second, time.Since(start))
			})
		})
	}
}

// Turns cancelled in any order are all given back once no live turn
// follows them; one that a live turn follows frees its quota slot only.
func TestCancelInAnyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{Rate: 1, Burst: 1}}
	for trial := range 50 {
		c := newClock()
		m := limiter.NewMemory()
		c.reserveAt(m, r, 0)
		waiting := make([]limiter.Reservation, 1+rng.IntN(8))
		for i := range waiting {
			waiting[i], _ = c.reserveAt(m, r, 0)
		}
		for _, i := range rng.Perm(len(waiting)) {
			require.NoError(t, waiting[i].Cancel(context.Background()))
		}
		_, start := c.reserveAt(m, r, ms(300))
		assert.Equal(t, time.Second, start, "trial %d: %d cancelled", trial, len(waiting))
	}

	c := newClock()
	m := limiter.NewMemory()
	c.reserveAt(m, r, 0)
	first, _ := c.reserveAt(m, r, 0)
	c.reserveAt(m, r, 0) // planned at 2 s, and kept
	require.NoError(t, first.Cancel(context.Background()))
	_, start := c.reserveAt(m, r, ms(300))
	assert.Equal(t, 3*time.Second, start, "the live turn at 2 s was planned around the one at 1 s")
}

// A request whose turn is free is never told to wait, however its call
// meets others on the key's lock: Memory reads the clock under the lock.
func TestNoWaitWhileTokensLast(t *testing.T) {
	r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{Rate: 1e6, Burst: 1e6}}
	m := limiter.NewMemory()
	const each = 100_000
	waited := make([]int, 2)
	var wg sync.WaitGroup
	for g := range waited {
		wg.Go(func() {
			for range each {
				res, err := m.Reserve(context.Background(), r)
				if err != nil || res.Wait() > 0 {
					waited[g]++
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, []int{0, 0}, waited, "requests told to wait of %d each", each)
}
