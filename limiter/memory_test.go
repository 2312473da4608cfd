package limiter_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
)

// clock builds every time of a test from one base, so that the tests
// speak in offsets.
type clock struct{ base time.Time }

func newClock() clock { return clock{base: time.Now()} }

func (c clock) at(d time.Duration) time.Time { return c.base.Add(d) }

// reserveAt reserves at offset now and returns the reservation with the
// offset its request starts at.
func (c clock) reserveAt(m *limiter.Memory, r limiter.Request, now time.Duration) (limiter.Reservation, time.Duration) {
	res := m.ReserveAt(r, c.at(now))
	return res, now + res.Wait()
}

// stateAt is m's state of key under rule at now.
func stateAt(m *limiter.Memory, key string, rule limiter.Rule, now time.Time) limiter.State {
	return m.StateAt(limiter.Request{Key: key, Rule: &rule}, now)
}

// starts reserves n requests at offset now and returns their starts.
func (c clock) starts(m *limiter.Memory, r limiter.Request, now time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		_, out[i] = c.reserveAt(m, r, now)
	}
	return out
}

// maxInWindow is the most starts that any half-open window of length w
// holds.
func maxInWindow(starts []time.Duration, w time.Duration) int {
	sorted := slices.Sorted(slices.Values(starts))
	most := 0
	for i, s := range sorted {
		n := 0
		for _, u := range sorted[i:] {
			if u < s+w {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestTokenBucket(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{Rate: 10, Burst: 3}}
	var reasons []limiter.Reason
	var waits []time.Duration
	for range 6 {
		res, _ := c.reserveAt(m, r, 0)
		require.True(t, res.OK())
		waits = append(waits, res.Wait())
		reasons = append(reasons, res.Reason())
	}
	assert.Equal(t, []time.Duration{0, 0, 0, ms(100), ms(200), ms(300)}, waits, "the burst goes at once, then 1/rate apart")
	assert.Equal(t, []limiter.Reason{"", "", "", limiter.ReasonRate, limiter.ReasonRate, limiter.ReasonRate}, reasons)

	// Long after, the bucket is full again, but holds no more than Burst.
	assert.Equal(t, []time.Duration{ms(10_000), ms(10_000), ms(10_000), ms(10_100)}, c.starts(m, r, ms(10_000), 4))
	// Half-way through a refill, the wait is what is left of it.
	res, start := c.reserveAt(m, r, ms(10_150))
	assert.Equal(t, ms(10_200), start)
	assert.Equal(t, limiter.ReasonRate, res.Reason())
}

func TestTokenBucketFractionalRate(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{Rate: 3, Burst: 1}}
	for i, s := range c.starts(m, r, 0, 301) {
		ideal := time.Duration(i) * time.Second / 3
		// Each wait rounds up to the microsecond, as the scripts of
		// redislimiter round it: never faster than the rate.
		require.GreaterOrEqual(t, s, ideal, "start %d", i)
		require.LessOrEqual(t, s, ideal+time.Duration(i)*time.Microsecond, "start %d", i)
	}
}

func TestMinDelay(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{MinDelay: 2 * time.Second}}
	res, _ := c.reserveAt(m, r, 0)
	assert.Equal(t, time.Duration(0), res.Wait())
	assert.Empty(t, res.Reason())
	res, _ = c.reserveAt(m, r, 0)
	assert.Equal(t, 2*time.Second, res.Wait())
	assert.Equal(t, limiter.ReasonMinDelay, res.Reason())
	_, start := c.reserveAt(m, r, 0)
	assert.Equal(t, 4*time.Second, start)
	// Between starts, not between arrivals.
	_, start = c.reserveAt(m, r, 5*time.Second)
	assert.Equal(t, 6*time.Second, start)
	res, _ = c.reserveAt(m, r, time.Minute)
	assert.Equal(t, time.Duration(0), res.Wait())
}

func TestMinDelayWithBucket(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{Rate: 2, Burst: 3, MinDelay: ms(250)}}
	var starts []time.Duration
	var reasons []limiter.Reason
	for range 7 {
		res, s := c.reserveAt(m, r, 0)
		starts = append(starts, s)
		reasons = append(reasons, res.Reason())
	}
	// The bucket refills 0.5 tokens per 250ms gap: it runs dry at the fifth.
	assert.Equal(t, []time.Duration{0, ms(250), ms(500), ms(750), ms(1000), ms(1500), ms(2000)}, starts)
	md, rate := limiter.ReasonMinDelay, limiter.ReasonRate
	assert.Equal(t, []limiter.Reason{"", md, md, md, md, rate, rate}, reasons)
}

