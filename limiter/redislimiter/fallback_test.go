package redislimiter

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// logRecorder is a slog.Handler that keeps the messages it handles.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logRecorder) WithGroup(string) slog.Handler            { return h }
func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	msg := r.Time.Format("15:04:05.000 ") + r.Level.String() + " " + r.Message
	r.Attrs(func(a slog.Attr) bool {
		msg += " " + a.String()
		return true
	})
	h.msgs = append(h.msgs, msg)
	return nil
}

// String returns the messages, one per line.
func (h *logRecorder) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.msgs, "\n")
}

// count returns how many messages contain s.
func (h *logRecorder) count(s string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.msgs {
		if strings.Contains(m, s) {
			n++
		}
	}
	return n
}

const (
	downLog = " WARN redislimiter: redis unavailable"
	upLog   = " INFO redislimiter: redis answers again"
)

// newTestLimiter returns a Limiter on srv with opts, probing every 50ms,
// with a timeout of 2s unless opts set one, which a loaded machine does not
// reach: its outages are the ones a test makes, and its client finds a
// dead Redis at once (see newClient). It logs to the recorder it returns.
func newTestLimiter(t *testing.T, srv *redistest.Server, opts ...Option) (*Limiter, *logRecorder) {
	t.Helper()
	logs := &logRecorder{}
	opts = append([]Option{WithTimeout(2 * time.Second)}, opts...)
	opts = append(opts, WithLogger(slog.New(logs)), WithProbeInterval(50*time.Millisecond))
	l, err := New(newClient(t, srv), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l, logs
}

// newClient returns a client of srv, closed when the test ends. It dials
// once per attempt, not five times 100ms apart, so that a call to a
// killed Redis fails at once rather than at the Limiter's timeout.
func newClient(tb testing.TB, srv *redistest.Server) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), DialerRetries: 1})
	tb.Cleanup(func() { c.Close() })
	return c
}

// eventuallyShared waits until the Limiter uses Redis again.
func eventuallyShared(t *testing.T, l *Limiter) {
	t.Helper()
	require.Eventually(t, func() bool { return !l.down() }, 5*time.Second, 10*time.Millisecond, "back to the shared pace")
}

// recoveryLogged waits until the Limiter logs the recovery, once the
// shared pace has held steady, and checks that it does so once.
func recoveryLogged(t *testing.T, logs *logRecorder) {
	t.Helper()
	require.Eventually(t, func() bool { return logs.count(upLog) > 0 }, steady+5*time.Second, 10*time.Millisecond, "recovery logged")
	assert.Equal(t, 1, logs.count(upLog), "recovery logged once")
}

func TestFallbackPacesInProcessWhileRedisIsDown(t *testing.T) {
	srv := redistest.Start(t)
	l, logs := newTestLimiter(t, srv)
	ctx := context.Background()
	req := limiter.Request{Key: "down.example", Rule: &limiter.Rule{Rate: 10, Burst: 1}}

	sharedBegan := time.Now()
	res, err := l.Reserve(ctx, req)
	require.NoError(t, err)
	sharedEnded := time.Now()
	require.False(t, res.Degraded())
	require.Zero(t, res.Wait())

	srv.Kill()
	var waits []time.Duration
	var began, ended []time.Time
	for range 3 {
		began = append(began, time.Now())
		res, err = l.Reserve(ctx, req)
		ended = append(ended, time.Now())
		require.NoError(t, err, "no request fails because Redis is down")
		assert.Less(t, ended[len(ended)-1].Sub(began[len(began)-1]), time.Second, "a call to a dead Redis fails at once")
		assert.True(t, res.OK())
		assert.True(t, res.Degraded())
		waits = append(waits, res.Wait())
	}
	// The fallback paces with the same rule, from the turn Redis granted:
	// the first request goes 100ms after that turn, or at once if the
	// failed call took longer, and the others 100ms apart. A request waits
	// for its start less the time between the reservations, which the calls
	// bracket.
	const gap = 100 * time.Millisecond
	assert.LessOrEqual(t, waits[0], max(0, gap-began[0].Sub(sharedEnded)), "request 0")
	assert.GreaterOrEqual(t, waits[0], max(0, gap-ended[0].Sub(sharedBegan)), "request 0")
	for i := 1; i < 3; i++ {
		due := waits[0] + time.Duration(i)*gap
		assert.LessOrEqual(t, waits[i], due-began[i].Sub(ended[0]), "request %d", i)
		assert.GreaterOrEqual(t, waits[i], due-ended[i].Sub(began[0]), "request %d", i)
	}
	st, err := l.State(ctx, req)
	require.NoError(t, err)
	assert.Positive(t, st.Wait, "State reports the fallback")
	require.NoError(t, res.Cancel(ctx), "the fallback takes back its own reservations")
	added, err := l.Observe(ctx, req, limiter.Observation{Status: http.StatusTooManyRequests, RetryAfter: 10 * time.Second})
	require.NoError(t, err)
	assert.Equal(t, 10*time.Second, added)
	assert.Equal(t, 1, logs.count(downLog), "logged once")
	assert.Zero(t, logs.count(upLog))

	srv.Restart()
	eventuallyShared(t, l)
	res, err = l.Reserve(ctx, req)
	require.NoError(t, err)
	assert.False(t, res.Degraded())
	assert.Equal(t, limiter.Reason("retry-after"), res.Reason(), "the pause made while Redis was away reached it")
	assert.Greater(t, res.Wait(), 5*time.Second)
	assert.Equal(t, 1, logs.count(downLog))
	recoveryLogged(t, logs)
}

