package polite

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite/internal/hints"
	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/stats"
)

// DefaultMaxPause is the longest pause a server can impose on a domain
// (through Retry-After, RateLimit headers or repeated 429s) unless
// WithMaxPause says otherwise.
const DefaultMaxPause = 10 * time.Minute

// firstBackoff is the pause after a 429 or 503 that says nothing of when to
// come back; each further one doubles it, up to the maximum pause.
const firstBackoff = time.Second

// The reasons stats.Snapshot.PauseReason gives for a domain's pause.
const (
	// PauseRetryAfter: a 429 or 503 response's Retry-After.
	PauseRetryAfter = "retry-after"
	// PauseBackoff: a 429 or 503 without Retry-After, backing off exponentially.
	PauseBackoff = "backoff"
	// PauseRateLimit: a RateLimit or X-RateLimit header saying no request remains.
	PauseRateLimit = "ratelimit"
	// PauseShared: a pause this process did not ask for, made by another
	// worker sharing the limiter.
	PauseShared = "shared"
	// PauseCrawlDelay: no pause, but robots.txt's Crawl-delay sets the
	// domain's gap between requests; PausedUntil is when the next may go.
	PauseCrawlDelay = "crawl-delay"
	// PauseAdaptive: no pause, but adaptive pacing sets the domain's gap
	// between requests; PausedUntil is when the next may go.
	PauseAdaptive = "adaptive"
)

// feedback is what a domain has learned from its server's responses. mu
// guards pause and adaptive, and the writes of the Crawl-delay; the
// atomics are what the request path reads without taking the lock.
type feedback struct {
	mu       sync.Mutex
	pause    pauseState
	adaptive time.Duration // the adaptive delay; 0 until the first response

	minDelay   atomic.Int64                   // nanoseconds: the larger of the Crawl-delay and adaptive
	crawl      atomic.Pointer[hostCrawlDelay] // the domain's Crawl-delay; nil until a robots.txt gave one
	pauseEnd   atomic.Int64                   // end of pause.until on the Transport's clock, in ns since its epoch; 0 if none
	backingOff atomic.Bool                    // pause.step > 0: a success has a backoff to reset
}

// hostCrawlDelay is a domain's Crawl-delay, the longest its hosts ask
// for, and the host (a robotsKey) whose robots.txt asks for it.
type hostCrawlDelay struct {
	host  string
	delay time.Duration
}

// setCrawlDelay takes in c, the Crawl-delay of host's robots.txt, which a
// request of the domain is about to follow. The domain keeps the longest
// Crawl-delay its hosts ask for: a host asking for more raises it, and the
// host that set it lowers it when its robots.txt, fetched anew, asks for
// less. (A host that still asks for more raises it again with its next
// request: the domain remembers one host, not all.)
func (f *feedback) setCrawlDelay(host string, c time.Duration) {
	if f.crawlDelayHolds(host, c) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.crawlDelayHolds(host, c) {
		return
	}
	f.crawl.Store(&hostCrawlDelay{host: host, delay: c})
	f.updateMinDelayLocked()
}

// crawlDelayHolds reports whether the domain's Crawl-delay already takes
// in c, host's.
func (f *feedback) crawlDelayHolds(host string, c time.Duration) bool {
	current := f.crawl.Load()
	switch {
	case current == nil:
		return c == 0
	case current.host == host:
		return c == current.delay
	default:
		return c <= current.delay
	}
}

// crawlDelay returns the domain's Crawl-delay; 0 if it has none.
func (f *feedback) crawlDelay() time.Duration {
	if c := f.crawl.Load(); c != nil {
		return c.delay
	}
	return 0
}

func (f *feedback) updateMinDelayLocked() {
	f.minDelay.Store(int64(max(f.crawlDelay(), f.adaptive)))
}

