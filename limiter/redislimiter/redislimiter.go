// Package redislimiter shares polite's pace between processes through
// Redis; concurrency caps (max_concurrent) stay per process.
package redislimiter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/polite-go/polite/limiter"
)

// ErrUnavailable is wrapped by the errors of a FailClosed Limiter while
// Redis does not answer.
var ErrUnavailable = errors.New("redislimiter: redis unavailable")

// Limiter is a limiter.Limiter that keeps each domain's pace in Redis, so
// that any number of processes (crawler workers, replicas of a service)
// pace every domain together, as one process would. Plug it into a
// Transport with polite.WithLimiter; the limits themselves still come from
// polite.WithDefault, WithDomain and WithConfig, and should be the same in
// every process.
//
// Shared are the token bucket (rate, burst), min_delay, jitter, quotas
// (exact sliding windows) and pauses, so that one worker's 429 pauses every
// worker for that domain. Each call runs one Lua script that decides every
// rule of the domain atomically on Redis's own clock (TIME), so that the
// workers' clocks never matter. A request costs one round trip: Reserve
// claims the earliest start and returns how long to wait for it, and the
// caller sleeps; there is no polling. A request that had to wait pays one
// more when its turn comes (limiter.Wait's Confirm), to tell Redis that it
// starts and to learn whether a worker paused the domain meanwhile; if one
// did, its turn is given back and the first one after the pause claimed.
// A cancelled wait gives its turn back, as limiter.Memory does: every
// cancelled turn that no later live turn follows. A domain's keys (prefix
// + "{domain}:state", and prefix + "{domain}:starts", the history of
// starts that every quota counts) share a hash tag, so the scripts run on
// Redis Cluster.
// They expire once the domain has been idle for as long as it takes to
// recover fully (its bucket full, its min delay, pause and quota windows
// over) and as long again, at least a second, so Redis holds only active
// domains: about 300 bytes each (MEMORY USAGE), plus about 12 bytes per
// request a quota allows.
//
// What a server says is learned in each process, in a limiter.Memory of
// its own: the backoff after repeated 429s, the adaptive gap and a
// robots.txt's Crawl-delay are per process, not shared; a process widens
// the gaps of the turns it claims by what it learned. The pauses a server
// asks for (Retry-After, RateLimit headers, backoff) are shared: each one
// is written to Redis as well, where it holds every worker.
//
// What holds across processes: Redis never grants two starts of one domain
// closer than its rules allow, on Redis's clock, whichever processes ask.
// Neither a reset of Redis (FLUSHALL, a restart without persistence, an
// evicted key) nor a turn given back breaks that: each domain's state has
// an epoch, so a reservation made before a reset cannot be given back into
// the state made after it; and a turn given back that is not the latest
// frees its quota slots but not its token, so that it is never reused
// sooner than the rules allow (later requests may wait a token longer than
// they need). A request goes when its wait, counted from the reply, is
// over: late by the reply's trip back, and by its timer firing late on a
// busy machine (by hundreds of milliseconds under load). So Redis also
// keeps a record, as limiter.Memory does: when the latest request started,
// as its Confirm (or its reservation, when it went at once) told Redis,
// on Redis's clock. A start later than planned by more than a millisecond
// moves the turns claimed after it, and a turn granted before it, to any
// process, waits at its Confirm until the rules allow after it: Confirm
// returns the extra wait, and the caller (limiter.Wait) sleeps and
// confirms again. That costs no round trip more for a start on time, and
// one more for each turn a late start holds back. What remains: the
// server can see two requests of one domain closer than the rules allow
// by up to a millisecond (a start that late counts as on time, and the
// record holds a turn back only for more), plus the time from Redis
// answering the Confirm to the request leaving (the reply's trip back and
// a goroutine scheduled late after it, which Redis does not learn of),
// plus the difference between the processes' network delays to the
// server. A turn given back leaves the record as it is, so a request
// recorded but not sent only holds the next ones back. Waits are capped: a
// reservation that would wait more than 400 days is refused, and every key
// gets an expiry, whatever the rule (config.Limit.Validate refuses rules
// that come near).
//
// Concurrency caps (max_concurrent) are not shared: the Transport enforces
// them in each process, since a shared count would leak the slots of a
// worker that dies mid-request.
//
// Each call to Redis is bounded by Options.Timeout (loading a script into
// a node that lacks it, once per node, is not counted). When Redis does
// not answer in time or fails (a full Redis refusing writes included),
// the Limiter logs it once and, by default, paces each domain in this
// process with the same limits and what this process learned (its
// limiter.Memory), marking its reservations Degraded, which the Transport
// counts in its stats; no request fails because Redis is down.
// Options.FailOpen stops pacing instead and FailClosed fails requests;
// their docs say when to use which. An outage is of the node that failed:
// on a Redis Cluster (a *redis.ClusterClient), the domains of the other
// primaries keep the shared pace, provided the Cluster is set to
// cluster-require-full-coverage no (by default it refuses every slot
// until the failed primary's replica is promoted). In the background the Limiter has a
// Cluster client reload its slot map, and tries a reservation of its own
// (Options.ProbeInterval) in the slot that failed, not a PING; it returns
// that node's domains to the shared pace as soon as that works, on the
// promoted replica after a failover. Pauses made while Redis is away are
// carried over to it then. The recovery is logged once the shared pace
// has held for a second: an outage is one outage, one warning and one
// recovery, also when Redis takes a write and refuses the next, as a
// full one does.
//
// What an outage costs, by default: the request whose call fails waits up
// to Options.Timeout before it is paced here; then each process paces on its
// own, so a domain sees up to the number of processes times its pace,
// and no more, also across the switches. A process's fallback starts after
// the turns Redis granted it, which still go, not with a full bucket; and
// back on Redis, a
// process's first turns come no earlier than its own pace allows after its
// fallback's, each of those counted as late as the latest of them went.
// To do so each process remembers, per domain it used in the recent past,
// its own latest start and bucket, about 140 bytes plus the domain's
// name. What is not carried over: the quota windows (each fallback counts
// only its own starts, from the outage on); with a burst above 1, the
// switch back waits only for this process's next token while Redis's
// bucket may hold more, so it can add up to burst-1 starts to the
// process's own pace; and a late start that Redis does not hear of (its
// Confirm failing while Redis is away) narrows the gap to a turn granted
// before it went.
//
// With a *redis.Client (one made by redis.NewFailoverClient included), the
// Limiter keeps the client's connection pool usable through an outage:
// after as many failed dials as the pool has connections, go-redis fails
// every call at once and dials again only once a second, which would hold
// the shared pace back for up to a second after Redis, or the primary a
// Sentinel promoted, answers. So the Limiter has at most half the pool's
// connections (PoolSize) in its calls at once; once its calls have waited
// 10ms with none answered, it dials Redis itself, outside the pool, and if
// that fails Redis is down at once, before the timeout, and the calls
// under way are cut short; and while Redis is down, it dials it outside
// the pool before each probe.
//
// Create the client with ContextTimeoutEnabled, so that go-redis itself
// ends a call at the timeout; with a client that does not, each call runs
// on a goroutine of its own that the Limiter can abandon, which adds some
// latency.
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
	deadlines *deadlines
	local     *limiter.Memory // what servers taught this process, and the fallback's pace
	handoff   *handoff        // by default: this process's own pace across the switches; nil otherwise
	health    health
	guard     *poolGuard // with a *redis.Client; nil otherwise
}