func TestSlowRedisCountsAsDown(t *testing.T) {
	srv := redistest.Start(t)
	for _, deadlines := range []bool{false, true} {
		t.Run(fmt.Sprintf("ContextTimeoutEnabled=%v", deadlines), func(t *testing.T) {
			client := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: deadlines})
			t.Cleanup(func() { client.Close() })
			logs := &logRecorder{}
			l, err := New(client, WithLogger(slog.New(logs)), WithProbeInterval(50*time.Millisecond), WithTimeout(200*time.Millisecond))
			require.NoError(t, err)
			t.Cleanup(func() { l.Close() })
			require.Equal(t, deadlines, l.direct)
			ctx := context.Background()
			req := limiter.Request{Key: "slow.example", Rule: &limiter.Rule{Rate: 10, Burst: 1}}
			res, err := l.Reserve(ctx, req)
			require.NoError(t, err)

			// CLIENT PAUSE holds every other client's commands: Redis is up but slow.
			require.NoError(t, newClient(t, srv).Do(ctx, "CLIENT", "PAUSE", 2000, "ALL").Err())
			began := time.Now()
			res, err = l.Reserve(ctx, req)
			require.NoError(t, err)
			assert.True(t, res.Degraded())
			assert.Less(t, time.Since(began), time.Second, "bounded by WithTimeout, not by the pause nor the client's timeouts")
			assert.Equal(t, 1, logs.count(downLog))

			eventuallyShared(t, l)
			res, err = l.Reserve(ctx, req)
			require.NoError(t, err)
			assert.False(t, res.Degraded())
			recoveryLogged(t, logs)
		})
	}
}

// TestTimeoutIsNotTheCallersDeadline: a call that Redis does not answer
// within the timeout fails with ErrUnavailable, not with an error that
// says the caller's own deadline passed.
func TestTimeoutIsNotTheCallersDeadline(t *testing.T) {
	srv := redistest.Start(t)
	for _, deadlines := range []bool{false, true} {
		t.Run(fmt.Sprintf("ContextTimeoutEnabled=%v", deadlines), func(t *testing.T) {
			client := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: deadlines})
			t.Cleanup(func() { client.Close() })
			l, err := New(client, WithFailClosed(), WithLogger(slog.New(slog.DiscardHandler)), WithTimeout(200*time.Millisecond))
			require.NoError(t, err)
			t.Cleanup(func() { l.Close() })
			ctx := context.Background()
			req := limiter.Request{Key: "timeout.example", Rule: &limiter.Rule{Rate: 10, Burst: 1}}
			_, err = l.Reserve(ctx, req)
			require.NoError(t, err)

			require.NoError(t, newClient(t, srv).Do(ctx, "CLIENT", "PAUSE", 1500, "ALL").Err())
			_, err = l.Reserve(ctx, req)
			require.ErrorIs(t, err, ErrUnavailable)
			assert.NotErrorIs(t, err, context.DeadlineExceeded)
			assert.ErrorContains(t, err, "no answer within 200ms")
			eventuallyShared(t, l)
		})
	}
}

func TestFailOpenDoesNotPace(t *testing.T) {
	srv := redistest.Start(t)
	l, _ := newTestLimiter(t, srv, WithFailOpen())
	ctx := context.Background()
	req := limiter.Request{Key: "open.example", Rule: &limiter.Rule{Rate: 1, Burst: 1}}
	srv.Kill()
	for range 3 {
		res, err := l.Reserve(ctx, req)
		require.NoError(t, err)
		assert.Equal(t, limiter.Degrade(limiter.Granted(0, "", time.Time{}, nil)), res)
		require.NoError(t, res.Cancel(ctx))
	}
	_, err := l.Observe(ctx, req, limiter.Observation{Status: http.StatusTooManyRequests, RetryAfter: time.Second})
	require.NoError(t, err)
	st, err := l.State(ctx, req)
	require.NoError(t, err)
	assert.Zero(t, st.Wait)
	res, err := l.Reserve(ctx, req)
	require.NoError(t, err)
	assert.Zero(t, res.Wait(), "not even the server's pause holds a request")

	srv.Restart()
	eventuallyShared(t, l)
	res, err = l.Reserve(ctx, req)
	require.NoError(t, err)
	assert.False(t, res.Degraded())
}

