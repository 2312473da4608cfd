package redislimiter

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// twoWorkers returns two Limiters on srv, each with a client of its own,
// as two worker processes would have.
func twoWorkers(t *testing.T, srv *redistest.Server) (a, b *Limiter) {
	worker := func() *Limiter {
		l, err := New(newClient(t, srv), WithLogger(slog.New(slog.DiscardHandler)), WithTimeout(time.Second))
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
		return l
	}
	return worker(), worker()
}

// start reserves key under rule on l, which must grant a turn, and
// returns it.
func start(t *testing.T, l *Limiter, key string, rule *limiter.Rule, lastStart time.Time) *turn {
	t.Helper()
	res, err := l.Reserve(context.Background(), limiter.Request{Key: key, Rule: rule, LastStart: lastStart})
	require.NoError(t, err)
	require.True(t, res.OK())
	require.False(t, res.Degraded())
	return res.Turn().(*turn)
}

// TestDeletedStateKeepsTheGap: worker A sends; the domain's state is
// deleted, as allkeys-lru evicts it; worker B's turn still keeps the min
// delay from A's start, which the domain's record of its latest start
// holds. With every key of the domain deleted, Redis knows nothing: A's
// own next turn keeps the gap from its latest start (LastStart), B's does
// not (the package doc says so).
func TestDeletedStateKeepsTheGap(t *testing.T) {
	srv := redistest.Start(t)
	a, b := twoWorkers(t, srv)
	admin := newClient(t, srv)
	ctx := context.Background()
	rule := &limiter.Rule{MinDelay: 800 * time.Millisecond}
	gap := rule.MinDelay.Microseconds()

	first := start(t, a, "evicted.example", rule, time.Time{})
	require.NoError(t, admin.Del(ctx, a.keys("evicted.example")[0]).Err())
	second := start(t, b, "evicted.example", rule, time.Time{})
	assert.GreaterOrEqual(t, second.start-first.start, gap, "B's start after A's, on Redis's clock (µs)")

	sent := time.Now()
	first = start(t, a, "gone.example", rule, time.Time{})
	require.NoError(t, admin.Del(ctx, a.keys("gone.example")...).Err())
	own := start(t, a, "gone.example", rule, sent)
	assert.GreaterOrEqual(t, own.start-first.start, gap-int64(time.Since(sent)/time.Microsecond), "A's next start after its own latest")
}

// TestEvictionUnderMemoryPressure: worker A sends to 200 domains (min
// delay 5s) on a Redis with maxmemory and allkeys-lru; other data fills
// it until Redis has evicted at least half of the domains' states. Then
// (memory freed, so that no eviction happens meanwhile) worker B sends
// to each: every domain whose state or record of its latest start is left
// keeps its gap from A's start; a domain Redis lost both keys of does not,
// as the package doc says.
func TestEvictionUnderMemoryPressure(t *testing.T) {
	srv := redistest.Start(t, "--maxmemory", "8mb", "--maxmemory-policy", "allkeys-lru")
	a, b := twoWorkers(t, srv)
	admin := newClient(t, srv)
	ctx := context.Background()
	rule := &limiter.Rule{MinDelay: 5 * time.Second}
	const domains = 200
	firsts := make([]*turn, domains)
	for d := range domains {
		firsts[d] = start(t, a, fmt.Sprintf("d%d.example", d), rule, time.Time{})
	}
	exists := func(key string) bool {
		n, err := admin.Exists(ctx, key).Result()
		require.NoError(t, err)
		return n == 1
	}
	statesLeft := func() int {
		n := 0
		for d := range domains {
			if exists(a.keys(fmt.Sprintf("d%d.example", d))[0]) {
				n++
			}
		}
		return n
	}
	filler := strings.Repeat("x", 4096)
	for i := 0; statesLeft() > domains/2; i++ {
		require.Less(t, i, 100, "the states are evicted")
		pipe := admin.Pipeline()
		for j := range 100 {
			pipe.Set(ctx, fmt.Sprintf("filler:%d:%d", i, j), filler, 0)
		}
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
	}
	require.NoError(t, admin.ConfigSet(ctx, "maxmemory", "0").Err())

	var recordOnly, lost int
	for d := range domains {
		domain := fmt.Sprintf("d%d.example", d)
		keys := a.keys(domain)
		state, record := exists(keys[0]), exists(keys[2])
		second := start(t, b, domain, rule, time.Time{})
		switch {
		case !state && record:
			recordOnly++
			fallthrough
		case state:
			assert.GreaterOrEqual(t, second.start-firsts[d].start, rule.MinDelay.Microseconds(), "%s (state kept: %v), on Redis's clock (µs)", domain, state)
		default:
			lost++
		}
	}
	t.Logf("%d domains: %d states evicted with their record kept, %d with both keys evicted", domains, recordOnly, lost)
	assert.Positive(t, recordOnly, "some state evicted, its record kept")
}

// TestRecordOnlyWhereItKeepsAGap: the record of a domain's latest start is
// written only under a rule where that start, counted alone into a fresh
// state, holds the next one back (a min delay, jitter, a burst of 1); under
// a bucket of more than one token a lost state starts full anyway, and the
// record would cost every reservation a write for nothing.
func TestRecordOnlyWhereItKeepsAGap(t *testing.T) {
	srv := redistest.Start(t)
	l, _ := twoWorkers(t, srv)
	admin := newClient(t, srv)
	ctx := context.Background()
	for _, tt := range []struct {
		name     string
		rule     limiter.Rule
		recorded bool
	}{
		{"min delay", limiter.Rule{MinDelay: time.Second}, true},
		{"jitter", limiter.Rule{Jitter: time.Second}, true},
		{"burst of 1", limiter.Rule{Rate: 1, Burst: 1}, true},
		{"burst of 2", limiter.Rule{Rate: 1, Burst: 2}, false},
		{"no limit", limiter.Rule{}, false},
	} {
		domain := strings.ReplaceAll(tt.name, " ", "-") + ".example"
		start(t, l, domain, &tt.rule, time.Time{})
		n, err := admin.Exists(ctx, l.keys(domain)[2]).Result()
		require.NoError(t, err)
		assert.Equal(t, tt.recorded, n == 1, tt.name)
	}
}