var _ limiter.Limiter = (*Limiter)(nil)

// New returns a Limiter that keeps the pace in the Redis that client
// reaches. It does not wait for Redis: a worker starts even while Redis is
// down, pacing on its own until Redis answers. It loads the scripts into
// Redis in the background (into every node of a Cluster), so that the
// first requests do not wait for that. A Prefix with a hash tag, which
// would put every domain in one Cluster slot, is refused.
func New(client redis.UniversalClient, o Options) (*Limiter, error) {
	return newLimiter(client, redisClock, o)
}

// newLimiter is New with the scripts' clock as Lua source.
func newLimiter(client redis.UniversalClient, clock string, o Options) (*Limiter, error) {
	if client == nil {
		return nil, errors.New("redislimiter: client is nil")
	}
	o, mode, err := o.resolved()
	if err != nil {
		return nil, err
	}
	l := &Limiter{
		client:    client,
		direct:    honorsDeadlines(client),
		prefix:    o.Prefix,
		timeout:   o.Timeout,
		probe:     o.ProbeInterval,
		mode:      mode,
		logger:    o.Logger,
		scripts:   newScripts(clock),
		deadlines: newDeadlines(o.Timeout),
		local:     limiter.NewMemory(),
		health:    health{stop: make(chan struct{})},
		guard:     newPoolGuard(client),
	}
	if l.mode == modeFallback {
		l.handoff = newHandoff()
	}
	l.health.wg.Go(l.loadScripts)
	return l, nil
}

// Reserve implements limiter.Limiter: one round trip to Redis claims the
// earliest start every rule of r.Key allows, with the gap this process
// learned from the server, or nothing when the wait would exceed
// r.MaxWait, or 400 days whatever r.MaxWait (a rule that
// config.Limit.Validate refuses can ask for more). While Redis does not
// answer it reserves as the failure mode says: in this process by default,
// at once with FailOpen, and not at all with FailClosed (an error wrapping
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
		return limiter.Reservation{OK: true, Degraded: true}, nil
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
	rule := ruleOf(r)
	local, err := l.local.State(ctx, *r)
	if err != nil {
		return err
	}
	paced := *rule
	paced.MinDelay = local.MinDelay // the rule's, or what the server asked for
	var sample, notBefore time.Duration
	if rule.Jitter > 0 {
		sample = rand.N(rule.Jitter)
	}
	if l.handoff != nil {
		notBefore = l.handoff.notBefore(r.Key, &paced, time.Now())
	}
	got, err := l.reserveAfter(ctx, r.Key, &paced, r.MaxWait, int64(sample/time.Microsecond), micros(notBefore))
	if err != nil {
		return err
	}
	*res = limiter.Reservation{OK: got.ok, Wait: got.wait, Reason: l.reason(got.reason, got.wait-sample, rule, &local)}
	if got.ok {
		res.Turn = &turn{l: l, key: r.Key, rule: rule, gap: paced.MinDelay, id: got.id, start: got.start}
		if l.handoff != nil {
			l.handoff.note(r.Key, &paced, time.Now().Add(got.wait), false)
		}
	}
	return nil
}

