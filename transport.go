// Package polite paces HTTP requests per domain, so that scrapers and
// crawlers stay welcome.
package polite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite/internal/domains"
	"github.com/polite-go/polite/internal/robotscache"
	"github.com/polite-go/polite/internal/scopes"
	"github.com/polite-go/polite/internal/ticket"
	"github.com/polite-go/polite/limiter"
)

// Transport is an http.RoundTripper that paces outgoing requests per
// domain. Wrap a client's transport with it:
//
//	t, err := polite.NewTransport(http.DefaultTransport, polite.WithDefault(config.Limit{RequestsPerSecond: 2, Burst: 1}))
//	client := &http.Client{Transport: t, Timeout: time.Minute}
//
// A request flows one way. It is keyed by its URL (DomainKey by default);
// with WithRobots, its host's robots.txt decides whether it may go; it
// takes a place under the MaxConcurrent of its domain and of the scopes it
// also passes (its server's with WithServerLimit, the whole crawler's with
// WithGlobalLimit); it waits for its turn in each, which the limiter (a
// limiter.Memory by default; see WithLimiter) decides under the scope's
// config.Limit and what its server asked for, holding no turn in one
// scope while it waits in another; it is
// sent through the base transport; the limiter takes in what the response
// says (Retry-After, rate-limit headers, a 429, a server failing with 5xx
// answers or timeouts, the latency for adaptive pacing); and the domain's
// place and stats count it in flight until its response body is read to
// its end or closed, as net/http returns its connection.
//
// A response is read for what it says about pacing, whatever its status:
// Retry-After (delta seconds, rounded up when it has a decimal part, or an
// HTTP date); the rate-limit fields of every IETF RateLimit draft,
// X-RateLimit-* (GitHub, Reddit, Discord's Reset-After, Atlassian),
// X-Rate-Limit-* (X, Okta) and OpenAI's -requests and -tokens pairs, whose
// resets may be delta seconds, Unix seconds or milliseconds, RFC 3339 or
// HTTP dates, or Go durations ("6m0s"). Where a value can be read more
// than one way, the reading that never comes back sooner than the server
// could have meant wins: a reset below 1e9 is delta seconds (one meant in
// milliseconds waits longer), a 429 without Retry-After whose fields say
// requests remain waits for the longest reset they give, and of several
// waits the longest wins. A 429 without Retry-After, and the answers
// config.Limit.ErrorStatuses lists, back the domain off: 1 s, doubling
// until a success. Nothing read speeds a domain past its limit or pauses
// it past WithMaxPause, and a malformed value asks for nothing.
//
// A request waits using its context, so a cancelled context or an
// http.Client.Timeout ends the wait at once; a wait that cannot end before
// the context's deadline fails at once with a *WaitError, which callers
// see as a timeout. Nothing is sent for a failed wait, and its turn is
// given back. Responses are returned as they are, whatever their status;
// redirects and retries come through RoundTrip again and are each paced
// against their own domain.
//
// Memory is bounded: the Transport tracks at most WithMaxDomains domains,
// forgetting the least recently used idle ones, stats included, when more
// come; a limiter.Memory forgets a domain's pace once it has fully
// recovered.
//
// A Transport is safe for concurrent use by many goroutines. It holds no
// lock while a request waits, so a slow domain never stalls another.
//
// Make a Transport with NewTransport: a zero Transport refuses every
// request, and every change of a limit, with an error, and reports
// nothing (no domain, no limit, no wait).
type Transport struct {
	base           http.RoundTripper
	keyFunc        KeyFunc
	limiter        limiter.Limiter
	maxWait        time.Duration
	timeout        time.Duration
	loopbackExempt bool
	logger         *slog.Logger
	trace          *Trace // nil without WithLogger and WithTrace
	userAgent      string // sent with requests that carry none
	limits         atomic.Pointer[limitSet]
	limitsMu       sync.Mutex // held while SetLimit or SetConfig replaces limits
	domains        *domains.Table[domain, *domain]

	maxPause  time.Duration
	maxErrors int                // failed answers in a row that give a domain up; 0: never
	robots    *robotscache.Cache // nil unless WithRobots
	scopes    *scopes.Table
}