func TestFailClosedFails(t *testing.T) {
	srv := redistest.Start(t)
	l, _ := newTestLimiter(t, srv, WithFailClosed())
	ctx := context.Background()
	req := limiter.Request{Key: "closed.example", Rule: &limiter.Rule{Rate: 1, Burst: 1}}
	ok, err := l.Reserve(ctx, req)
	require.NoError(t, err)
	srv.Kill()

	res, err := l.Reserve(ctx, req)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.True(t, strings.HasPrefix(err.Error(), "redislimiter: "), err.Error())
	assert.False(t, res.OK())
	_, err = l.Reserve(ctx, req) // while down: at once, without asking Redis
	require.ErrorIs(t, err, ErrUnavailable)
	_, err = ok.Confirm(ctx, nil)
	require.ErrorIs(t, err, ErrUnavailable)
	require.ErrorIs(t, ok.Cancel(ctx), ErrUnavailable)
	_, err = l.State(ctx, req)
	require.ErrorIs(t, err, ErrUnavailable)
	// What the server said is kept, and reaches Redis once it answers.
	_, err = l.Observe(ctx, req, limiter.Observation{Status: http.StatusServiceUnavailable, RetryAfter: 10 * time.Second})
	require.NoError(t, err)

	srv.Restart()
	eventuallyShared(t, l)
	res, err = l.Reserve(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, limiter.Reason("retry-after"), res.Reason())
	assert.Greater(t, res.Wait(), 5*time.Second)
}

func TestCallerContextIsNotAnOutage(t *testing.T) {
	srv := redistest.Start(t)
	l, logs := newTestLimiter(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := limiter.Request{Key: "ctx.example", Rule: &limiter.Rule{Rate: 1, Burst: 1}}
	_, err := l.Reserve(ctx, req)
	require.ErrorIs(t, err, context.Canceled)
	_, err = l.Observe(ctx, req, limiter.Observation{Status: http.StatusTooManyRequests, RetryAfter: time.Second})
	require.ErrorIs(t, err, context.Canceled, "the pause did not reach Redis")
	_, err = l.State(ctx, req)
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, l.down())
	assert.Zero(t, logs.count(downLog))
}

func TestCloseStopsTheProbe(t *testing.T) {
	srv := redistest.Start(t)
	l, logs := newTestLimiter(t, srv)
	ctx := context.Background()
	req := limiter.Request{Key: "close.example", Rule: &limiter.Rule{Rate: 1, Burst: 1}}
	srv.Kill()
	res, err := l.Reserve(ctx, req)
	require.NoError(t, err)
	require.True(t, res.Degraded())

	done := make(chan struct{})
	go func() { l.Close(); l.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not return")
	}
	srv.Restart()
	time.Sleep(300 * time.Millisecond) // six probe intervals
	assert.True(t, l.down(), "no probe after Close")
	assert.Zero(t, logs.count(upLog))
}

func TestNewRejectsBadOptions(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // nothing listens there
	tests := []struct {
		name string
		opts []Option
		want string
	}{
		{"timeout", []Option{WithTimeout(-1)}, "redislimiter: WithTimeout: must not be negative, got -1ns"},
		{"probe", []Option{WithProbeInterval(-time.Second)}, "redislimiter: WithProbeInterval: must not be negative, got -1s"},
		{"both failure modes", []Option{WithFailOpen(), WithFailClosed()}, "redislimiter: WithFailOpen and WithFailClosed both given"},
		{"one slot for all", []Option{WithPrefix("app:{x}:")}, `redislimiter: WithPrefix("app:{x}:"): must not hold "{": Redis Cluster would hash the prefix's {...} rather than each domain's, putting every domain in one slot`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(client, tt.opts...)
			require.EqualError(t, err, tt.want)
		})
	}
	_, err := New(nil)
	require.EqualError(t, err, "redislimiter: client is nil")
	l, err := New(client)
	require.NoError(t, err)
	assert.Equal(t, modeFallback, l.mode)
	assert.Same(t, slog.Default(), l.logger, "zero means the default")
	assert.Equal(t, "polite:", l.prefix)
	assert.Equal(t, 100*time.Millisecond, l.timeout)
	assert.Equal(t, 100*time.Millisecond, l.probe)
}