// reserve runs the reserve script under rule with jitter sample, in
// microseconds.
func (l *Limiter) reserve(ctx context.Context, key string, rule *limiter.Rule, maxWait time.Duration, sample int64) (reservation, error) {
	return l.reserveAfter(ctx, key, rule, maxWait, sample, 0)
}

// reserveAfter is reserve for a start no earlier than notBefore
// microseconds from when the script runs. The sample, the longest wait and
// notBefore are left out when 0, as the script allows, since that is the
// common case and each argument costs Redis.
func (l *Limiter) reserveAfter(ctx context.Context, key string, rule *limiter.Rule, maxWait time.Duration, sample, notBefore int64) (reservation, error) {
	args := ruleArgs(*rule, 3)
	switch maxWait := int64(max(maxWait, 0)); {
	case notBefore != 0:
		args = append(args, sample, maxWait, notBefore)
	case maxWait != 0:
		args = append(args, sample, maxWait)
	case sample != 0:
		args = append(args, sample)
	}
	v, err := l.run(ctx, l.scripts.reserve, l.keys(key), args)
	if err != nil {
		return reservation{}, err
	}
	return parseReservation(v)
}

// Observe implements limiter.Limiter. This process's limiter.Memory takes
// in what the server said and decides the pause it asks for, if any
// (backoff after errors and transport failures included); the pause is
// then written to Redis, so that it holds every worker. Made while Redis
// does not answer, it reaches Redis when Redis answers again. A
// Crawl-delay stays in this process.
func (l *Limiter) Observe(ctx context.Context, r limiter.Request, o limiter.Observation) (time.Duration, error) {
	added, err := l.local.Observe(ctx, r, o)
	if err != nil || added <= 0 || o.Status == 0 && !o.Failed {
		return added, err
	}
	st, err := l.local.State(ctx, r)
	if err != nil || st.Paused <= 0 {
		return added, err
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
	_, err := l.run(ctx, l.scripts.pause, l.keys(key), []any{micros(d)})
	return err
}

// State implements limiter.Limiter: the shared state of r.Key, with the
// gap this process learned. While Redis does not answer it reports this
// process's state by default, an unpaced key with FailOpen, and an error
// wrapping ErrUnavailable with FailClosed.
func (l *Limiter) State(ctx context.Context, r limiter.Request) (limiter.State, error) {
	local, err := l.local.State(ctx, r)
	if err != nil {
		return limiter.State{}, err
	}
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
		for _, q := range ruleOf(&r).Quotas {
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
	rule := ruleOf(r)
	paced := *rule
	paced.MinDelay = local.MinDelay
	v, err := l.run(ctx, l.scripts.reserve, l.keys(r.Key), append(ruleArgs(paced, 1), "report"))
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
// "min_delay" raised by what the server asked for is the learned gap's:
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

// noRule paces nothing: the rule of a Request without one.
var noRule limiter.Rule

func ruleOf(r *limiter.Request) *limiter.Rule {
	if r.Rule == nil {
		return &noRule
	}
	return r.Rule
}

// run runs script s, bounded by the Limiter's timeout whatever the
// client's own timeouts, and returns its reply. A node that does not know
// the script yet (a cold start, a replica promoted, SCRIPT FLUSH) loads it
// first, which the timeout does not bound: loadScripts bounds it.
func (l *Limiter) run(ctx context.Context, s *redis.Script, keys []string, args []any) (any, error) {
	v, err := l.evalSha(ctx, s, keys, args)
	if !redis.HasErrorPrefix(err, "NOSCRIPT") {
		return v, err
	}
	if err := l.load(ctx, s, keys[0]); err != nil {
		return nil, err
	}
	return l.evalSha(ctx, s, keys, args)
}

// evalSha runs script s by its hash, bounded by the Limiter's timeout.
// With a client that honours deadlines it makes no closure, as it runs for
// every request.
func (l *Limiter) evalSha(ctx context.Context, s *redis.Script, keys []string, args []any) (any, error) {
	if !l.direct {
		return l.bounded(ctx, func(ctx context.Context) (any, error) {
			if err := l.enter(ctx); err != nil {
				return nil, err
			}
			defer l.leave()
			return s.EvalSha(ctx, l.client, keys, args...).Result()
		})
	}
	bctx, cancel := l.deadlines.bound(ctx)
	defer cancel()
	if err := l.enter(bctx); err != nil {
		return nil, l.late(ctx, bctx, err)
	}
	defer l.leave()
	v, err := s.EvalSha(bctx, l.client, keys, args...).Result()
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