// NewTransport returns a Transport that sends requests through base (a
// clone of http.DefaultTransport when nil, so that TLS settings made
// through the Transport stay its own), paced as opts say. Every domain is
// paced at 1 request a second, burst 1, unless an option says otherwise.
// An invalid limit is an error naming the domain and the field (a
// *config.FieldError).
func NewTransport(base http.RoundTripper, opts ...Option) (*Transport, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if base == nil {
		base = defaultBase()
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	traces := o.traces
	if o.logger != nil {
		traces = append([]*Trace{logTrace(o.logger)}, traces...)
	}
	o.withDefaults()
	limits, err := newLimitSet(&o.defaultLimit, o.domains, o.serverLimit, o.globalLimit, o.keyFunc, o.maxPause)
	if err != nil {
		return nil, err
	}
	t := &Transport{
		base:           base,
		keyFunc:        o.keyFunc,
		limiter:        o.limiter,
		maxWait:        o.maxWait,
		timeout:        o.timeout,
		loopbackExempt: o.loopbackExempt,
		logger:         o.logger,
		trace:          joinTraces(traces),
		userAgent:      o.userAgent,

		maxPause:  o.maxPause,
		maxErrors: o.maxErrors,
	}
	t.limits.Store(limits)
	t.robots = newRobotsCache(t, o.robots, o.userAgent)
	t.scopes = scopes.New(o.lookup, o.maxDomains)
	t.domains = domains.New(o.maxDomains, t.setUpDomain)
	t.logLimits()
	return t, nil
}

// RoundTrip waits for the request's turn in its domain, sends it through
// the base transport and observes the response. See Transport.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.made() {
		closeRequestBody(req)
		return nil, errNotMade
	}
	req = t.withUserAgent(req)
	tk := ticket.From(req.Context())
	d, err := t.acquire(req)
	if err != nil {
		closeRequestBody(req)
		tk.Done()
		return nil, err
	}
	if ctx := req.Context(); ctx.Err() != nil {
		// Done before its turn was asked for: net/http's own error.
		d.stats.Canceled()
		return nil, t.refuse(req, d, tk, false, context.Cause(ctx))
	}
	if queued := tk.TakeQueued(); queued > 0 {
		d.stats.Queued(queued)
	}
	if err := t.givenUp(d); err != nil {
		d.stats.GivenUp()
		return nil, t.refuse(req, d, tk, false, err)
	}
	if t.robots != nil {
		if err := t.checkRobots(req, d); err != nil {
			return nil, t.refuse(req, d, tk, false, err)
		}
	}
	return t.pace(t.base, req, d, tk, false)
}

// pace sends req, which claims d, in its turn: it claims the scopes it
// passes besides its domain, takes a place under MaxConcurrent in each,
// waits for its turn in each and passes the departure gate (the wait's
// last step), sends the request through base, tells the limiter what the
// response says, and tracks the response's body, so that the request's
// flight ends when the body is closed. A robots.txt fetch is counted
// apart from the requests.
func (t *Transport) pace(base http.RoundTripper, req *http.Request, d *domain, tk *ticket.Ticket, robots bool) (*http.Response, error) {
	ctx := req.Context()
	t.trace.turnAsked(ctx, d.key)
	ls := t.limits.Load()
	lim := t.currentLimit(d)
	var claims scopes.Claims
	if (ls.server != nil || ls.global != nil) && !d.has(flagExempt) {
		claims = t.acquireScopes(req, ls)
	}
	if err := t.takePlaces(ctx, d, lim, claims); err != nil {
		return nil, t.refuse(req, d, tk, false, err)
	}
	fl := flight{d: d}
	if len(claims) > 0 || tk != nil || t.timeout > 0 {
		fl.extra = &flightExtras{claims: claims, tk: tk}
	}
	// The wait's last step notes the request's departure: from here to
	// the base, only counters and WithTimeout's context.
	var w waited
	if err := t.wait(ctx, d, lim, claims, tk, &w); err != nil {
		claims.End()
		d.stats.Canceled()
		return nil, t.refuse(req, d, tk, true, err)
	}
	return t.sendInTurn(base, req, &fl, &w, claims, tk, robots)
}

// sendInTurn is pace from the end of the wait on, for a request that
// holds fl, with w its wait, claims its claims and tk its ticket: it counts
// the request
// (a robots.txt fetch apart), sends it through base, tells the limiter
// what the response says and tracks the response's body. It is a
// function of its own so that the stack a waiting request sleeps on
// holds none of it.
//
//go:noinline
func (t *Transport) sendInTurn(base http.RoundTripper, req *http.Request, fl *flight, w *waited, claims scopes.Claims, tk *ticket.Ticket, robots bool) (*http.Response, error) {
	ctx, d := req.Context(), fl.d
	t.trace.waited(ctx, d.key, w)
	if err := t.givenUp(d); err != nil { // while it waited
		claims.End()
		d.stats.GivenUp()
		return nil, t.refuse(req, d, tk, true, err)
	}
	tk.Held()
	claims.Sent(w.sent)
	if robots {
		d.stats.RobotsSent(w.sent)
	} else {
		d.stats.Sent(w.sent, w.wait, w.degraded)
		switch w.scope {
		case scopes.Server:
			d.stats.ServerDelayed(w.wait)
		case scopes.Global:
			d.stats.GlobalDelayed(w.wait)
		}
	}
	if t.timeout > 0 {
		var sendCtx context.Context
		sendCtx, fl.extra.cancel = context.WithTimeout(ctx, t.timeout)
		req = req.WithContext(sendCtx)
	}
	t.trace.sent(ctx, d.key, w.degraded)
	resp, err := t.send(base, req, fl, w)
	w.release()
	if err != nil {
		t.trace.answered(ctx, d.key, 0, err)
		t.observeFailure(ctx, d, err, w.sent)
		return nil, err
	}
	t.trace.answered(ctx, d.key, resp.StatusCode, nil)
	if !robots {
		d.stats.Response(resp.StatusCode)
	}
	t.observe(ctx, d, resp, w.sent)
	resp.Body = track(*fl, resp.Body)
	return resp, nil
}