// checkJitterGaps asserts that every gap between consecutive starts is at
// least required and less than required+jitter, and that the jitter varies.
func checkJitterGaps(t *testing.T, starts []time.Duration, required, jitter time.Duration) {
	t.Helper()
	starts = slices.Sorted(slices.Values(starts))
	extras := map[time.Duration]bool{}
	var sum time.Duration
	for i := 1; i < len(starts); i++ {
		gap := starts[i] - starts[i-1]
		require.GreaterOrEqual(t, gap, required, "gap %d", i)
		require.Less(t, gap, required+jitter, "gap %d", i)
		extras[gap-required] = true
		sum += gap - required
	}
	assert.Greater(t, len(extras), len(starts)/2, "jitter is random")
	mean := sum / time.Duration(len(starts)-1)
	assert.InDelta(t, jitter/2, mean, float64(jitter/4), "jitter is uniform in [0, jitter)")
}

func TestJitter(t *testing.T) {
	tests := []struct {
		name     string
		rule     limiter.Rule
		required time.Duration
	}{
		{"min_delay", limiter.Rule{MinDelay: time.Second, Jitter: ms(500)}, time.Second},
		{"rate", limiter.Rule{Rate: 10, Burst: 1, Jitter: ms(50)}, ms(100)},
		{"rate and min_delay", limiter.Rule{Rate: 10, Burst: 1, MinDelay: ms(300), Jitter: ms(200)}, ms(300)},
		{"quota", limiter.Rule{Quotas: []config.Quota{{Requests: 1, Window: time.Second}}, Jitter: ms(100)}, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			m := limiter.NewMemory()
			r := limiter.Request{Key: "a.com", Rule: &tt.rule}
			starts := c.starts(m, r, 0, 200)
			assert.Equal(t, time.Duration(0), starts[0], "the first request of a key waits for nothing")
			checkJitterGaps(t, starts, tt.required, tt.rule.Jitter)
		})
	}
}

func TestJitterConcurrent(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	rule := limiter.Rule{MinDelay: ms(100), Jitter: ms(50)}
	now := c.at(0)
	starts := make([]time.Duration, 50)
	var wg sync.WaitGroup
	for i := range starts {
		wg.Go(func() {
			res := m.ReserveAt(limiter.Request{Key: "a.com", Rule: &rule}, now)
			starts[i] = res.Wait()
		})
	}
	wg.Wait()
	checkJitterGaps(t, starts, ms(100), ms(50))
}

// TestJitterAfterIdle checks that a request after a long pause goes at
// once: jitter grows a gap only up to the jitter itself.
func TestJitterAfterIdle(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{MinDelay: ms(100), Jitter: ms(50)}}
	c.reserveAt(m, r, 0)
	res, _ := c.reserveAt(m, r, time.Second)
	assert.Equal(t, time.Duration(0), res.Wait())

	// Right after the min delay, the jitter may still add its part.
	res, _ = c.reserveAt(m, limiter.Request{Key: "b.com", Rule: &limiter.Rule{Jitter: time.Hour}}, 0)
	require.Equal(t, time.Duration(0), res.Wait())
	res, _ = c.reserveAt(m, limiter.Request{Key: "b.com", Rule: &limiter.Rule{Jitter: time.Hour}}, 1)
	assert.Less(t, res.Wait(), time.Hour)
	assert.Equal(t, limiter.ReasonJitter, res.Reason())
}

