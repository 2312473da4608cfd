package polite

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/polite-go/polite/internal/feedback"
	"github.com/polite-go/polite/internal/hints"
	"github.com/polite-go/polite/limiter"
)

// observe tells the limiter what the response to a request to d, sent at
// sent, says: pauses the server asks for (Retry-After, rate-limit
// headers), backoff after a 429 or while the server fails, and adaptive
// pacing. Most responses say nothing, and cost nothing. The response is
// left as it is.
func (t *Transport) observe(ctx context.Context, d *domain, resp *http.Response, sent time.Time) {
	lim := d.inForce.Load()
	t.countAnswer(d, lim, resp.StatusCode, resp.Status)
	if d.unpaced(lim) {
		return
	}
	backsOff := feedback.Throttled(resp.StatusCode) || feedback.Struggling(lim.rule.ErrorStatuses, resp.StatusCode)
	if !backsOff && !speaks(resp) && !lim.rule.Adaptive && !d.has(flagObserving) {
		return
	}
	d.set(flagObserving, backsOff)
	t.tell(ctx, d, lim, observation(resp, sent, time.Now()))
}

// observeFailure tells the limiter that a request to d, sent at sent, got
// no response but err, when err says the server could not be reached or
// did not answer in time: a server failing backs its domain off as a 5xx
// does (see config.Limit.ErrorStatuses).
func (t *Transport) observeFailure(ctx context.Context, d *domain, err error, sent time.Time) {
	lim := d.inForce.Load()
	now := time.Now()
	failed := transportFailure(ctx, err, now.Sub(sent))
	if failed {
		t.countAnswer(d, lim, 0, err.Error())
	}
	if d.unpaced(lim) || !failed || !feedback.Struggling(lim.rule.ErrorStatuses, 0) {
		return
	}
	d.set(flagObserving, true)
	t.tell(ctx, d, lim, limiter.Observation{Failed: true, Sent: sent, Latency: now.Sub(sent)})
}

// tell gives o, under d's limit in force lim, to the limiter and counts
// the pause it adds.
func (t *Transport) tell(ctx context.Context, d *domain, lim *limitInForce, o limiter.Observation) {
	added, err := t.limiter.Observe(context.WithoutCancel(ctx), d.request(lim), o)
	if err != nil {
		t.logger.WarnContext(ctx, "polite: could not tell the limiter what the server said", "domain", d.key, "status", o.Status, "err", err)
		return
	}
	if added <= 0 {
		return
	}
	d.stats.Paused(added)
	t.trace.pauseObserved(ctx, d.key, pauseReason(lim, o), added)
}

// pauseReason says what in o, an observation under lim, asked for the
// pause it added, as the limiter reads it: a Retry-After, rate-limit
// fields, a failing server, or a 429 that said nothing of when.
func pauseReason(lim *limitInForce, o limiter.Observation) limiter.Reason {
	switch {
	case o.RetryAfter > 0:
		return limiter.ReasonRetryAfter
	case o.RateLimit > 0:
		return limiter.ReasonRateLimit
	case o.Failed || feedback.Struggling(lim.rule.ErrorStatuses, o.Status):
		return limiter.ReasonErrors
	}
	return limiter.ReasonBackoff
}

// speaks reports, cheaply, whether resp's header says anything about
// pacing.
func speaks(resp *http.Response) bool {
	return feedback.Throttled(resp.StatusCode) || len(resp.Header["Retry-After"]) > 0 || hints.HasRateLimit(resp.Header)
}

// observation is what resp, the response to a request sent at sent and
// received at now, says about pacing: its Retry-After whatever its status,
// and its rate-limit headers. A 429 without Retry-After is refused (see
// hints.RateLimitWait): its resets count even where requests remain. With
// Retry-After, the server said when: a reset counts only where its quota
// is used up.
func observation(resp *http.Response, sent, now time.Time) limiter.Observation {
	o := limiter.Observation{Status: resp.StatusCode, Sent: sent, Latency: now.Sub(sent)}
	o.RetryAfter, _ = hints.RetryAfterField(resp.Header, now)
	if refused := resp.StatusCode == http.StatusTooManyRequests && o.RetryAfter == 0; refused || hints.HasRateLimit(resp.Header) {
		o.RateLimit, _ = hints.RateLimitWait(resp.Header, now, refused)
	}
	return o
}

// transportFailure reports whether err, a base RoundTripper's error for a
// request whose context is ctx and that the server had for atServer, says
// the server could not be reached or did not answer in time: a timeout, a
// refused, reset or closed connection, a failed TLS handshake. A cancelled
// context, a name that does not resolve and a request the base would not
// send are not the server's doing, nor is the deadline of ctx when it left
// the server less than answerTime: the caller was in a hurry.
func transportFailure(ctx context.Context, err error, atServer time.Duration) bool {
	if errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled) {
		return false
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && atServer < answerTime {
		return false
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && !dnsErr.IsTimeout {
		return false
	}
	var netErr net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout() {
		return true
	}
	var (
		opErr     *net.OpError
		alert     tls.AlertError
		header    tls.RecordHeaderError
		verifyErr *tls.CertificateVerificationError
	)
	return errors.As(err, &opErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &alert) || errors.As(err, &header) || errors.As(err, &verifyErr) ||
		strings.Contains(err.Error(), serverClosedIdle)
}

// answerTime is how long a server must have had a request for the
// deadline of the request's context to count as the server's failure, as
// config.Limit.ErrorStatuses says. A storm of requests whose callers give
// them a few milliseconds says nothing of the server: counting them backed
// the domain off for a second after every request had ended.
const answerTime = time.Second

// serverClosedIdle is the message of net/http's unexported error for a
// connection the server closed before it read the request: a server that
// closes a new connection at once may be seen doing so before the request
// is written, and net/http then says this rather than EOF.
const serverClosedIdle = "http: server closed idle connection"