// pacer is the Transport without its robots.txt step, sending through
// base: what robots.txt fetches go through, paced, counted and observed
// like any request to their domain.
type pacer struct {
	t    *Transport
	base http.RoundTripper
}

func (p pacer) RoundTrip(req *http.Request) (*http.Response, error) {
	d, err := p.t.acquire(req)
	if err != nil {
		closeRequestBody(req)
		return nil, err
	}
	return p.t.pace(p.base, req, d, nil, true)
}

// send sends the request, which claims d, through base, after the
// departure gate's last check (w). If base fails, or panics, the
// request's flight fl ends there: its places, its claims and its
// WithTimeout context are given back before the error returns or the
// panic goes on up. A request whose context ends while the last check
// holds it back is not sent, and counts as failed.
func (t *Transport) send(base http.RoundTripper, req *http.Request, fl *flight, w *waited) (resp *http.Response, err error) {
	answered := false
	defer func() {
		if !answered {
			fl.d.stats.Failed()
			fl.end()
		}
	}()
	if err := t.leave(req.Context(), fl.d, w); err != nil {
		closeRequestBody(req)
		return nil, err
	}
	resp, err = base.RoundTrip(req)
	if err != nil || resp == nil {
		if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
		if err == nil {
			err = errors.New("polite: base RoundTripper returned no response and no error")
		}
		return nil, err
	}
	answered = true
	return resp, nil
}

// acquire finds the request's domain and claims it for the request.
func (t *Transport) acquire(req *http.Request) (*domain, error) {
	key, err := t.Key(req)
	if err != nil {
		return nil, err
	}
	return t.domains.Acquire(key), nil
}

// acquireScopes claims for req the scopes it passes besides its domain
// under ls: its server's and the global one. The caller releases them.
func (t *Transport) acquireScopes(req *http.Request, ls *limitSet) scopes.Claims {
	var claims scopes.Claims
	if ls.server != nil && req.URL != nil && req.URL.Host != "" {
		claims = append(claims, ls.server.claim(t.scopes.AcquireServer(req.Context(), req.URL.Hostname())))
	}
	if ls.global != nil {
		claims = append(claims, ls.global.claim(t.scopes.AcquireGlobal()))
	}
	return claims
}

// takePlaces takes a place under the MaxConcurrent of d under lim, then
// one in each scope claimed. When it cannot, it gives back the places and
// the claims it holds, counts the request as canceled and returns why,
// for the caller to refuse the request.
func (t *Transport) takePlaces(ctx context.Context, d *domain, lim *limitInForce, claims scopes.Claims) error {
	err := d.places.Take(ctx, d.maxConcurrent(lim))
	if err == nil {
		if err = claims.TakePlaces(ctx); err != nil {
			d.places.Give()
		}
	}
	if err != nil {
		claims.Release()
		d.stats.Canceled()
		return &WaitError{Domain: d.key, RetryAt: time.Now(), Err: err}
	}
	return nil
}

// waitError is the error of a failed wait under ctx for a request to d,
// whose turn would have come at retryAt.
func (t *Transport) waitError(ctx context.Context, d *domain, retryAt time.Time, err error) error {
	if ctx.Err() != nil {
		return &WaitError{Domain: d.key, RetryAt: retryAt, Err: context.Cause(ctx)}
	}
	for _, cause := range []error{context.DeadlineExceeded, limiter.ErrWaitTooLong} {
		if errors.Is(err, cause) {
			return &WaitError{Domain: d.key, RetryAt: retryAt, Err: cause}
		}
	}
	return fmt.Errorf("polite: %s: limiter: %w", d.key, err)
}

// refuse ends a request that will not be sent: it gives back its place
// under MaxConcurrent (if it took one) and its claim on d, closes its
// body, ends its ticket, tells the Trace, and returns err.
func (t *Transport) refuse(req *http.Request, d *domain, tk *ticket.Ticket, tookPlace bool, err error) error {
	t.trace.refused(req.Context(), d.key, err)
	if tookPlace {
		d.places.Give()
	}
	d.release()
	closeRequestBody(req)
	tk.Done()
	return err
}

func closeRequestBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// defaultBase is the base of a Transport given none: a clone of
// http.DefaultTransport, or http.DefaultTransport itself if a program has
// replaced it with something other than an *http.Transport.
func defaultBase() http.RoundTripper {
	if d, ok := http.DefaultTransport.(*http.Transport); ok {
		return d.Clone()
	}
	return http.DefaultTransport
}

// CloseIdleConnections closes the idle connections of the base transport,
// if it has a CloseIdleConnections method.
func (t *Transport) CloseIdleConnections() {
	type closeIdler interface{ CloseIdleConnections() }
	if c, ok := t.base.(closeIdler); ok {
		c.CloseIdleConnections()
	}
}

// Close closes the Transport's limiter if it has a Close method: a
// limiter.Memory that Persist set up writes its state once more, a Redis
// limiter stops probing. The Transport must not be used after.
func (t *Transport) Close() error {
	if c, ok := t.limiter.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
