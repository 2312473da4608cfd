package limiter_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/internal/heaptest"
	"github.com/polite-go/polite/limiter"
)

// A request that starts late moves the turns after it: the next request
// still goes a whole gap after the late one, as the server sees them.
func TestLateStartMovesTheNextTurns(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{Rate: 4, Burst: 1}}
	c.reserveAt(m, r, 0) // goes at once
	second, at2 := c.reserveAt(m, r, 0)
	third, at3 := c.reserveAt(m, r, 0)
	require.Equal(t, []time.Duration{ms(250), ms(500)}, []time.Duration{at2, at3})

	assert.Zero(t, limiter.ConfirmAt(&second, c.at(ms(400))), "late, but may go")
	more := limiter.ConfirmAt(&third, c.at(ms(500)))
	assert.Equal(t, ms(150), more, "250ms after the late start, not 100ms")
	assert.Zero(t, limiter.ConfirmAt(&third, c.at(ms(650))))
	_, next := c.reserveAt(m, r, ms(650))
	assert.Equal(t, ms(900), next, "the plan follows the late starts")
}

// A pause that comes while turns are queued moves them all after it,
// spaced as the rules say: giving back the turns woken inside the pause
// returns no token, so no burst follows the pause.
func TestTurnsWokenInsideAPauseGoAfterItWithoutABurst(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	rule := limiter.Rule{Rate: 1, Burst: 1}
	r := limiter.Request{Key: "a.com", Rule: &rule}
	c.reserveAt(m, r, 0)
	var queued [3]limiter.Reservation
	for i := range queued {
		queued[i], _ = c.reserveAt(m, r, 0)
	}
	m.PauseAt("a.com", 10*time.Second, c.at(ms(500)))
	var starts []time.Duration
	for i := range queued {
		now := time.Duration(i+1) * time.Second // each wakes at its planned turn, inside the pause
		for {
			more := limiter.ConfirmAt(&queued[i], c.at(now))
			if more == 0 {
				break
			}
			now += more
		}
		starts = append(starts, now)
	}
	assert.Equal(t, []time.Duration{ms(10500), ms(11500), ms(12500)}, starts)
}

func TestWait(t *testing.T) {
	rule := limiter.Rule{Rate: 1, Burst: 1}
	r := limiter.Request{Key: "a.com", Rule: &rule}
	t.Run("sleeps until its turn", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			m := limiter.NewMemory()
			ctx := context.Background()
			start := time.Now()
			_, err := limiter.Wait(ctx, m, r)
			require.NoError(t, err)
			w, err := limiter.Wait(ctx, m, r)
			require.NoError(t, err)
			assert.Equal(t, time.Second, time.Since(start))
			assert.Equal(t, time.Second, w.Wait)
		})
	})
	t.Run("refuses a turn after the deadline at once", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			m := limiter.NewMemory()
			_, err := limiter.Wait(context.Background(), m, r)
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), ms(500))
			defer cancel()
			start := time.Now()
			w, err := limiter.Wait(ctx, m, r)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Zero(t, time.Since(start))
			assert.Equal(t, time.Second, w.Wait, "when it could have gone")
			w, err = limiter.Wait(context.Background(), m, r)
			require.NoError(t, err)
			assert.Equal(t, time.Second, w.Wait, "the refusal held nothing")
		})
	})
	t.Run("refuses a turn after MaxWait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			m := limiter.NewMemory()
			_, err := limiter.Wait(context.Background(), m, r)
			require.NoError(t, err)
			short := r
			short.MaxWait = ms(100)
			_, err = limiter.Wait(context.Background(), m, short)
			assert.ErrorIs(t, err, limiter.ErrWaitTooLong)
		})
	})
	t.Run("gives the turn back when cancelled", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			m := limiter.NewMemory()
			_, err := limiter.Wait(context.Background(), m, r)
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(ms(300), cancel)
			_, err = limiter.Wait(ctx, m, r)
			assert.True(t, errors.Is(err, context.Canceled))
			start := time.Now()
			_, err = limiter.Wait(context.Background(), m, r)
			require.NoError(t, err)
			assert.Equal(t, ms(700), time.Since(start), "the cancelled turn at 1s went to the next request")
		})
	})
	t.Run("waits out a pause that came while it slept", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			m := limiter.NewMemory()
			ctx := context.Background()
			_, err := limiter.Wait(ctx, m, r)
			require.NoError(t, err)
			time.AfterFunc(ms(500), func() {
				_, err := m.Observe(ctx, r, limiter.Observation{Status: 429, RetryAfter: 5 * time.Second, Sent: time.Now()})
				assert.NoError(t, err)
			})
			start := time.Now()
			_, err = limiter.Wait(ctx, m, r)
			require.NoError(t, err)
			assert.Equal(t, ms(5500), time.Since(start))
		})
	})
}