func TestQuotaSlidingWindow(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{Quotas: []config.Quota{{Requests: 3, Window: 10 * time.Second}}}}
	s := time.Second
	// Three at the end of one fixed window, then right after its edge.
	assert.Equal(t, []time.Duration{ms(9900), ms(9900), ms(9900)}, c.starts(m, r, ms(9900), 3))
	res, start := c.reserveAt(m, r, ms(10_100))
	assert.Equal(t, 19900*time.Millisecond, start, "no fixed-window edge lets a second batch through")
	assert.Equal(t, limiter.ReasonQuota, res.Reason())

	m = limiter.NewMemory()
	assert.Equal(t, []time.Duration{0, 0, 0, 10 * s, 10 * s, 10 * s, 20 * s}, c.starts(m, r, 0, 7))
}

// TestQuotaExactRandomArrivals checks, for arrivals at random times, that
// every start is the earliest that keeps each window of the quota within
// its count, and that no window holds more.
func TestQuotaExactRandomArrivals(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	q := config.Quota{Requests: 3, Window: 10 * time.Second}
	c := newClock()
	m := limiter.NewMemory()
	r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{Quotas: []config.Quota{q}}}
	var arrival time.Duration
	var starts []time.Duration
	for i := range 300 {
		arrival += time.Duration(rng.Int64N(int64(7 * time.Second)))
		_, start := c.reserveAt(m, r, arrival)
		want := arrival
		if i > 0 {
			want = max(want, starts[i-1])
		}
		if i >= q.Requests {
			want = max(want, starts[i-q.Requests]+q.Window)
		}
		require.Equal(t, want, start, "start %d", i)
		starts = append(starts, start)
	}
	assert.LessOrEqual(t, maxInWindow(starts, q.Window), q.Requests)
	assert.Equal(t, q.Requests, maxInWindow(starts, q.Window), "the quota is used up, not undercut")
}

func TestSeveralQuotas(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	quotas := []config.Quota{{Requests: 2, Window: time.Second}, {Requests: 5, Window: 10 * time.Second}}
	r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{Quotas: quotas}}
	starts := c.starts(m, r, 0, 12)
	s := time.Second
	assert.Equal(t, []time.Duration{0, 0, s, s, 2 * s, 10 * s, 10 * s, 11 * s, 11 * s, 12 * s, 20 * s, 20 * s}, starts)
	for _, q := range quotas {
		assert.LessOrEqual(t, maxInWindow(starts, q.Window), q.Requests, "%d per %v", q.Requests, q.Window)
	}
}

func TestPause(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{Rate: 1, Burst: 3}}
	res, _ := c.reserveAt(m, r, 0)
	require.Equal(t, time.Duration(0), res.Wait())
	m.PauseAt("a.com", 10*time.Second, c.at(0))
	res, start := c.reserveAt(m, r, time.Second)
	assert.Equal(t, 10*time.Second, start)
	assert.Equal(t, limiter.ReasonRetryAfter, res.Reason())
	res, start = c.reserveAt(m, r, time.Second)
	assert.Equal(t, 10*time.Second, start, "the bucket still has a token")
	assert.Equal(t, limiter.ReasonQueue, res.Reason())

	// A shorter pause does not shorten a longer one; a longer one extends it.
	m.PauseAt("b.com", 5*time.Second, c.at(0))
	m.PauseAt("b.com", time.Second, c.at(2*time.Second))
	assert.Equal(t, 3*time.Second, stateAt(m, "b.com", limiter.Rule{}, c.at(2*time.Second)).Paused)
	_, start = c.reserveAt(m, limiter.Request{Key: "b.com"}, 2*time.Second)
	assert.Equal(t, 5*time.Second, start)
	m.PauseAt("b.com", 10*time.Second, c.at(3*time.Second))
	_, start = c.reserveAt(m, limiter.Request{Key: "b.com"}, 4*time.Second)
	assert.Equal(t, 13*time.Second, start)

	// Pause is per key.
	res, _ = c.reserveAt(m, limiter.Request{Key: "c.com"}, time.Second)
	assert.Equal(t, time.Duration(0), res.Wait())
}

