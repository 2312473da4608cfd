package redislimiter

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// testClockKey holds the time the scripts of a fake-clock Limiter read, in
// microseconds, so that a test sets Redis's clock as the ...At twins of
// limiter.Memory set theirs.
const testClockKey = "polite-test-clock"

const testClock = `local function clock()
  return tonumber(redis.call('GET', '` + testClockKey + `'))
end
`

// reserveScript runs l's reserve script on key under rule with jitter
// sample, in microseconds, as a reservation does, without this process's
// gap or its own pace.
func reserveScript(ctx context.Context, l *Limiter, key string, rule *limiter.Rule, maxWait time.Duration, sample int64) (reservation, error) {
	return l.reserveAfter(ctx, key, rule, maxWait, sample, 0, -1)
}

// sharedPause returns how long key's pause still lasts on l's Redis: a
// report under a rule without quotas, which reads the key's state alone.
func sharedPause(ctx context.Context, l *Limiter, key string) (time.Duration, error) {
	v, err := l.run(ctx, &l.scripts.reserve, l.keys(key), append(ruleArgs(limiter.Rule{}, 1), "report"))
	if err != nil {
		return 0, err
	}
	st, err := parseState(v, nil)
	return st.Paused, err
}

// fakeClock is a Limiter whose scripts read the time from testClockKey.
type fakeClock struct {
	*Limiter
	client *redis.Client
	epoch  int64 // microseconds at offset 0
	// slack is how far replay lets the waits differ from Memory's beyond
	// tolerance: 0, or slip, since the scripts do not make the waits of
	// up to slip that the starts made ask for, where Memory does.
	slack time.Duration
	// stepped, when set, is called after replay's every step, with the
	// step's index.
	stepped func(j int)
}

// testClockWithoutSlip is testClock with slip set to 0: the scripts then
// take every late start as Memory does, to the microsecond.
const testClockWithoutSlip = testClock + "slip = 0\n"

func newFakeClock(t *testing.T, srv *redistest.Server) *fakeClock {
	t.Helper()
	return newFakeClockOf(t, srv, testClock)
}

