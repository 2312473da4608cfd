package redislimiter

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// span is when a start lies, on this machine's clock (see goes).
type span struct {
	lo, hi time.Time
	who    string // which worker, and whether through Redis or its fallback
}

// goes takes a turn of req in l as limiter.Wait does: reserve, sleep,
// confirm, and sleep again while Confirm moves the turn, with sleep for
// each sleep. It returns the span of the start it let go, named by
// whether the fallback made it and a Confirm moved it.
//
// A Limiter plans a turn on its own clock (Redis's, or this process's in
// the fallback) while the call that returns the wait for it runs, the
// Reserve or a Confirm that moves it: at that call's time plus the wait.
// It decides the start while the call that lets it go runs, the Reserve
// that returns no wait or the Confirm that returns no more (limiter.Wait:
// the turn is the time it returns). So the start lies between the
// beginning of the call that planned it, plus the wait, and the return of
// the call that let it go. Its plan alone is not enough: a caller that
// wakes late confirms a turn that the Limiter would have moved, had it
// woken in time, after a start before it that went late too; the Limiter
// lets it go at once, a whole pace after the start before it, while its
// plan may lie closer. Nor is the call that let it go: a wake-up's
// lateness, which the scheduler adds, would move it into a window that
// its plan lies before.
func goes(ctx context.Context, l limiter.Limiter, req limiter.Request, sleep func(time.Duration)) (span, error) {
	began := time.Now()
	res, err := l.Reserve(ctx, req)
	if err != nil {
		return span{}, err
	}
	if !res.OK() {
		return span{}, fmt.Errorf("no turn within %v", res.Wait())
	}
	at, moved := span{lo: began.Add(res.Wait()), hi: time.Now()}, false
	for wait := res.Wait(); wait > 0; {
		sleep(wait)
		began = time.Now()
		if wait, err = res.Confirm(ctx, nil); err != nil {
			return span{}, err
		}
		if wait > 0 {
			at.lo, moved = began.Add(wait), true
		}
		at.hi = time.Now()
	}
	at.who = fmt.Sprintf("degraded %v", res.Degraded())
	if moved {
		at.who += ", moved"
	}
	return at, nil
}

// starts collects the starts that callers of several Limiters make, as
// the Limiters plan and decide them, and when each request goes. The
// latter is what the server sees; the former is that, less the lateness
// that the scheduler adds and the Limiter cannot know.
type starts struct {
	mu sync.Mutex
	at []span
}

func (s *starts) add(at span) {
	s.mu.Lock()
	s.at = append(s.at, at)
	s.mu.Unlock()
}

// sorted returns the starts by their earliest time.
func (s *starts) sorted() []span {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.at)
	slices.SortFunc(out, func(a, b span) int { return a.lo.Compare(b.lo) })
	return out
}

// within counts the starts surely in [from, from+w): those whose whole
// span lies in it. So a start decided on Redis's clock and measured on
// this one never makes a window look busier than it was.
func within(sorted []span, from time.Time, w time.Duration) int {
	n := 0
	for _, s := range sorted {
		if !s.lo.Before(from) && s.hi.Before(from.Add(w)) {
			n++
		}
	}
	return n
}

// busiest is the most starts surely in one window [a, a+w) that opens in
// [from, to), and where it opens. The windows tried open at a start's
// earliest time: the busiest window can be moved later until it does,
// keeping every start it surely holds.
func busiest(sorted []span, from, to time.Time, w time.Duration) (int, time.Time) {
	most, at := 0, time.Time{}
	for _, s := range sorted {
		if s.lo.Before(from) || !s.lo.Before(to) {
			continue
		}
		if n := within(sorted, s.lo, w); n > most {
			most, at = n, s.lo
		}
	}
	return most, at
}

// ownPaceAllows is the most starts one process's own pace allows in a window
// [s, s+w): a full bucket, then one per token: burst - 1 + ceil(rate × w).
func ownPaceAllows(rule *limiter.Rule, w time.Duration) int {
	return rule.Burst - 1 + int(math.Ceil(rule.Rate*w.Seconds()))
}