func TestMaxWaitRefusalConsumesNothing(t *testing.T) {
	tests := []struct {
		name   string
		rule   limiter.Rule
		reason limiter.Reason
	}{
		{"rate", limiter.Rule{Rate: 1, Burst: 1}, limiter.ReasonRate},
		{"min_delay", limiter.Rule{MinDelay: time.Second}, limiter.ReasonMinDelay},
		{"quota", limiter.Rule{Quotas: []config.Quota{{Requests: 1, Window: time.Second}}}, limiter.ReasonQuota},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			m := limiter.NewMemory()
			r := limiter.Request{Key: "a.com", Rule: &tt.rule}
			c.reserveAt(m, r, 0)
			before := stateAt(m, "a.com", tt.rule, c.at(0))
			limited := r
			limited.MaxWait = ms(500)
			for range 3 {
				res, _ := c.reserveAt(m, limited, 0)
				assert.False(t, res.OK())
				assert.Equal(t, time.Second, res.Wait())
				assert.Equal(t, tt.reason, res.Reason())
			}
			assert.Equal(t, before, stateAt(m, "a.com", tt.rule, c.at(0)))
			limited.MaxWait = time.Second
			res, _ := c.reserveAt(m, limited, 0)
			assert.True(t, res.OK(), "a wait equal to MaxWait is accepted")
			assert.Equal(t, time.Second, res.Wait(), "the next request gets the refused slot")
		})
	}
}

// probe reserves a few requests to r's key from offset from on, and
// describes the state and reservation of each step, so that two limiters
// can be compared.
func probe(c clock, m *limiter.Memory, r limiter.Request, from time.Duration) []string {
	var out []string
	for i := range 8 {
		now := from + time.Duration(i)*ms(150)
		st := stateAt(m, r.Key, *r.Rule, c.at(now))
		res, _ := c.reserveAt(m, r, now)
		out = append(out, fmt.Sprintf("state %+v reserve %v %v %s", st, res.OK(), res.Wait(), res.Reason()))
	}
	return out
}

var cancelRule = limiter.Rule{
	Rate: 2, Burst: 2, MinDelay: ms(100),
	Quotas: []config.Quota{{Requests: 3, Window: time.Second}, {Requests: 5, Window: 10 * time.Second}},
}

func TestCancelLatestRestoresSchedule(t *testing.T) {
	c := newClock()
	r := limiter.Request{Key: "a.com", Rule: &cancelRule}
	for n := 0; n <= 6; n++ {
		t.Run(fmt.Sprint(n, " before"), func(t *testing.T) {
			plain, canceled := limiter.NewMemory(), limiter.NewMemory()
			for i := range n {
				now := time.Duration(i) * ms(40)
				c.reserveAt(plain, r, now)
				c.reserveAt(canceled, r, now)
			}
			m := canceled
			res, _ := c.reserveAt(m, r, ms(300))
			require.True(t, res.OK())
			require.NoError(t, res.Cancel(context.Background()))
			assert.Equal(t, probe(c, plain, r, ms(300)), probe(c, canceled, r, ms(300)))
		})
	}
}

func TestCancelOlderGivesNoTokenBack(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{Rate: 1, Burst: 1}}
	var reservations []limiter.Reservation
	for range 3 {
		res, _ := c.reserveAt(m, r, 0)
		reservations = append(reservations, res)
	}
	require.Equal(t, 2*time.Second, reservations[2].Wait())
	require.NoError(t, reservations[1].Cancel(context.Background()))
	_, start := c.reserveAt(m, r, 0)
	assert.Equal(t, 3*time.Second, start, "the turn at 2s was planned around the one at 1s: its token does not come back")
}

func TestCancelOlderReturnsQuotaSlot(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	q := config.Quota{Requests: 2, Window: 10 * time.Second}
	r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{Quotas: []config.Quota{q}}}
	c.reserveAt(m, r, 0)
	b, _ := c.reserveAt(m, r, 5*time.Second)
	_, start := c.reserveAt(m, r, 5*time.Second)
	require.Equal(t, 10*time.Second, start)
	require.NoError(t, b.Cancel(context.Background()))
	_, start = c.reserveAt(m, r, 6*time.Second)
	assert.Equal(t, 10*time.Second, start, "without the cancel it would wait for 15s")
	_, start = c.reserveAt(m, r, 6*time.Second)
	assert.Equal(t, 20*time.Second, start)
}

