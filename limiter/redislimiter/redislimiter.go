package redislimiter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/polite-go/polite/limiter"
)

// ErrUnavailable is wrapped by the errors of a Limiter made WithFailClosed while
// Redis does not answer.
var ErrUnavailable = errors.New("redislimiter: redis unavailable")

// Limiter is a limiter.Limiter that keeps each domain's pace in Redis, so
// that any number of processes (crawler workers, replicas of a service)
// pace every domain together, as one process would. Plug it into a
// Transport with polite.WithLimiter; the limits themselves still come from
// polite.WithDefault, WithDomain and WithConfig, and should be the same in
// every process. The package doc says what is shared, what holds across
// processes, what an outage costs and what memory a domain takes.
//
// It needs Redis 5.0 or later. Call Close when done with it.
//
// A Limiter is safe for concurrent use.
type Limiter struct {
	client    redis.UniversalClient
	direct    bool // the client ends calls at their context's deadline
	prefix    string
	timeout   time.Duration
	probe     time.Duration
	mode      mode
	logger    *slog.Logger
	scripts   scripts
	functions atomic.Bool // the scripts run as the library's functions
	deadlines *deadlines
	local     *limiter.Memory // what this process observed of servers, and the fallback's pace
	handoff   *handoff        // by default: this process's own pace across the switches; nil otherwise
	health    health
	guard     *poolGuard // with a *redis.Client; nil otherwise
	batch     *batcher

	// The clock and the jitter samples of the pace this process keeps:
	// time.Now and rand.N but in tests that replay given steps.
	now        func() time.Time
	drawJitter func(bound time.Duration) time.Duration
}

var _ limiter.Limiter = (*Limiter)(nil)

// New returns a Limiter that keeps the pace in the Redis that client
// reaches. It does not wait for Redis: a worker starts even while Redis is
// down, pacing on its own until Redis answers. It loads the scripts into
// Redis in the background (into every node of a Cluster), so that the
// first requests do not wait for that. A prefix with a hash tag, which
// would put every domain in one Cluster slot, is refused, as is a negative
// duration.
func New(client redis.UniversalClient, opts ...Option) (*Limiter, error) {
	return newLimiter(client, redisClock, opts...)
}

// newLimiter is New with the scripts' clock as Lua source.
func newLimiter(client redis.UniversalClient, clock string, opts ...Option) (*Limiter, error) {
	if client == nil {
		return nil, errors.New("redislimiter: client is nil")
	}
	o, mode, err := resolve(opts)
	if err != nil {
		return nil, err
	}
	l := &Limiter{
		client:    client,
		direct:    honorsDeadlines(client),
		prefix:    o.prefix,
		timeout:   o.timeout,
		probe:     o.probeInterval,
		mode:      mode,
		logger:    o.logger,
		scripts:   newScripts(clock),
		deadlines: newDeadlines(o.timeout),
		local:     limiter.NewMemory(),
		health:    health{stop: make(chan struct{})},
		guard:     newPoolGuard(client),
		batch:     newBatcher(client),

		now:        time.Now,
		drawJitter: rand.N[time.Duration],
	}
	if l.mode == modeFallback {
		l.handoff = newHandoff()
	}
	l.health.wg.Go(l.loadScripts)
	return l, nil
}

// Reserve implements limiter.Limiter: one round trip to Redis holds the
// earliest start every rule of r.Key allows, with the gap this process
// observed of the server, or nothing when the wait would exceed
// r.MaxWait, or 400 days whatever r.MaxWait (a rule that
// config.Limit.Validate refuses can ask for more). While Redis does not
// answer it reserves as the failure mode says: in this process by default,
// at once with WithFailOpen, and not at all with WithFailClosed (an error wrapping
// ErrUnavailable).
func (l *Limiter) Reserve(ctx context.Context, r limiter.Request) (limiter.Reservation, error) {
	var res limiter.Reservation
	if !l.downFor(ctx, r.Key) {
		err := l.reserveShared(ctx, &r, &res)
		if err == nil {
			return res, nil
		}
		if ctx.Err() != nil {
			return limiter.Reservation{}, fmt.Errorf("redislimiter: %w", ctx.Err())
		}
		l.markDown(ctx, r.Key, err)
	}
	switch l.mode {
	case modeFailOpen:
		return limiter.Degrade(limiter.Granted(0, "", time.Time{}, nil)), nil
	case modeFailClosed:
		return limiter.Reservation{}, l.unavailable(ctx, r.Key)
	}
	l.reserveFallback(&r, &res)
	return res, nil
}

