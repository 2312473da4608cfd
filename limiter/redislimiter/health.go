package redislimiter

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/polite-go/polite/limiter"
)

// steady is how long the shared pace must hold, everywhere, before the
// Limiter logs that Redis answers again: a failure within it, such as a
// full Redis refusing writes again once the writes resume, continues the
// outage it logged rather than starting one.
const steady = time.Second

// health is where Redis answers, and what the Limiter does about it. A
// domain's keys live in one place: on a Redis Cluster, the primary that
// serves their slot, by address; with any other client, its one primary
// (""). An outage is of one place, so that a failed Cluster node sends
// only its own domains to the fallback.
type health struct {
	// outages are the places that failed, replaced as a whole and never
	// changed, so that a request reads them without a lock; nil or empty
	// while Redis answers everywhere.
	outages atomic.Pointer[map[string]*outage]

	mu      sync.Mutex
	since   time.Time            // when the logged outage began; zero when none is logged
	pauses  map[string]time.Time // made while Redis was away, to carry over
	probing bool                 // probeLoop runs
	closed  bool
	stop    chan struct{}
	wg      sync.WaitGroup
}

// outage is a place that failed.
type outage struct {
	key   string // a domain whose call failed there: the probe writes to its slot
	cause error  // the call's error
}

// placeOf returns where key's keys live: the address of the Cluster
// primary that serves their slot, as the client sees it now, or "" for a
// client with one primary, or a Cluster whose slots it cannot tell.
func (l *Limiter) placeOf(ctx context.Context, key string) string {
	cluster, ok := l.client.(*redis.ClusterClient)
	if !ok {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	node, err := cluster.MasterForKey(ctx, l.keys(key)[0])
	if err != nil {
		return ""
	}
	return node.Options().Addr
}

// downFor reports whether the place of key is down, or the whole of Redis
// (the place "").
func (l *Limiter) downFor(ctx context.Context, key string) bool {
	outages := l.health.outages.Load()
	if outages == nil || len(*outages) == 0 {
		return false
	}
	if (*outages)[""] != nil {
		return true
	}
	return (*outages)[l.placeOf(ctx, key)] != nil
}

// down reports whether any place is down.
func (l *Limiter) down() bool {
	outages := l.health.outages.Load()
	return outages != nil && len(*outages) > 0
}

// markDown notes that a call on key failed with err: its place is down
// until a probe of key's slot works again. The first outage while none is
// logged logs, and starts the probe; on a Cluster, the client reloads its
// view of the slots. With a client of one Redis, the calls under way are
// cut short: they would only retry, and dial, a Redis that is down.
func (l *Limiter) markDown(ctx context.Context, key string, err error) {
	place := l.placeOf(ctx, key)
	h := &l.health
	h.mu.Lock()
	defer h.mu.Unlock()
	outages := map[string]*outage{}
	if cur := h.outages.Load(); cur != nil {
		if (*cur)[place] != nil {
			return
		}
		outages = maps.Clone(*cur)
	}
	outages[place] = &outage{key: key, cause: err}
	h.outages.Store(&outages)
	if _, one := l.client.(*redis.Client); one {
		l.deadlines.cut() // the calls under way wait on the one Redis, which is down
	}
	l.reloadSlots(ctx)
	if h.since.IsZero() {
		h.since = time.Now()
		attrs := []any{"mode", l.mode.String(), "err", err}
		if place != "" {
			attrs = append(attrs, "node", place)
		}
		l.logger.Warn("redislimiter: redis unavailable, "+l.mode.doing(), attrs...)
	}
	if !h.probing && !h.closed {
		h.probing = true
		h.wg.Add(1)
		go l.probeLoop()
	}
}

// start runs f on a goroutine of its own that Close waits for, unless the
// Limiter is closed; f calls h.wg.Done when it returns. It reports whether
// f runs.
func (h *health) start(f func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.wg.Add(1)
	go f()
	return true
}

// reloadSlots makes a Cluster client read which node serves which slot
// again, in the background.
func (l *Limiter) reloadSlots(ctx context.Context) {
	if cluster, ok := l.client.(*redis.ClusterClient); ok {
		cluster.ReloadState(ctx)
	}
}

// doing says what a Limiter does while Redis is unavailable.
func (m mode) doing() string {
	switch m {
	case modeFailOpen:
		return "not pacing until it answers"
	case modeFailClosed:
		return "failing requests until it answers"
	}
	return "pacing in this process until it answers"
}

// probeLoop probes each place that is down until its calls work again,
// then logs the recovery once the shared pace has held steady, or until
// the Limiter is closed.
func (l *Limiter) probeLoop() {
	h := &l.health
	defer h.wg.Done()
	ticker := time.NewTicker(l.probe)
	defer ticker.Stop()
	var clear time.Time // since when no place is down
	for {
		select {
		case <-h.stop:
			return
		case <-ticker.C:
		}
		if l.down() {
			clear = time.Time{}
			l.reloadSlots(context.Background())
			for place, o := range *h.outages.Load() {
				l.recover(place, o)
			}
			continue
		}
		if clear.IsZero() {
			clear = time.Now()
			continue
		}
		if time.Since(clear) < steady {
			continue
		}
		h.mu.Lock()
		if l.down() {
			h.mu.Unlock()
			continue
		}
		since := h.since
		h.since, h.probing = time.Time{}, false
		h.mu.Unlock()
		l.logger.Info("redislimiter: redis answers again, sharing the pace", "down_for", clear.Sub(since).Round(time.Millisecond))
		l.loadScripts() // into a primary that was a replica, or a Redis restarted empty
		return
	}
}

// recover ends the outage o of place if a call of the Limiter's own works
// again in the slot of o's key, after carrying over the pauses made while
// Redis was away, but for those of domains in places still down. The call
// is a reservation, not a PING: a Redis that answers PING but refuses
// writes (full under noeviction, a read-only replica) would otherwise
// recover every probe interval and fail the next request.
func (l *Limiter) recover(place string, o *outage) {
	ctx := context.Background()
	if err := l.probeCall(ctx, o.key); err != nil {
		return
	}
	h := &l.health
	h.mu.Lock()
	pauses := h.pauses
	h.pauses = nil
	h.mu.Unlock()
	others := maps.Clone(*h.outages.Load())
	delete(others, place)
	carried := true
	now := time.Now()
	for key, until := range pauses {
		if !carried || others[""] != nil || others[l.placeOf(ctx, key)] != nil {
			continue
		}
		if d := until.Sub(now); d > 0 && l.pause(ctx, key, d) != nil {
			carried = false
			continue
		}
		delete(pauses, key)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for key, until := range pauses {
		h.rememberLocked(key, until)
	}
	if carried {
		outages := maps.Clone(*h.outages.Load())
		delete(outages, place)
		h.outages.Store(&outages)
	}
}

// probeCall runs the reserve script as every request does, writes
// included, under an empty rule on the key prefix + "{domain}:probe", in
// the slot of domain's keys but none of them. The key expires a second
// after the latest probe. A *redis.Client's Redis is dialled outside the
// client's pool first (dialable), so that a probe of a Redis that is still
// down fails no dial in the pool.
func (l *Limiter) probeCall(ctx context.Context, domain string) error {
	if err := l.dialable(ctx); err != nil {
		return err
	}
	_, err := l.run(ctx, &l.scripts.reserve, []string{l.prefix + "{" + hashTag(domain) + "}:probe"}, ruleArgs(limiter.Rule{}, 0))
	return err
}

// remember keeps a pause made while Redis is away, to carry it over.
func (h *health) remember(key string, until time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rememberLocked(key, until)
}

func (h *health) rememberLocked(key string, until time.Time) {
	if h.pauses == nil {
		h.pauses = make(map[string]time.Time)
	}
	if until.After(h.pauses[key]) {
		h.pauses[key] = until
	}
}

// whileDown is what Cancel and Pause return while key's place is
// unavailable.
func (l *Limiter) whileDown(ctx context.Context, key string) error {
	if l.mode == modeFailClosed {
		return l.unavailable(ctx, key)
	}
	return nil
}

// unavailable is the error of a Limiter made WithFailClosed while key's place is
// unavailable.
func (l *Limiter) unavailable(ctx context.Context, key string) error {
	outages := l.health.outages.Load()
	if outages == nil {
		return ErrUnavailable
	}
	o := (*outages)[""]
	if o == nil {
		o = (*outages)[l.placeOf(ctx, key)]
	}
	if o == nil {
		return ErrUnavailable
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, o.cause)
}