// TestCancelEveryReservation checks that cancelling all reservations, in
// either order, gives back every quota slot, and never more than the
// bucket would hold had they not been made.
func TestCancelEveryReservation(t *testing.T) {
	rule := limiter.Rule{Rate: 1, Burst: 2, Quotas: []config.Quota{{Requests: 2, Window: 10 * time.Second}}}
	for _, oldestFirst := range []bool{true, false} {
		t.Run(fmt.Sprint("oldest first ", oldestFirst), func(t *testing.T) {
			c := newClock()
			m := limiter.NewMemory()
			r := limiter.Request{Key: "a.com", Rule: &rule}
			x, _ := c.reserveAt(m, r, 0)
			y, _ := c.reserveAt(m, r, 0)
			first, second := y, x
			if oldestFirst {
				first, second = x, y
			}
			require.NoError(t, first.Cancel(context.Background()))
			require.NoError(t, second.Cancel(context.Background()))
			assert.Equal(t, 2, stateAt(m, "a.com", rule, c.at(0)).Quotas[0].Remaining)
			fresh := limiter.NewMemory()
			want, got := c.starts(fresh, r, 0, 4), c.starts(m, r, 0, 4)
			for i := range want {
				assert.GreaterOrEqual(t, got[i], want[i], "start %d", i)
			}
		})
	}
}

func TestCancelRefusedIsNoop(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{Rate: 1, Burst: 1}, MaxWait: ms(10)}
	ok, _ := c.reserveAt(m, r, 0)
	refused, _ := c.reserveAt(m, r, 0)
	require.True(t, ok.OK())
	require.False(t, refused.OK())
	require.NoError(t, refused.Cancel(context.Background()))
	res, _ := c.reserveAt(m, r, ms(100))
	assert.False(t, res.OK(), "the refusal's cancel gave nothing back")
}

func TestReasons(t *testing.T) {
	tests := []struct {
		name  string
		rule  limiter.Rule
		pause time.Duration
		n     int // reservations before the one checked, all at 0
		want  limiter.Reason
	}{
		{"none", limiter.Rule{Rate: 1, Burst: 2}, 0, 1, ""},
		{"rate", limiter.Rule{Rate: 1, Burst: 2}, 0, 2, limiter.ReasonRate},
		{"min_delay", limiter.Rule{Rate: 100, Burst: 5, MinDelay: time.Second}, 0, 1, limiter.ReasonMinDelay},
		{"rate over min_delay", limiter.Rule{Rate: 0.5, Burst: 1, MinDelay: time.Second}, 0, 1, limiter.ReasonRate},
		{"quota", limiter.Rule{Rate: 100, Burst: 5, Quotas: []config.Quota{{Requests: 1, Window: time.Minute}}}, 0, 1, limiter.ReasonQuota},
		{"pause", limiter.Rule{Rate: 1, Burst: 1}, time.Minute, 0, limiter.ReasonRetryAfter},
		{"queue behind a pause", limiter.Rule{Rate: 1, Burst: 2}, time.Minute, 1, limiter.ReasonQueue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			m := limiter.NewMemory()
			r := limiter.Request{Key: "a.com", Rule: &tt.rule}
			if tt.pause > 0 {
				m.PauseAt("a.com", tt.pause, c.at(0))
			}
			c.starts(m, r, 0, tt.n)
			assert.Equal(t, tt.want, stateAt(m, "a.com", tt.rule, c.at(0)).Reason, "State")
			res, _ := c.reserveAt(m, r, 0)
			assert.Equal(t, tt.want, res.Reason(), "Reserve")
			assert.Equal(t, tt.want == "", res.Wait() == 0)
		})
	}
}

func TestStateConsumesNothing(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	rule := limiter.Rule{Rate: 1, Burst: 1, MinDelay: 3 * time.Second}
	r := limiter.Request{Key: "a.com", Rule: &rule}
	c.reserveAt(m, r, 0)
	for range 5 {
		st := stateAt(m, "a.com", rule, c.at(time.Second))
		assert.Equal(t, 2*time.Second, st.Wait)
		assert.Equal(t, limiter.ReasonMinDelay, st.Reason)
	}
	_, start := c.reserveAt(m, r, time.Second)
	assert.Equal(t, 3*time.Second, start)

	before := m.Len()
	st := stateAt(m, "never.seen", rule, c.at(0))
	assert.Equal(t, limiter.State{MinDelay: rule.MinDelay}, st)
	assert.Equal(t, before, m.Len(), "asking about a key does not track it")
}