// reserveShared is Reserve through Redis. Its reservations' Turn is a
// *turn. After the fallback paced r.Key, the start is no earlier than this
// process's own pace allows; each start granted is counted into it.
func (l *Limiter) reserveShared(ctx context.Context, r *limiter.Request, res *limiter.Reservation) error {
	rule := r.EffectiveRule()
	now := l.now()
	local := l.local.StateAt(*r, now)
	paced := *rule
	paced.MinDelay = local.MinDelay // the rule's, or what the server asked for
	var sample, notBefore time.Duration
	if rule.Jitter > 0 {
		sample = l.drawJitter(rule.Jitter)
	}
	if l.handoff != nil {
		notBefore = l.handoff.notBefore(r.Key, &paced, now)
	}
	got, err := l.reserveAfter(ctx, r.Key, &paced, r.MaxWait, int64(sample/time.Microsecond), micros(notBefore), lastStartAge(r, now))
	if err != nil {
		return err
	}
	reason := l.reason(got.reason, got.wait-sample, rule, &local)
	if !got.ok {
		*res = limiter.Refused(got.wait, reason)
		return nil
	}
	start := l.now().Add(got.wait)
	*res = limiter.Granted(got.wait, reason, start, &turn{l: l, key: r.Key, rule: rule, id: got.id, start: got.start,
		begun: got.wait == 0, granted: start})
	if l.handoff != nil {
		l.handoff.note(r.Key, &paced, l.now().Add(got.wait), false)
	}
	return nil
}

// reserveAfter is reserve for a start no earlier than notBefore
// microseconds from when the script runs, by a caller whose latest start
// was lastStart microseconds before then (negative when unknown). The
// sample, the longest wait and notBefore are left out when 0 and the last
// start when unknown, as the script allows, since that is the common case
// and each argument costs Redis.
func (l *Limiter) reserveAfter(ctx context.Context, key string, rule *limiter.Rule, maxWait time.Duration, sample, notBefore, lastStart int64) (reservation, error) {
	args := ruleArgs(*rule, 4)
	switch maxWait := int64(max(maxWait, 0)); {
	case lastStart >= 0:
		args = append(args, sample, maxWait, notBefore, lastStart)
	case notBefore != 0:
		args = append(args, sample, maxWait, notBefore)
	case maxWait != 0:
		args = append(args, sample, maxWait)
	case sample != 0:
		args = append(args, sample)
	}
	v, err := l.run(ctx, &l.scripts.reserve, l.keys(key), args)
	if err != nil {
		return reservation{}, err
	}
	return parseReservation(v)
}

// lastStartAge is how long before now r's LastStart was, in microseconds
// rounded down, so that the script errs late; -1 when r has none.
func lastStartAge(r *limiter.Request, now time.Time) int64 {
	if r.LastStart.IsZero() {
		return -1
	}
	return int64(max(now.Sub(r.LastStart), 0) / time.Microsecond)
}

// Observe implements limiter.Limiter. This process's limiter.Memory takes
// in what the server said and decides the pause it asks for, if any
// (backoff after errors and transport failures included); the pause is
// then written to Redis, so that it holds every worker. Made while Redis
// does not answer, it reaches Redis when Redis answers again. A
// Crawl-delay stays in this process.
func (l *Limiter) Observe(ctx context.Context, r limiter.Request, o limiter.Observation) (time.Duration, error) {
	now := l.now()
	added := l.local.ObserveAt(r, o, now)
	if added <= 0 || o.Status == 0 && !o.Failed {
		return added, nil
	}
	st := l.local.StateAt(r, now)
	if st.Paused <= 0 {
		return added, nil
	}
	return added, l.share(ctx, r.Key, st.Paused)
}