// newFakeClockOf returns a Limiter whose scripts read the clock that
// clock (testClock or testClockWithoutSlip) defines.
func newFakeClockOf(t *testing.T, srv *redistest.Server, clock string) *fakeClock {
	t.Helper()
	client := newClient(t, srv)
	l, err := newLimiter(client, clock, WithLogger(slog.New(slog.DiscardHandler)), WithTimeout(5*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return &fakeClock{Limiter: l, client: client, epoch: 1_700_000_000_000_000}
}

// at sets Redis's clock to offset d from the epoch.
func (f *fakeClock) at(t *testing.T, d time.Duration) {
	t.Helper()
	require.NoError(t, f.client.Set(context.Background(), testClockKey, f.epoch+int64(d/time.Microsecond), 0).Err())
}

// step is one call made to both limiters at offset at.
type step struct {
	at      time.Duration
	op      string // "reserve", "cancel", "confirm", "pause", "observe", "state" or "forget" (the key's state is lost)
	maxWait time.Duration
	turn    int                  // for "cancel" and "confirm": the index of the step that reserved
	pause   time.Duration        // for "pause": a 429's Retry-After
	observe *limiter.Observation // for "observe": what the server said; its response came at at
	sample  time.Duration        // the jitter sample both limiters draw in this step, below the rule's Jitter
	rule    *limiter.Rule        // overrides the scenario's rule
	// For "reserve", "state", "pause" and "observe": the caller's latest start, when
	// knowsLast says it knows one (limiter.Request's LastStart).
	lastStart time.Duration
	knowsLast bool
	// For "reserve": a turn that comes at once leaves at once (Memory
	// confirms it then; the scripts noted it then) unless leavesLate says
	// that a later "confirm" step is its departure.
	leavesLate bool
}

// tolerance covers rounding to microseconds in Redis against nanoseconds
// in Memory: both round a token's time up, the scripts to the
// microsecond, Memory to the nanosecond; and a time Go hands the scripts
// (a pause, an observed gap) is rounded up to the microsecond too.
const tolerance = 2 * time.Microsecond

func TestScriptsMatchMemory(t *testing.T) {
	srv := redistest.Start(t)
	perSecond := func(rate float64, burst int) limiter.Rule { return limiter.Rule{Rate: rate, Burst: burst} }
	reserve := func(at time.Duration) step { return step{at: at, op: "reserve"} }
	confirm := func(at time.Duration, turn int) step { return step{at: at, op: "confirm", turn: turn} }
	state := func(at time.Duration) step { return step{at: at, op: "state"} }
	ms := time.Millisecond
	twoQuotas := limiter.Rule{Rate: 100, Burst: 10, Quotas: []config.Quota{{Requests: 3, Window: time.Second}, {Requests: 5, Window: 3 * time.Second}}}
	threeOfOne := limiter.Rule{Rate: 100, Burst: 10, Quotas: []config.Quota{{Requests: 3, Window: time.Second}}}
	tests := []struct {
		name  string
		rule  limiter.Rule
		steps []step
	}{
		{"rate and burst", perSecond(10, 3), []step{
			reserve(0), reserve(0), reserve(0), reserve(0), reserve(0), reserve(0),
			{at: 30 * ms, op: "state"}, reserve(250 * ms), reserve(900 * ms), reserve(5 * time.Second), {at: 5 * time.Second, op: "state"},
		}},
		{"fractional rate", perSecond(3, 2), []step{
			reserve(0), reserve(0), reserve(0), reserve(10 * ms), reserve(700 * ms), reserve(701 * ms), {at: 702 * ms, op: "state"},
		}},
		{"min delay", limiter.Rule{MinDelay: 200 * ms}, []step{
			reserve(0), reserve(0), reserve(0), reserve(50 * ms), {at: 60 * ms, op: "state"}, reserve(2 * time.Second),
		}},
		{"rate and min delay", limiter.Rule{Rate: 5, Burst: 2, MinDelay: 100 * ms}, []step{
			reserve(0), reserve(0), reserve(0), reserve(0), reserve(150 * ms), reserve(3 * time.Second), reserve(3 * time.Second),
		}},
		{"quotas", twoQuotas, []step{
			reserve(0), reserve(0), reserve(0), reserve(0), {at: 10 * ms, op: "state"}, reserve(1500 * ms), reserve(1500 * ms),
			reserve(1600 * ms), {at: 1700 * ms, op: "state"}, reserve(10 * time.Second), {at: 10 * time.Second, op: "state"},
		}},
		{"pause", perSecond(10, 2), []step{
			{at: 0, op: "pause", pause: 500 * ms}, reserve(100 * ms), {at: 150 * ms, op: "pause", pause: 200 * ms},
			{at: 160 * ms, op: "state"}, reserve(200 * ms), {at: 300 * ms, op: "pause", pause: time.Second},
			reserve(400 * ms), {at: 400 * ms, op: "state"},
		}},
		{"cancel latest is exact", limiter.Rule{Rate: 10, Burst: 2, MinDelay: 50 * ms, Quotas: []config.Quota{{Requests: 2, Window: time.Second}}}, []step{
			reserve(0), reserve(0), reserve(0), {at: 10 * ms, op: "cancel", turn: 2}, {at: 10 * ms, op: "state"},
			reserve(20 * ms), {at: 30 * ms, op: "cancel", turn: 5}, {at: 30 * ms, op: "cancel", turn: 1},
			{at: 40 * ms, op: "state"}, reserve(40 * ms), reserve(40 * ms),
		}},
		{"cancel an older one", limiter.Rule{Rate: 10, Burst: 1, Quotas: []config.Quota{{Requests: 3, Window: time.Second}}}, []step{
			reserve(0), reserve(0), reserve(0), {at: 10 * ms, op: "cancel", turn: 1}, {at: 10 * ms, op: "state"},
			reserve(20 * ms), reserve(20 * ms), {at: 30 * ms, op: "state"},
		}},
		{"max wait refusal holds nothing", perSecond(1, 1), []step{
			reserve(0), {at: 0, op: "reserve", maxWait: 500 * ms}, {at: 0, op: "reserve", maxWait: time.Second},
			{at: 0, op: "reserve", maxWait: 1500 * ms}, {at: 10 * ms, op: "state"}, reserve(10 * ms),
		}},
		{"late start moves the turns after it", perSecond(4, 1), []step{
			reserve(0), reserve(0), reserve(0), confirm(450*ms, 1), confirm(500*ms, 2), state(600 * ms),
			confirm(700*ms, 2), state(700 * ms), reserve(700 * ms), confirm(1000*ms, 8), reserve(1000 * ms),
		}},
		{"late start with min delay and quota", limiter.Rule{Rate: 10, Burst: 2, MinDelay: 100 * ms, Quotas: []config.Quota{{Requests: 3, Window: time.Second}}}, []step{
			reserve(0), reserve(0), reserve(0), confirm(180*ms, 1), confirm(200*ms, 2), state(250 * ms),
			confirm(290*ms, 2), state(300 * ms), reserve(300 * ms), reserve(300 * ms),
		}},
		{"a turn that came at once leaves late", limiter.Rule{Rate: 10, Burst: 1, MinDelay: 100 * ms, Quotas: []config.Quota{{Requests: 5, Window: time.Second}}}, []step{
			{at: 0, op: "reserve", leavesLate: true}, reserve(50 * ms), confirm(250*ms, 0), confirm(260*ms, 1), state(270 * ms),
			confirm(350*ms, 1), state(360 * ms), reserve(360 * ms), confirm(450*ms, 7), state(600 * ms),
			{at: 600 * ms, op: "reserve", leavesLate: true}, reserve(610 * ms), confirm(800*ms, 10), confirm(810*ms, 11),
			confirm(900*ms, 11), reserve(900 * ms), state(910 * ms),
		}},
		{"late start after one that went at once", limiter.Rule{MinDelay: 100 * ms}, []step{
			reserve(0), reserve(0), reserve(250 * ms), confirm(300*ms, 1), state(310 * ms), confirm(350*ms, 1), reserve(350 * ms),
		}},
		{"a forgotten key counts the last start", limiter.Rule{Rate: 10, Burst: 2, MinDelay: 50 * ms, Quotas: []config.Quota{{Requests: 2, Window: time.Second}}}, []step{
			reserve(0), reserve(0), {at: 100 * ms, op: "forget"},
			{at: 110 * ms, op: "state", lastStart: 50 * ms, knowsLast: true},
			{at: 120 * ms, op: "reserve", lastStart: 50 * ms, knowsLast: true}, reserve(130 * ms), state(140 * ms),
			{at: 150 * ms, op: "forget"}, {at: 150 * ms, op: "reserve", maxWait: ms, lastStart: 150 * ms, knowsLast: true},
			{at: 150 * ms, op: "state", lastStart: 150 * ms, knowsLast: true}, {at: 2 * time.Second, op: "reserve", lastStart: 150 * ms, knowsLast: true},
		}},
		{"a Crawl-delay observed while a turn waits holds at its confirm", limiter.Rule{MinDelay: 100 * ms}, []step{
			reserve(0), reserve(0), {at: 50 * ms, op: "observe", observe: &limiter.Observation{Host: "https://a.example", CrawlDelay: 300 * ms}},
			confirm(100*ms, 1), state(150 * ms), confirm(300*ms, 1), reserve(300 * ms),
		}},
		{"a pause on a lost state keeps the caller's last start", limiter.Rule{MinDelay: 200 * ms, Quotas: []config.Quota{{Requests: 1, Window: time.Second}}}, []step{
			reserve(0), {at: 100 * ms, op: "forget"}, {at: 150 * ms, op: "pause", pause: 10 * ms, knowsLast: true},
			{at: 300 * ms, op: "state", knowsLast: true}, {at: 300 * ms, op: "reserve", knowsLast: true}, reserve(1100 * ms),
		}},
		{"quotas change", twoQuotas, []step{
			reserve(0), reserve(0), reserve(0), {at: 10 * ms, op: "state", rule: &threeOfOne},
			{at: 10 * ms, op: "reserve", rule: &threeOfOne}, reserve(20 * ms), reserve(20 * ms),
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeClock(t, srv)
			key := fmt.Sprintf("case%d.example", i)
			replay(t, f, key, tt.rule, tt.steps, memorySteps(t, key, tt.rule, tt.steps))
			assert.False(t, f.down())
		})
	}
}

// replay runs steps on f, each at its offset on Redis's clock and on the
// clock and jitter samples of f's own pace (what it observed of the
// server), and checks each answer against memory's, within tolerance. It
// returns whether all agreed.
func replay(t *testing.T, f *fakeClock, key string, rule limiter.Rule, steps []step, memory []memoryStep) bool {
	t.Helper()
	ctx := context.Background()
	script := map[int]*turn{}
	gone := map[int]bool{} // the turns whose requests went
	agreed := true
	t0 := time.Now()
	within := float64(tolerance + f.slack)
	defer func() { f.now, f.drawJitter = time.Now, rand.N[time.Duration] }()
	for j, s := range steps {
		rule := rule
		if s.rule != nil {
			rule = *s.rule
		}
		f.at(t, s.at)
		f.now = func() time.Time { return t0.Add(s.at) }
		f.drawJitter = func(time.Duration) time.Duration { return s.sample }
		req := s.request(key, &rule, t0)
		want := &memory[j]
		where := fmt.Sprintf("step %d (%s at %v)", j, s.op, s.at)
		switch s.op {
		case "reserve":
			got, err := f.Reserve(ctx, req)
			require.NoError(t, err, where)
			agreed = assert.Equal(t, want.res.OK(), got.OK(), where) &&
				assert.InDelta(t, want.wait, got.Wait(), within, where+": wait") &&
				assert.Equal(t, want.reason, got.Reason(), where+": reason") && agreed
			if got.OK() {
				script[j] = got.Turn().(*turn)
			}
		case "cancel":
			require.NoError(t, f.cancel(ctx, script[s.turn]), where)
		case "confirm":
			if gone[s.turn] {
				// Memory made a wait of up to slip that the scripts did not:
				// its request goes now, the scripts' went.
				agreed = assert.InDelta(t, want.more, 0, within, where+": more") && agreed
				break
			}
			var res limiter.Reservation
			more, _, err := script[s.turn].confirm(ctx, &res)
			require.NoError(t, err, where)
			if again, ok := res.Turn().(*turn); ok {
				script[s.turn] = again // held anew
			}
			gone[s.turn] = more == 0
			agreed = assert.InDelta(t, want.more, more, within, where+": more") && agreed
		case "pause", "observe":
			_, err := f.Observe(ctx, req, s.observation(t0))
			require.NoError(t, err, where)
		case "forget":
			require.NoError(t, f.client.Del(ctx, f.keys(key)...).Err(), where)
			f.local = limiter.NewMemory() // what this process observed goes too, as Memory's does
		case "state":
			got, err := f.State(ctx, req)
			require.NoError(t, err, where)
			agreed = assertSameState(t, want.state, want.at, got, time.Now(), within, where) && agreed
		}
		if !agreed {
			return false
		}
		if f.stepped != nil {
			f.stepped(j)
		}
	}
	return true
}

// request is the limiter.Request of s on key under rule, with offsets
// from t0.
func (s *step) request(key string, rule *limiter.Rule, t0 time.Time) limiter.Request {
	req := limiter.Request{Key: key, Rule: rule, MaxWait: s.maxWait}
	if s.knowsLast {
		req.LastStart = t0.Add(s.lastStart)
	}
	return req
}

// observation is what the server said in s, a "pause" or an "observe",
// with offsets from t0.
func (s *step) observation(t0 time.Time) limiter.Observation {
	if s.op == "pause" {
		return limiter.Observation{Status: 429, RetryAfter: s.pause}
	}
	o := *s.observe
	if o.Latency > 0 {
		o.Sent = t0.Add(s.at - o.Latency) // its response came at at
	}
	return o
}

// memoryStep is what limiter.Memory made of a step.
type memoryStep struct {
	res    limiter.Reservation // of a "reserve"
	wait   time.Duration       // the wait a "reserve" returned (a later confirm may add to res.Wait)
	reason limiter.Reason      // and its reason (a later confirm may hold the turn anew)
	more   time.Duration       // the wait a "confirm" returned
	state  limiter.State       // of a "state", at at
	at     time.Time
}

// memorySteps runs steps on a limiter.Memory, each at its offset: in a
// synctest bubble, so that Confirm, which reads the clock, runs at it too.
func memorySteps(t *testing.T, key string, rule limiter.Rule, steps []step) []memoryStep {
	var run *memoryRun
	synctest.Test(t, func(t *testing.T) {
		run = newMemoryRun(t, key, rule)
		for _, s := range steps {
			run.do(s)
		}
	})
	return run.out
}

// memoryRun runs steps on a limiter.Memory in a synctest bubble, and
// keeps what it made of each.
type memoryRun struct {
	t    *testing.T
	key  string
	rule limiter.Rule
	m    *limiter.Memory
	t0   time.Time
	out  []memoryStep

	sample time.Duration // the jitter sample of the step running
}

func newMemoryRun(t *testing.T, key string, rule limiter.Rule) *memoryRun {
	r := &memoryRun{t: t, key: key, rule: rule, t0: time.Now()}
	r.m = r.newMemory()
	return r
}

// newMemory returns a Memory that draws the jitter samples of the step
// run last.
func (r *memoryRun) newMemory() *limiter.Memory {
	m := limiter.NewMemory()
	m.SetJitterSource(func(time.Duration) time.Duration { return r.sample })
	return m
}

// do runs step s at its offset, which is no earlier than the step before,
// and returns what Memory made of it.
func (r *memoryRun) do(s step) *memoryStep {
	rule := r.rule
	if s.rule != nil {
		rule = *s.rule
	}
	time.Sleep(time.Until(r.t0.Add(s.at)))
	now := r.t0.Add(s.at)
	req := s.request(r.key, &rule, r.t0)
	r.sample = s.sample
	r.out = append(r.out, memoryStep{at: now})
	o := &r.out[len(r.out)-1]
	switch s.op {
	case "reserve":
		o.res = r.m.ReserveAt(req, now)
		o.wait, o.reason = o.res.Wait(), o.res.Reason()
		if o.res.OK() && o.wait == 0 && !s.leavesLate {
			// It leaves at once: the departure gate, at the same time.
			more, err := o.res.Confirm(context.Background(), nil)
			require.NoError(r.t, err)
			require.Zero(r.t, more, "a turn that comes at once may leave")
		}
	case "cancel":
		require.NoError(r.t, r.out[s.turn].res.Cancel(context.Background()))
	case "confirm":
		more, err := r.out[s.turn].res.Confirm(context.Background(), nil)
		require.NoError(r.t, err)
		o.more = more
	case "pause", "observe":
		r.m.ObserveAt(req, s.observation(r.t0), now)
	case "forget":
		r.m = r.newMemory()
	case "state":
		o.state = r.m.StateAt(req, now)
	}
	return o
}

// assertSameState compares Memory's state at wantAt with the script's,
// read at gotAt: times as durations from each's moment.
func assertSameState(t *testing.T, want limiter.State, wantAt time.Time, got limiter.State, gotAt time.Time, within float64, where string) bool {
	t.Helper()
	ok := assert.InDelta(t, want.Wait, got.Wait, within, where+": wait") &&
		assert.Equal(t, want.Reason, got.Reason, where+": reason") &&
		assert.InDelta(t, want.Paused, got.Paused, float64(tolerance), where+": paused")
	require.Len(t, got.Quotas, len(want.Quotas), where)
	for i := range want.Quotas {
		ok = ok && assert.Equal(t, want.Quotas[i].Remaining, got.Quotas[i].Remaining, where+": quota remaining") &&
			assert.Equal(t, want.Quotas[i].NextFree.IsZero(), got.Quotas[i].NextFree.IsZero(), where+": quota next free")
		if ok && !want.Quotas[i].NextFree.IsZero() {
			// parseState read the clock before gotAt, a moment that a
			// loaded machine stretches: the script's time to the next free
			// slot may seem shorter by that much, never longer.
			early := float64(want.Quotas[i].NextFree.Sub(wantAt) - got.Quotas[i].NextFree.Sub(gotAt))
			ok = assert.GreaterOrEqual(t, early, -within, where+": quota next free, later than Memory's") &&
				assert.LessOrEqual(t, early, within+float64(100*time.Millisecond), where+": quota next free, earlier than Memory's")
		}
	}
	return ok
}

// TestJitterAddsToTheGap checks the script against schedule.go's rule with
// a given sample: jitter lengthens a wait that another rule set, and
// otherwise keeps the gap since the latest start at least the sample.
func TestJitterAddsToTheGap(t *testing.T) {
	srv := redistest.Start(t)
	f := newFakeClock(t, srv)
	ms := time.Millisecond
	minDelay := limiter.Rule{MinDelay: 100 * ms, Jitter: 50 * ms}
	bucket := limiter.Rule{Rate: 100, Burst: 10, Jitter: 50 * ms}
	tests := []struct {
		key    string
		rule   limiter.Rule
		at     time.Duration
		sample time.Duration
		wait   time.Duration
		reason limiter.Reason
	}{
		{"a", minDelay, 0, 30 * ms, 0, ""},                 // no earlier start: no gap to widen
		{"a", minDelay, 0, 20 * ms, 120 * ms, "min_delay"}, // min delay, then jitter on top
		{"a", minDelay, 500 * ms, 10 * ms, 0, ""},          // gap already longer than delay + sample
		{"b", bucket, 0, 40 * ms, 0, ""},
		{"b", bucket, time.Millisecond, 40 * ms, 39 * ms, "jitter"}, // jitter alone sets the gap
		{"b", bucket, 200 * ms, 40 * ms, 0, ""},
	}
	for i, tt := range tests {
		f.at(t, tt.at)
		res, err := reserveScript(context.Background(), f.Limiter, tt.key, &tt.rule, 0, int64(tt.sample/time.Microsecond))
		require.NoError(t, err)
		assert.Equal(t, tt.wait, res.wait, "case %d", i)
		assert.Equal(t, tt.reason, limiter.Reason(res.reason), "case %d", i)
	}
}

// dumpState returns a domain's stored pace as text: tokens, tokens' time,
// latest start, paused until, quiet at; a domain without state reads as a
// fresh one.
var dumpState = redis.NewScript(luaState + `
local s = load_state(KEYS)
local function f(x)
  if x == nil then return 'none' end
  return string.format('%.17g', x)
end
return {f(s.tokens), f(s.tokens_at), f(s.latest), f(s.paused_until), f(s.quiet_at)}
`)

// TestCancelLatestRestoresState checks that undoing the latest reservation
// leaves the stored pace exactly as before it. Each one waits: the record
// of a turn that went at once stays when it is given back (cancel.lua),
// and with it the time the domain is quiet.
func TestCancelLatestRestoresState(t *testing.T) {
	srv := redistest.Start(t)
	f := newFakeClock(t, srv)
	ctx := context.Background()
	rule := limiter.Rule{Rate: 3, Burst: 2, MinDelay: 70 * time.Millisecond, Quotas: []config.Quota{{Requests: 2, Window: time.Second}}}
	const key = "undo.example"
	keys := f.keys(key)
	snapshot := func() ([]string, []string) {
		state, err := dumpState.Run(ctx, f.client, keys[:1]).StringSlice()
		require.NoError(t, err)
		list, err := f.client.LRange(ctx, keys[1], 0, -1).Result()
		require.NoError(t, err)
		return state, list
	}
	f.at(t, 0)
	first, err := f.Reserve(ctx, limiter.Request{Key: key, Rule: &rule})
	require.NoError(t, err)
	require.Zero(t, first.Wait())
	for i := range 4 {
		f.at(t, time.Duration(i)*10*time.Millisecond)
		wantState, wantList := snapshot()
		res, err := f.Reserve(ctx, limiter.Request{Key: key, Rule: &rule})
		require.NoError(t, err)
		require.True(t, res.OK())
		require.IsType(t, &turn{}, res.Turn())
		changed, _ := snapshot()
		require.NotEqual(t, wantState, changed)
		require.NoError(t, res.Cancel(ctx))
		gotState, gotList := snapshot()
		assert.Equal(t, wantState, gotState, "reservation %d", i)
		assert.Equal(t, wantList, gotList, "reservation %d", i)
		// Keep this one, so that the next starts from a used state.
		_, err = f.Reserve(ctx, limiter.Request{Key: key, Rule: &rule})
		require.NoError(t, err)
	}
}