func TestStateQuotas(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	s := time.Second
	rule := limiter.Rule{Quotas: []config.Quota{{Requests: 3, Window: 10 * s}, {Requests: 10, Window: time.Hour}}}
	r := limiter.Request{Key: "a.com", Rule: &rule}

	st := stateAt(m, "a.com", rule, c.at(0))
	q3, q10 := limiter.QuotaState{Limit: 3, Window: 10 * s}, limiter.QuotaState{Limit: 10, Window: time.Hour}
	quotas := func(r3 int, f3 time.Duration, r10 int, f10 time.Duration, now time.Duration) []limiter.QuotaState {
		a, b := q3, q10
		a.Remaining, b.Remaining = r3, r10
		if f3 > 0 {
			a.NextFree = c.at(now + f3)
		}
		if f10 > 0 {
			b.NextFree = c.at(now + f10)
		}
		return []limiter.QuotaState{a, b}
	}
	assert.Equal(t, quotas(3, 0, 10, 0, 0), st.Quotas)

	for _, now := range []time.Duration{0, 2 * s, 4 * s} {
		c.reserveAt(m, r, now)
	}
	st = stateAt(m, "a.com", rule, c.at(5*s))
	assert.Equal(t, 5*s, st.Wait)
	assert.Equal(t, limiter.ReasonQuota, st.Reason)
	assert.Equal(t, quotas(0, 5*s, 7, time.Hour-5*s, 5*s), st.Quotas)

	st = stateAt(m, "a.com", rule, c.at(11*s))
	assert.Equal(t, time.Duration(0), st.Wait)
	assert.Equal(t, quotas(1, s, 7, time.Hour-11*s, 11*s), st.Quotas)

	st = stateAt(m, "a.com", rule, c.at(2*time.Hour))
	assert.Equal(t, quotas(3, 0, 10, 0, 0), st.Quotas)
}

func TestStatePaused(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	m.PauseAt("a.com", 30*time.Second, c.at(0))
	st := stateAt(m, "a.com", limiter.Rule{Rate: 1, Burst: 1}, c.at(10*time.Second))
	assert.Equal(t, limiter.State{Wait: 20 * time.Second, Reason: limiter.ReasonRetryAfter, Paused: 20 * time.Second, PauseReason: limiter.ReasonRetryAfter}, st)
	st = stateAt(m, "a.com", limiter.Rule{Rate: 1, Burst: 1}, c.at(40*time.Second))
	assert.Equal(t, limiter.State{}, st)
}

// TestEviction checks that keys that have recovered are dropped once new
// keys arrive, and that a dropped key starts afresh.
func TestEviction(t *testing.T) {
	c := newClock()
	m := limiter.NewMemory()
	rule := limiter.Rule{Rate: 1, Burst: 1, MinDelay: ms(500), Quotas: []config.Quota{{Requests: 2, Window: 2 * time.Second}}}
	const old, fresh = 5000, 15000
	for i := range old {
		res, _ := c.reserveAt(m, limiter.Request{Key: fmt.Sprintf("old%d.com", i), Rule: &rule}, 0)
		require.True(t, res.OK())
	}
	require.Equal(t, old, m.Len(), "no key has recovered yet")
	// Reserved three times: not recovered when the new keys arrive.
	c.starts(m, limiter.Request{Key: "busy.com", Rule: &rule}, 0, 3)
	require.Equal(t, old+1, m.Len())

	for i := range fresh {
		c.reserveAt(m, limiter.Request{Key: fmt.Sprintf("new%d.com", i), Rule: &rule}, 2*time.Second)
	}
	assert.Equal(t, fresh+1, m.Len(), "every recovered key is dropped, the busy one is kept")

	// The busy key kept its state: its quota window is still full.
	res, _ := c.reserveAt(m, limiter.Request{Key: "busy.com", Rule: &rule}, 2*time.Second)
	assert.Equal(t, time.Second, res.Wait())
	assert.Equal(t, limiter.ReasonQuota, res.Reason())

	// A dropped key behaves as a key never seen.
	key := limiter.Request{Key: "old7.com", Rule: &rule}
	fresher := limiter.NewMemory()
	assert.Equal(t, probe(c, fresher, key, 2*time.Second), probe(c, m, key, 2*time.Second))
}

