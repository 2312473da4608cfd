package redislimiter

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// roundTrips counts the round trips that carry the Limiter's scripts: a
// command alone, or a pipeline, and the scripts the pipelines carry.
type roundTrips struct {
	alone, pipelines, piped atomic.Int64
}

func isScript(cmd redis.Cmder) bool { return cmd.Name() == "fcall" || cmd.Name() == "evalsha" }

func (h *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if isScript(cmd) {
			h.alone.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (h *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if slices.ContainsFunc(cmds, isScript) {
			h.pipelines.Add(1)
			h.piped.Add(int64(len(cmds)))
		}
		return next(ctx, cmds)
	}
}

// newCountedLimiter returns a Limiter on srv whose round trips h counts,
// once its library is loaded, so that each call is one command. Its
// timeout is generous, a second, so that a loaded machine's slow round
// trips do not make an outage of these tests.
func newCountedLimiter(t *testing.T, srv *redistest.Server, logs *logRecorder) (*Limiter, *roundTrips) {
	client := newClient(t, srv)
	h := &roundTrips{}
	client.AddHook(h)
	l, err := New(client, WithLogger(slog.New(logs)), WithTimeout(time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	require.Eventually(t, l.functions.Load, 5*time.Second, time.Millisecond, "the library is loaded")
	return l, h
}

// TestLoneCallerGoesAlone: calls one after another each go at once, in a
// round trip of their own; none waits to be batched.
func TestLoneCallerGoesAlone(t *testing.T) {
	l, h := newCountedLimiter(t, redistest.Start(t), &logRecorder{})
	rule := limiter.Rule{Rate: 1000, Burst: 1000}
	for i := range 50 {
		res, err := l.Reserve(context.Background(), limiter.Request{Key: fmt.Sprintf("d%d.example", i), Rule: &rule})
		require.NoError(t, err)
		require.False(t, res.Degraded())
	}
	assert.Equal(t, int64(50), h.alone.Load())
	assert.Zero(t, h.pipelines.Load())
}

// TestConcurrentCallsShareRoundTrips: 64 callers at once go out in
// pipelines, far fewer round trips than calls, and the pace holds: the
// turns Redis hands out for one domain, batched or not, keep its min
// delay, on Redis's clock.
func TestConcurrentCallsShareRoundTrips(t *testing.T) {
	logs := &logRecorder{}
	l, h := newCountedLimiter(t, redistest.Start(t), logs)
	const callers, each = 64, 20
	spread := limiter.Rule{Rate: 1000, Burst: 1000}
	paced := limiter.Rule{MinDelay: 50 * time.Millisecond}
	var mu sync.Mutex
	var starts []int64
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			for i := range each {
				req := limiter.Request{Key: fmt.Sprintf("d%d-%d.example", c, i), Rule: &spread}
				if i == 0 {
					req = limiter.Request{Key: "paced.example", Rule: &paced}
				}
				res, err := l.Reserve(context.Background(), req)
				if !assert.NoError(t, err) || !assert.False(t, res.Degraded()) || !assert.True(t, res.OK()) {
					return
				}
				if i == 0 {
					mu.Lock()
					starts = append(starts, res.Turn().(*turn).start)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	alone, pipelines, piped := h.alone.Load(), h.pipelines.Load(), h.piped.Load()
	t.Logf("%d calls: %d alone, %d in %d pipelines", callers*each, alone, piped, pipelines)
	assert.Equal(t, int64(callers*each), alone+piped, "every call went once")
	assert.Less(t, alone+pipelines, int64(callers*each/2), "round trips")
	slices.Sort(starts)
	for i := 1; i < len(starts); i++ {
		assert.GreaterOrEqual(t, starts[i]-starts[i-1], paced.MinDelay.Microseconds(), "turns %d and %d of paced.example, on Redis's clock", i-1, i)
	}
	assert.Zero(t, logs.count(downLog))
}

// TestCancelledCallsLeaveTheBatchAlone: among 64 callers, half give up
// within a couple of milliseconds, while queued or while their batch is
// under way; the others' calls all go through Redis, and no outage is
// declared.
func TestCancelledCallsLeaveTheBatchAlone(t *testing.T) {
	logs := &logRecorder{}
	l, _ := newCountedLimiter(t, redistest.Start(t), logs)
	rule := limiter.Rule{Rate: 1000, Burst: 1000}
	var wg sync.WaitGroup
	for c := range 64 {
		wg.Go(func() {
			for i := range 20 {
				ctx := context.Background()
				if c%2 == 1 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, time.Duration(rand.IntN(2000))*time.Microsecond)
					defer cancel()
				}
				res, err := l.Reserve(ctx, limiter.Request{Key: fmt.Sprintf("d%d-%d.example", c, i), Rule: &rule})
				if c%2 == 0 {
					assert.NoError(t, err)
					assert.False(t, res.Degraded())
				}
			}
		})
	}
	wg.Wait()
	assert.False(t, l.down())
	assert.Zero(t, logs.count(downLog), "%s", logs)
}

// TestBatchContext: a batch of calls on one shared deadline has that
// deadline, values and all, and ends when it is cut; a batch with a call
// of its own context ends only once every call's context has ended, or
// the grace after the latest deadline.
func TestBatchContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 160 * time.Millisecond
		ds := newDeadlines(timeout)
		plain, cancel := ds.bound(context.Background())
		defer cancel()
		values, cancel := ds.bound(context.WithValue(context.Background(), ctxKey{}, "v"))
		defer cancel()
		parent, cancelParent := context.WithCancel(context.Background())
		own, cancelOwn := ds.bound(parent)
		defer cancelOwn()

		shared, stop := batchContext([]*queued{{ctx: values}, {ctx: plain}}, ds.slot)
		defer stop()
		assert.Same(t, sharedDeadline(plain), sharedDeadline(shared), "the calls' own deadline")
		assert.Equal(t, "v", shared.Value(ctxKey{}), "the first call's values")

		mixed, stop := batchContext([]*queued{{ctx: plain}, {ctx: own}}, ds.slot)
		defer stop()
		assert.Nil(t, sharedDeadline(mixed))
		cancelParent()
		synctest.Wait()
		assert.NoError(t, mixed.Err(), "one call cancelled leaves the others' batch alone")

		ds.cut()
		synctest.Wait()
		assert.Error(t, shared.Err(), "the cut ends the shared batch")
		assert.Error(t, mixed.Err(), "every call's context has ended")
	})
}