// pauseState is the pause state machine of one domain: the latest pause
// this process asked for, and the exponential backoff for 429 and 503
// responses that do not say when to come back. Its methods take explicit
// times; it is not safe for concurrent use (feedback guards it).
type pauseState struct {
	until  time.Time     // the end of the latest pause
	reason string        // why until was set
	step   time.Duration // the current backoff pause; 0 when not backing off
	stepAt time.Time     // when the current backoff step began
}

// signal is what one response says about pacing.
type signal struct {
	status     int
	retryAfter time.Duration // from Retry-After; 0 if absent or void
	rateLimit  time.Duration // until a RateLimit quota resets; 0 if none is exhausted
}

// verdict is what observe decided: pause the domain for pause (0: do not).
type verdict struct {
	pause  time.Duration
	reason string
	added  time.Duration // how much later the domain's pause now ends
}

// observe takes in the response to a request sent at sentAt and received
// at now, and returns the pause to ask for, capped at maxPause.
//
//   - A 429 or 503 with a Retry-After pauses for it.
//   - Otherwise a response whose RateLimit headers say no request remains
//     pauses until the quota resets.
//   - Otherwise a 429 or 503 backs off: 1s, then twice the previous pause
//     each time, up to maxPause. A throttled response to a request sent
//     no later than the current backoff step began was already in flight
//     when that step was decided: it does not double the step again.
//   - A 2xx or 3xx response to a request sent after the current step began
//     ends the backoff.
func (p *pauseState) observe(sig signal, sentAt, now time.Time, maxPause time.Duration) verdict {
	throttled := isThrottled(sig.status)
	var v verdict
	switch {
	case throttled && sig.retryAfter > 0:
		v = verdict{pause: sig.retryAfter, reason: PauseRetryAfter}
	case sig.rateLimit > 0:
		v = verdict{pause: sig.rateLimit, reason: PauseRateLimit}
	case throttled:
		if p.step > 0 && !sentAt.After(p.stepAt) {
			return verdict{}
		}
		p.step = min(max(2*p.step, firstBackoff), maxPause)
		p.stepAt = now
		v = verdict{pause: p.step, reason: PauseBackoff}
	}
	if sig.status >= 200 && sig.status < 400 && p.step > 0 && sentAt.After(p.stepAt) {
		p.step = 0
	}
	if v.pause <= 0 {
		return verdict{}
	}
	v.pause = min(v.pause, maxPause)
	end := now.Add(v.pause)
	if end.After(p.until) {
		if p.until.After(now) {
			v.added = end.Sub(p.until)
		} else {
			v.added = v.pause
		}
		p.until, p.reason = end, v.reason
	}
	return v
}

// reasonAt says why the domain is paused at now, knowing that its limiter
// says it is: the reason this process recorded, or PauseShared if this
// process asked for no pause that lasts that long.
func (p *pauseState) reasonAt(now time.Time) string {
	if p.until.After(now) {
		return p.reason
	}
	return PauseShared
}