// share writes a pause of key for d from now to Redis, or keeps it to
// carry it over once Redis answers again.
func (l *Limiter) share(ctx context.Context, key string, d time.Duration) error {
	if !l.downFor(ctx, key) {
		err := l.pause(ctx, key, d)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("redislimiter: %w", ctx.Err())
		}
		l.markDown(ctx, key, err)
	}
	l.health.remember(key, time.Now().Add(d))
	return nil
}

func (l *Limiter) pause(ctx context.Context, key string, d time.Duration) error {
	_, err := l.run(ctx, &l.scripts.pause, l.keys(key), []any{micros(d)})
	return err
}

// State implements limiter.Limiter: the shared state of r.Key, with the
// gap this process observed. While Redis does not answer it reports this
// process's state by default, an unpaced key with WithFailOpen, and an error
// wrapping ErrUnavailable with WithFailClosed.
func (l *Limiter) State(ctx context.Context, r limiter.Request) (limiter.State, error) {
	local := l.local.StateAt(r, l.now())
	if !l.downFor(ctx, r.Key) {
		st, err := l.sharedState(ctx, &r, &local)
		if err == nil {
			return st, nil
		}
		if ctx.Err() != nil {
			return limiter.State{}, fmt.Errorf("redislimiter: %w", ctx.Err())
		}
		l.markDown(ctx, r.Key, err)
	}
	switch l.mode {
	case modeFailOpen:
		st := limiter.State{}
		for _, q := range r.EffectiveRule().Quotas {
			st.Quotas = append(st.Quotas, limiter.QuotaState{Limit: q.Requests, Window: q.Window, Remaining: q.Requests})
		}
		return st, nil
	case modeFailClosed:
		return limiter.State{}, l.unavailable(ctx, r.Key)
	}
	return local, nil
}

// sharedState is State through Redis, local the state of r.Key in this
// process.
func (l *Limiter) sharedState(ctx context.Context, r *limiter.Request, local *limiter.State) (limiter.State, error) {
	rule := r.EffectiveRule()
	paced := *rule
	paced.MinDelay = local.MinDelay
	args := append(ruleArgs(paced, 2), "report")
	if age := lastStartAge(r, l.now()); age >= 0 {
		args = append(args, age)
	}
	v, err := l.run(ctx, &l.scripts.reserve, l.keys(r.Key), args)
	if err != nil {
		return limiter.State{}, err
	}
	st, err := parseState(v, rule.Quotas)
	if err != nil {
		return limiter.State{}, err
	}
	st.Reason = l.reason(string(st.Reason), st.Paused, rule, local)
	if st.Paused > 0 {
		st.PauseReason = l.reason("pause", st.Paused, rule, local)
	}
	st.MinDelay = local.MinDelay
	return st, nil
}

// reason names why, a reason the scripts give, as limiter does. The
// scripts' names are limiter's but two. A "pause" is this process's, with
// the reason its limiter.Memory gives, when the pause it knows of lasts as
// long (within a timeout, what writing it to Redis may take) as the one
// Redis reports (paused), and "shared", another worker's, otherwise. A
// "min_delay" raised by what the server asked for is the observed gap's:
// "adaptive" under an adaptive rule, "crawl-delay" otherwise (the Memory
// does not say which of the two is the longer where both are set).
func (l *Limiter) reason(why string, paused time.Duration, rule *limiter.Rule, local *limiter.State) limiter.Reason {
	switch why {
	case "pause":
		if local.Paused > 0 && paused <= local.Paused+l.timeout {
			return local.PauseReason
		}
		return limiter.ReasonShared
	case string(limiter.ReasonMinDelay):
		switch {
		case local.MinDelay <= rule.MinDelay:
		case rule.Adaptive:
			return limiter.ReasonAdaptive
		default:
			return limiter.ReasonCrawlDelay
		}
	}
	return limiter.Reason(why)
}