// A quota costs memory for the starts made, not for the starts it allows:
// a quota of 10,000 an hour on 3,000 domains of one request each.
func TestQuotaMemoryGrowsWithRequests(t *testing.T) {
	rule := limiter.Rule{Rate: 1, Burst: 1, Quotas: []config.Quota{{Requests: 10000, Window: time.Hour}}}
	m := limiter.NewMemory()
	keys := make([]string, 3000)
	for i := range keys {
		keys[i] = "d" + string(rune('a'+i%26)) + time.Duration(i).String() + ".example"
	}
	held := heaptest.Held(func() {
		for _, k := range keys {
			_, err := m.Reserve(context.Background(), limiter.Request{Key: k, Rule: &rule})
			require.NoError(t, err)
		}
	})
	perKey := float64(held) / float64(len(keys))
	t.Logf("%.0f bytes per key", perKey)
	assert.Less(t, perKey, 2000.0, "the whole 10,000-start ring would be 80 KB")
	runtime.KeepAlive(m)
}

// Giving back the latest turn does not erase a start recorded after it
// was made: at 4/s, a turn that started late at 450 ms still keeps the
// next one 250 ms after it, though the latest turn, made before that
// start, is given back.
func TestCancelLatestKeepsLaterStarts(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{Rate: 4, Burst: 1}}
	c.reserveAt(m, r, 0)              // goes at once
	late, _ := c.reserveAt(m, r, 0)   // planned at 250 ms
	latest, _ := c.reserveAt(m, r, 0) // planned at 500 ms
	require.Zero(t, limiter.ConfirmAt(&late, c.at(ms(450))), "starts late")
	require.NoError(t, latest.Cancel(context.Background()))
	next, start := c.reserveAt(m, r, ms(460))
	if start < ms(700) {
		start += limiter.ConfirmAt(&next, c.at(start))
	}
	assert.GreaterOrEqual(t, start, ms(700), "250 ms after the late start")
}

// A turn that comes at once has its departure noted when it is reserved;
// a request that leaves later takes that back at the gate and is noted
// when it leaves, so the turns after it follow its real departure: at
// 4/s, the next request goes 250 ms after a first one that left at 300 ms,
// not at 250 ms.
func TestGateNotesALateDepartureOfATurnThatCameAtOnce(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{Rate: 4, Burst: 1}}
	first, at1 := c.reserveAt(m, r, 0)
	second, at2 := c.reserveAt(m, r, 0)
	require.Equal(t, []time.Duration{0, ms(250)}, []time.Duration{at1, at2})
	require.Zero(t, limiter.ConfirmAt(&first, c.at(ms(300))), "leaves late")
	assert.Equal(t, ms(250), limiter.ConfirmAt(&second, c.at(ms(300))), "250 ms after the late departure")
	assert.Zero(t, limiter.ConfirmAt(&second, c.at(ms(550))))
	_, next := c.reserveAt(m, r, ms(560))
	assert.Equal(t, ms(800), next, "the plan follows the departures")
}