func isThrottled(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// learn takes in what the response to a request to d, sent at sentAt,
// says: it pauses the domain when the server asks for it (Retry-After,
// RateLimit headers, 429 or 503) and feeds adaptive pacing. The response is
// left as it is.
func (t *Transport) learn(ctx context.Context, d *domain, resp *http.Response, sentAt time.Time) {
	if d.unpaced {
		return
	}
	f := &d.fb
	throttled := isThrottled(resp.StatusCode)
	hinted := hints.HasRateLimit(resp.Header)
	if !throttled && !hinted && !d.limit.Adaptive && !f.backingOff.Load() {
		return
	}
	now := t.clock.now()
	sig := signal{status: resp.StatusCode}
	if throttled {
		sig.retryAfter, _ = hints.RetryAfter(resp.Header.Get("Retry-After"), now)
	}
	if hinted {
		sig.rateLimit, _ = hints.RateLimitWait(resp.Header, now)
	}
	f.mu.Lock()
	v := f.pause.observe(sig, sentAt, now, t.maxPause)
	f.backingOff.Store(f.pause.step > 0)
	if v.pause > 0 {
		f.pauseEnd.Store(int64(f.pause.until.Sub(t.clock.epoch)))
	}
	if d.limit.Adaptive {
		f.adaptive = adaptDelay(f.adaptive, now.Sub(sentAt), resp.StatusCode, t.targetConcurrency, pace(d.limit))
		f.updateMinDelayLocked()
	}
	f.mu.Unlock()
	if v.pause <= 0 {
		return
	}
	d.stats.Paused(v.added)
	if t.logger.Enabled(ctx, slog.LevelDebug) {
		t.logger.DebugContext(ctx, "polite: server asked for a pause", "domain", d.key, "pause", v.pause, "reason", v.reason, "status", resp.StatusCode)
	}
	if err := t.limiter.Pause(context.WithoutCancel(ctx), d.key, v.pause); err != nil {
		t.logger.WarnContext(ctx, "polite: could not pause the domain", "domain", d.key, "pause", v.pause, "err", err)
	}
}

// waitOutPause follows a wait that slept for res: if the domain was paused
// meanwhile, by this process or by another worker sharing the limiter, the
// turn res claimed, from before the pause, is not spent inside it, but
// given back and claimed anew. It leaves in res the reservation the request
// goes with, its Wait the whole time waited.
func (t *Transport) waitOutPause(ctx context.Context, d *domain, res *limiter.Reservation) error {
	for {
		now := t.clock.now()
		if !t.paused(ctx, d, now) {
			return nil
		}
		if err := t.limiter.Cancel(context.WithoutCancel(ctx), limiter.Request{Key: d.key, Rule: d.rule()}, *res); err != nil {
			t.logger.WarnContext(ctx, "polite: could not give back a turn inside a pause", "domain", d.key, "err", err)
		}
		waited := res.Wait
		err := t.wait(ctx, d, now, res)
		res.Wait += waited
		if err != nil || res.Wait == waited {
			return err
		}
	}
}

// paused reports whether d is paused at now: by a pause this process asked
// for, or, as its limiter says, by one another worker asked for. A limiter
// that cannot answer counts as no pause: the request goes at its turn.
func (t *Transport) paused(ctx context.Context, d *domain, now time.Time) bool {
	if end := d.fb.pauseEnd.Load(); end != 0 && int64(now.Sub(t.clock.epoch)) < end {
		return true
	}
	st, err := t.limiter.State(ctx, d.key, d.rule())
	return err == nil && st.Paused > 0
}

// fillPause sets s.PausedUntil and s.PauseReason from the limiter's state
// st of d at now: a pause, or, when a dynamic delay (Crawl-delay, adaptive
// pacing) is what holds the next request back, that delay.
func (t *Transport) fillPause(s *stats.Snapshot, d *domain, st limiter.State, now time.Time) {
	f := &d.fb
	if st.Paused > 0 {
		f.mu.Lock()
		s.PauseReason = f.pause.reasonAt(now)
		f.mu.Unlock()
		s.PausedUntil = now.Add(st.Paused)
		return
	}
	if st.Reason != limiter.ReasonMinDelay || st.Wait <= 0 || f.minDelay.Load() <= int64(d.limit.MinDelay) {
		return
	}
	s.PausedUntil = now.Add(st.Wait)
	s.PauseReason = PauseAdaptive
	if int64(f.crawlDelay()) == f.minDelay.Load() {
		s.PauseReason = PauseCrawlDelay
	}
}

// checkListening reports the first option about listening to servers
// that cannot be used.
func (o *options) checkListening() error {
	switch {
	case o.maxPause <= 0:
		return fmt.Errorf("polite: WithMaxPause: must be positive, got %v", o.maxPause)
	case !(o.targetConcurrency > 0) || math.IsInf(o.targetConcurrency, 1):
		return fmt.Errorf("polite: WithTargetConcurrency: must be positive and finite, got %v", o.targetConcurrency)
	}
	return o.robots.check()
}