// TestOutageKeepsEachWorkersPace: two workers (Limiters) at 5/s, burst 1,
// each with four requests in flight, share a domain through Redis; Redis
// is killed mid-run and restarted, empty, three seconds later. In every 2s
// window the two together start no more requests than their own paces
// allow (2 × 10): a worker's fallback starts after the turns Redis granted
// it, and its first turns through Redis again come after its fallback's.
// Before, each fallback started with a full bucket while the turns Redis
// had granted still went: 27 starts in the first 2s after the kill.
func TestOutageKeepsEachWorkersPace(t *testing.T) {
	srv := redistest.Start(t)
	rule := &limiter.Rule{Rate: 5, Burst: 1}
	const (
		workers  = 2
		inFlight = 4
		window   = 2 * time.Second
	)
	var all, sent starts // the starts as planned and decided, and when each request goes
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		l, err := New(newClient(t, srv), WithLogger(slog.New(slog.DiscardHandler)), WithProbeInterval(50*time.Millisecond))
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
		for range inFlight {
			wg.Go(func() {
				ctx := context.Background()
				req := limiter.Request{Key: "outage.example", Rule: rule}
				for {
					select {
					case <-stop:
						return
					default:
					}
					at, err := goes(ctx, l, req, time.Sleep)
					if !assert.NoError(t, err) {
						return
					}
					at.who = fmt.Sprintf("worker %d, %s", w, at.who)
					all.add(at)
					now := time.Now()
					sent.add(span{now, now, at.who})
				}
			})
		}
	}
	time.Sleep(2 * time.Second)
	killed := time.Now()
	srv.Kill()
	time.Sleep(3 * time.Second)
	restarted := time.Now()
	srv.Restart()
	time.Sleep(3 * time.Second)
	close(stop)
	wg.Wait()

	sorted := all.sorted()
	allowed := workers * ownPaceAllows(rule, window)
	end := sorted[len(sorted)-1].hi
	first := within(sorted, killed, window)
	during, duringAt := busiest(sorted, killed.Add(-window), restarted.Add(-window), window)
	back, backAt := busiest(sorted, restarted.Add(-window), end, window)
	t.Logf("first %v after the kill: %d starts; busiest %v window until the restart: %d, at %v after the kill; from then on: %d, at %v after the restart; the workers' own paces allow %d",
		window, first, window, during, duringAt.Sub(killed).Round(time.Millisecond), back, backAt.Sub(restarted).Round(time.Millisecond), allowed)
	went := sent.sorted()
	wentDuring, _ := busiest(went, killed.Add(-window), restarted.Add(-window), window)
	wentBack, _ := busiest(went, restarted.Add(-window), end, window)
	t.Logf("as the requests went (wake-ups' lateness included): first %v after the kill: %d; busiest window until the restart: %d, from then on: %d",
		window, within(went, killed, window), wentDuring, wentBack)
	// The counts are of the starts surely in a window, so that however
	// late a loaded machine returns from a call, the bound holds exactly
	// from the kill to the restart. Around the switch back to Redis one
	// start more is tolerated: Redis grants a worker's first turns after
	// its fallback's latest turn, counted as late as the latest start that
	// went (the handoff's lag), but the fallback's limiter.Memory moves each
	// waiting turn by how late the start before it went, so with several
	// turns waiting the latest can go later still, by the wake-ups'
	// lateness in between; the turn Redis granted cannot move with it.
	assert.LessOrEqual(t, first, allowed, "the first %v after the kill", window)
	if !assert.LessOrEqual(t, during, allowed, "every %v window from the kill to the restart", window) {
		logWindow(t, sorted, duringAt, window, killed)
	}
	if !assert.LessOrEqual(t, back, allowed+1, "every %v window from the restart on", window) {
		logWindow(t, sorted, backAt, window, killed)
	}
}

// TestGoesSpansPlanAndStart: goes, on a limiter.Memory at 5/s under
// synctest's clock, with wake-ups late as a loaded machine's. Four
// requests reserve at once: turns at 0, 200, 400 and 600 ms. The second
// wakes 30 ms late and goes at 230; the third, on time, is moved to 430,
// and wakes for that 10 ms late, going at 440; the fourth wakes 50 ms
// late, at 650, and goes at once, 210 ms after the third. Counted at its
// plan alone, as goes did before, it lay 170 ms after the third's plan of
// 430: two starts in a window of one pace, as the outage test counted 22
// starts in 2 s where the workers' paces allow 20, and they started 20.
func TestGoesSpansPlanAndStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rule := &limiter.Rule{Rate: 5, Burst: 1}
		req := limiter.Request{Key: "late.example", Rule: rule}
		m := limiter.NewMemory()
		begin := time.Now()
		ms := time.Millisecond
		late := [][]time.Duration{nil, {30 * ms}, {0, 10 * ms}, {50 * ms}}
		var all starts
		var wg sync.WaitGroup
		for i, late := range late {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * ms) // reserve in this order
				sleep := func(d time.Duration) {
					if len(late) > 0 {
						d += late[0]
						late = late[1:]
					}
					time.Sleep(d)
				}
				at, err := goes(context.Background(), m, req, sleep)
				assert.NoError(t, err)
				all.add(at)
			})
		}
		wg.Wait()
		sorted := all.sorted()
		var planned, went []time.Duration
		for _, s := range sorted {
			planned, went = append(planned, s.lo.Sub(begin).Round(ms)), append(went, s.hi.Sub(begin).Round(ms))
		}
		assert.Equal(t, []time.Duration{0, 200 * ms, 430 * ms, 600 * ms}, planned)
		assert.Equal(t, []time.Duration{0, 230 * ms, 440 * ms, 650 * ms}, went)
		pace := 200 * ms
		most, at := busiest(sorted, begin, sorted[len(sorted)-1].hi.Add(1), pace)
		assert.LessOrEqual(t, most, ownPaceAllows(rule, pace), "a window of one pace at %v", at.Sub(begin))
	})
}

// logWindow logs the starts surely in [at, at+w), from the kill.
func logWindow(t *testing.T, sorted []span, at time.Time, w time.Duration, killed time.Time) {
	for _, s := range sorted {
		if !s.lo.Before(at) && s.hi.Before(at.Add(w)) {
			t.Logf("%v +%v: %s", s.lo.Sub(killed), s.hi.Sub(s.lo), s.who)
		}
	}
}