// TestRuleOfPacesAnyKeyInAnyMemory checks that one Rule, and its copies,
// pace two keys in two Memories, interleaved, as separate Rules would.
func TestRuleOfPacesAnyKeyInAnyMemory(t *testing.T) {
	c := newClock()
	shared := limiter.RuleOf(config.Limit{RequestsPerSecond: 1, Burst: 1})
	m1, m2 := limiter.NewMemory(), limiter.NewMemory()
	// Each key follows the other in one Memory, and itself in the other.
	order := []struct {
		m   *limiter.Memory
		key string
	}{{m1, "a.com"}, {m1, "b.com"}, {m2, "b.com"}, {m2, "a.com"}}
	for turn := range 3 {
		for i, o := range order {
			wait := stateAt(o.m, o.key, shared, c.at(0)).Wait
			assert.Equal(t, time.Duration(turn)*time.Second, wait, "%d, turn %d: state", i, turn)
			_, start := c.reserveAt(o.m, limiter.Request{Key: o.key, Rule: &shared}, 0)
			assert.Equal(t, time.Duration(turn)*time.Second, start, "%d, turn %d", i, turn)
		}
	}
}

// TestStaleCancel checks that cancelling a reservation made before its key
// was dropped does not disturb the key's new reservations.
func TestStaleCancel(t *testing.T) {
	c := newClock()
	m, twin := limiter.NewMemory(), limiter.NewMemory()
	rule := limiter.Rule{Rate: 1, Burst: 1}
	r := limiter.Request{Key: "a.com", Rule: &rule}
	stale, _ := c.reserveAt(m, r, 0)
	// Enough new keys to make every shard sweep, once a.com has recovered.
	for i := range 5000 {
		c.reserveAt(m, limiter.Request{Key: fmt.Sprintf("k%d", i), Rule: &rule}, 10*time.Second)
	}
	res, _ := c.reserveAt(m, r, 10*time.Second)
	c.reserveAt(twin, r, 10*time.Second)
	require.True(t, stale.OK())
	require.True(t, res.OK())
	require.NoError(t, stale.Cancel(context.Background()))
	assert.Equal(t, probe(c, twin, r, 10*time.Second), probe(c, m, r, 10*time.Second))
}

// TestStaleTurnsLeaveOtherKeysAlone checks that a turn handed out before
// its key was dropped, confirmed or cancelled once other keys have taken
// the memory the key's state held, changes none of theirs.
func TestStaleTurnsLeaveOtherKeysAlone(t *testing.T) {
	c := newClock()
	m, twin := limiter.NewMemory(), limiter.NewMemory()
	var turns []limiter.Reservation
	for range 3 {
		res, _ := c.reserveAt(m, limiter.Request{Key: "a.com", Rule: &cancelRule}, 0)
		require.True(t, res.OK())
		turns = append(turns, res)
	}
	require.Positive(t, turns[2].Wait(), "the last turn waits")
	keys := make([]limiter.Request, 200)
	for i := range keys {
		keys[i] = limiter.Request{Key: fmt.Sprintf("k%d.com", i), Rule: &cancelRule}
		c.reserveAt(m, keys[i], 20*time.Second)
		c.reserveAt(twin, keys[i], 20*time.Second)
	}
	require.Equal(t, len(keys), m.Len(), "a.com was dropped")

	assert.Zero(t, limiter.ConfirmAt(&turns[2], c.at(20500*time.Millisecond)), "a late turn of a dropped key keeps nothing apart")
	require.NoError(t, turns[1].Cancel(context.Background()))
	for _, r := range keys {
		assert.Equal(t, probe(c, twin, r, 20500*time.Millisecond), probe(c, m, r, 20500*time.Millisecond), r.Key)
	}
}