// Close stops the background probe. It does not close the client. A
// Limiter closed while Redis is unavailable stays in its failure mode.
func (l *Limiter) Close() error {
	h := &l.health
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.stop)
	}
	h.mu.Unlock()
	h.wg.Wait()
	return nil
}

// run runs script s, bounded by the Limiter's timeout whatever the
// client's own timeouts, and returns its reply: as a function of the
// library once loadScripts loaded it, by its hash otherwise. A node that
// does not know the library or the script (a cold start, a replica
// promoted, a flush) loads it first, which the timeout does not bound:
// loadScripts bounds it. A node that lacks the library and does not take
// it runs the script, and so does every call after it.
func (l *Limiter) run(ctx context.Context, s *script, keys []string, args []any) (any, error) {
	if l.functions.Load() {
		v, err := l.call(ctx, s, true, keys, args)
		if !redis.HasErrorPrefix(err, "Function not found") {
			return v, err
		}
		if l.loadLibrary(ctx, keys[0]) == nil {
			return l.call(ctx, s, true, keys, args)
		}
		l.functions.Store(false)
	}
	v, err := l.call(ctx, s, false, keys, args)
	if !redis.HasErrorPrefix(err, "NOSCRIPT") {
		return v, err
	}
	if err := l.load(ctx, s, keys[0]); err != nil {
		return nil, err
	}
	return l.call(ctx, s, false, keys, args)
}

// call runs script s, as a function or by its hash, bounded by the
// Limiter's timeout, batched with the calls under way (batch.go). With a client that honours deadlines it makes no
// closure, as it runs for every request.
func (l *Limiter) call(ctx context.Context, s *script, function bool, keys []string, args []any) (any, error) {
	if !l.direct {
		return l.bounded(ctx, func(ctx context.Context) (any, error) {
			return l.process(ctx, command(ctx, s, function, keys, args))
		})
	}
	bctx, cancel := l.deadlines.bound(ctx)
	defer cancel()
	v, err := l.process(bctx, command(bctx, s, function, keys, args))
	return v, l.late(ctx, bctx, err)
}

type reply struct {
	v   any
	err error
}

// bounded returns f's result, or an error once the Limiter's timeout has
// passed. With a client that ends calls at their context's deadline, f
// runs on the caller's goroutine; otherwise on its own, so that a client
// that ignores deadlines cannot hold the caller.
func (l *Limiter) bounded(ctx context.Context, f func(context.Context) (any, error)) (any, error) {
	parent := ctx
	ctx, cancel := l.deadlines.bound(ctx)
	defer cancel()
	if l.direct {
		v, err := f(ctx)
		return v, l.late(parent, ctx, err)
	}
	done := make(chan reply, 1)
	go func() {
		v, err := f(ctx)
		done <- reply{v, err}
	}()
	select {
	case r := <-done:
		return r.v, l.late(parent, ctx, r.err)
	case <-ctx.Done():
		if err := parent.Err(); err != nil {
			return nil, err
		}
		return nil, l.late(parent, ctx, ctx.Err())
	}
}

// late says so in err when bctx, bounded by the Limiter's timeout, ended
// the call that ctx alone would not have. The error then no longer wraps
// context.DeadlineExceeded, which would say that ctx's deadline passed.
func (l *Limiter) late(ctx, bctx context.Context, err error) error {
	if err != nil && ctx.Err() == nil && bctx.Err() != nil {
		return fmt.Errorf("no answer within %v (%v)", l.timeout, err)
	}
	return err
}

// honorsDeadlines reports whether client ends each call at its context's
// deadline, which go-redis does with ContextTimeoutEnabled.
func honorsDeadlines(client redis.UniversalClient) bool {
	switch c := client.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		return c.Options().ContextTimeoutEnabled
	}
	return false
}
