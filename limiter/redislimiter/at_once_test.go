package redislimiter

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// atOnceCount is the key where the scripts of newAtOnceCounting count the
// calls that reserve_at_once took.
const atOnceCount = "polite-test-at-once"

// TestReserveAtOnceIsTheGeneralPath replays the scenarios that
// TestGeneratedScriptsMatchMemory generates on two Limiters: one whose
// reserve takes its commonest calls in reserve_at_once (at_once.lua), and
// one whose reserve_at_once declines every call, so that every call takes
// the general path. After every step both must hold the same bytes in
// Redis: the state (its turns, quiet time and expiry included), the record
// of the latest start and the history, and their times to live. Over 100
// scenarios or more, the fast path must have taken a twentieth of the
// reservations at least (a tenth, in the default 300), or the test proves
// little.
func TestReserveAtOnceIsTheGeneralPath(t *testing.T) {
	srv := redistest.Start(t)
	fast := newAtOnceCounting(t, srv)
	general := newWithAtOnce(t, srv, "local function reserve_at_once() end\n")
	fast.slack, general.slack = slip, slip // as TestGeneratedScriptsMatchMemory runs them with slip
	ctx := context.Background()
	require.NoError(t, fast.client.Del(ctx, atOnceCount).Err())
	reserves := 0
	for i := range *scenarios {
		seed := *firstSeed + uint64(i)
		rng := rand.New(rand.NewPCG(seed, 30))
		rule := randomRule(rng)
		// reserve_at_once takes no call under a quota, nor one that waits:
		// half the scenarios have no quota, and half of those a min delay
		// twenty times as short, without adaptive pacing or backoff on
		// errors, so that more calls come at once. (A pace much quicker than
		// randomRule's meets rounding differences between the scripts and
		// Memory, which replay would report.)
		if i%2 == 0 {
			rule.Quotas = nil
		}
		if i%4 == 0 {
			rule.MinDelay, rule.Adaptive, rule.ErrorStatuses = rule.MinDelay/20, false, []int{}
		}
		var steps []step
		var memory []memoryStep
		synctest.Test(t, func(t *testing.T) {
			steps, memory = generateSteps(t, rng, fmt.Sprintf("at-once%d.example", seed), rule, slip)
		})
		for _, s := range steps {
			if s.op == "reserve" {
				reserves++
			}
		}
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			var fastStates, generalStates []stored
			for _, run := range []struct {
				f      *fakeClock
				key    string
				states *[]stored
			}{{fast, fmt.Sprintf("at-once%d.example", seed), &fastStates}, {general, fmt.Sprintf("general%d.example", seed), &generalStates}} {
				run.f.stepped = func(int) { *run.states = append(*run.states, storedState(t, run.f, run.key)) }
				require.True(t, replay(t, run.f, run.key, rule, steps, memory), run.key)
				run.f.stepped = nil
			}
			for j := range min(len(fastStates), len(generalStates)) {
				if !assertSameStored(t, generalStates[j], fastStates[j], j) {
					t.Logf("rule %s, steps:\n%s", describeRule(rule), describeSteps(steps))
					return
				}
			}
			assert.Len(t, fastStates, len(generalStates))
		})
	}
	taken, err := fast.client.Get(ctx, atOnceCount).Int()
	if !errors.Is(err, redis.Nil) {
		require.NoError(t, err)
	}
	t.Logf("reserve_at_once took %d of %d reservations", taken, reserves)
	if *scenarios >= 100 {
		assert.Greater(t, taken, reserves/20, "reserve_at_once took too few reservations to test it")
	}
}

// newWithAtOnce returns a fake-clock Limiter whose scripts define
// reserve_at_once as atOnce does.
func newWithAtOnce(t *testing.T, srv *redistest.Server, atOnce string) *fakeClock {
	was := luaAtOnce
	luaAtOnce = atOnce
	defer func() { luaAtOnce = was }()
	return newFakeClock(t, srv)
}

// newAtOnceCounting returns a fake-clock Limiter whose reserve_at_once
// counts the calls it takes in atOnceCount.
func newAtOnceCounting(t *testing.T, srv *redistest.Server) *fakeClock {
	return newWithAtOnce(t, srv, luaAtOnce+`
local reserve_at_once_uncounted = reserve_at_once
local function reserve_at_once(...)
  local serial = reserve_at_once_uncounted(...)
  if serial then
    redis.call('INCR', '`+atOnceCount+`')
  end
  return serial
end
`)
}

// stored is what Redis holds of a domain's: its state, the record of its
// latest start and its history, written out, and each key's time to live
// (-1: none; -2: no key).
type stored struct {
	text string
	ttls []time.Duration
}

// storedState returns what Redis holds of key's for f.
func storedState(t *testing.T, f *fakeClock, key string) stored {
	ctx := context.Background()
	keys := f.keys(key)
	state, err := f.client.HGetAll(ctx, keys[0]).Result()
	require.NoError(t, err)
	record, err := f.client.HGetAll(ctx, keys[2]).Result()
	require.NoError(t, err)
	history, err := f.client.LRange(ctx, keys[1], 0, -1).Result()
	require.NoError(t, err)
	s := stored{text: fmt.Sprintf("state %q record %q history %s", state, record, strings.Join(history, " "))}
	for _, k := range keys {
		ttl, err := f.client.PTTL(ctx, k).Result()
		require.NoError(t, err)
		s.ttls = append(s.ttls, ttl)
	}
	return s
}

// assertSameStored checks that want and got hold the same, their times to
// live within a second: they count down in real time from when they were
// set, and the two Limiters run one after the other.
func assertSameStored(t *testing.T, want, got stored, j int) bool {
	t.Helper()
	ok := assert.Equal(t, want.text, got.text, "step %d", j)
	for i := range want.ttls {
		if want.ttls[i] < 0 || got.ttls[i] < 0 {
			ok = ok && assert.Equal(t, want.ttls[i], got.ttls[i], "step %d: key %d's time to live", j, i)
		} else {
			ok = ok && assert.InDelta(t, want.ttls[i], got.ttls[i], float64(time.Second), "step %d: key %d's time to live", j, i)
		}
	}
	return ok
}