// TestHugeRules checks that rules whose waits overflow int64 nanoseconds
// wait (nearly) forever instead of wrapping round to no wait at all.
func TestHugeRules(t *testing.T) {
	const century = 100 * 365 * 24 * time.Hour
	forever := time.Duration(math.MaxInt64)
	tests := []struct {
		name  string
		rule  limiter.Rule
		pause time.Duration
	}{
		{"tiny rate", limiter.Rule{Rate: 1e-300, Burst: 1}, 0},
		{"rate of one per millennium", limiter.Rule{Rate: 1 / (1000 * 365 * 24 * 3600.0), Burst: 1}, 0},
		{"endless min_delay", limiter.Rule{MinDelay: forever}, 0},
		{"endless quota window", limiter.Rule{Quotas: []config.Quota{{Requests: 1, Window: forever}}}, 0},
		{"endless pause", limiter.Rule{Rate: 1, Burst: 5, MaxPause: forever}, forever},
		{"endless min_delay and jitter", limiter.Rule{MinDelay: forever, Jitter: forever}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			m := limiter.NewMemory()
			r := limiter.Request{Key: "a.com", Rule: &tt.rule}
			if tt.pause > 0 {
				m.PauseAt("a.com", tt.pause, c.at(0))
			} else {
				c.reserveAt(m, r, 0)
			}
			st := stateAt(m, "a.com", tt.rule, c.at(time.Second))
			assert.Greater(t, st.Wait, century, "State")
			res, _ := c.reserveAt(m, r, time.Second)
			assert.True(t, res.OK())
			assert.Greater(t, res.Wait(), century, "Reserve")
			r.MaxWait = time.Hour
			res, _ = c.reserveAt(m, r, 2*time.Second)
			assert.False(t, res.OK())
			assert.Greater(t, res.Wait(), century, "Reserve after")
		})
	}
}

func TestMemoryImplementsLimiter(t *testing.T) {
	var l limiter.Limiter = limiter.NewMemory()
	ctx := context.Background()
	r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{Rate: 1, Burst: 1}}
	res, err := l.Reserve(ctx, r)
	require.NoError(t, err)
	assert.True(t, res.OK())
	assert.Equal(t, time.Duration(0), res.Wait())
	res, err = l.Reserve(ctx, r)
	require.NoError(t, err)
	assert.Greater(t, res.Wait(), ms(500), "on the real clock: generous for a loaded machine")
	assert.LessOrEqual(t, res.Wait(), time.Second)
	require.NoError(t, res.Cancel(ctx))
	added, err := l.Observe(ctx, r, limiter.Observation{Status: 429, RetryAfter: time.Hour, Sent: time.Now()})
	require.NoError(t, err)
	assert.Equal(t, 10*time.Minute, added, "capped at the default MaxPause")
	st, err := l.State(ctx, r)
	require.NoError(t, err)
	assert.Greater(t, st.Paused, 9*time.Minute)
	assert.Equal(t, limiter.Reason("retry-after"), st.PauseReason)
}

func TestRuleOf(t *testing.T) {
	q := []config.Quota{{Requests: 3, Window: time.Hour}}
	l := config.Limit{RequestsPerSecond: 2, Burst: 3, MinDelay: time.Second, Jitter: ms(5), MaxConcurrent: 4, Quotas: q}
	assert.Equal(t, limiter.Rule{Rate: 2, Burst: 3, MinDelay: time.Second, Jitter: ms(5), Quotas: q}, limiter.RuleOf(l))
	l.Adaptive = true
	assert.True(t, limiter.RuleOf(l).Adaptive)
}

func BenchmarkMemoryReserve(b *testing.B) {
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("domain%d.example", i)
	}
	rule := limiter.Rule{Rate: 1e9, Burst: 1000}
	ctx := context.Background()
	b.Run("serial", func(b *testing.B) {
		m := limiter.NewMemory()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := m.Reserve(ctx, limiter.Request{Key: keys[i%len(keys)], Rule: &rule}); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		m := limiter.NewMemory()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := rand.IntN(len(keys))
			for pb.Next() {
				if _, err := m.Reserve(ctx, limiter.Request{Key: keys[i%len(keys)], Rule: &rule}); err != nil {
					b.Error(err)
					return
				}
				i++
			}
		})
	})
}
