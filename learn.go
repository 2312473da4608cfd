package polite

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/polite-go/polite/internal/feedback"
	"github.com/polite-go/polite/internal/hints"
	"github.com/polite-go/polite/limiter"
)

// learn tells the limiter what the response to a request to d, sent at
// sent, says: pauses the server asks for (Retry-After, RateLimit headers,
// 429 or 503) and adaptive pacing. Most responses say nothing, and cost
// nothing. The response is left as it is.
func (t *Transport) learn(ctx context.Context, d *domain, resp *http.Response, sent time.Time) {
	if d.unpaced {
		return
	}
	throttled := feedback.Throttled(resp.StatusCode)
	hinted := hints.HasRateLimit(resp.Header)
	if !throttled && !hinted && !d.rule.Adaptive && !d.listening.Load() {
		return
	}
	now := time.Now()
	o := limiter.Observation{Status: resp.StatusCode, Sent: sent, Latency: now.Sub(sent)}
	if throttled {
		o.RetryAfter, _ = hints.RetryAfter(resp.Header.Get("Retry-After"), now)
	}
	if hinted {
		o.RateLimit, _ = hints.RateLimitWait(resp.Header, now)
	}
	d.listening.Store(throttled)
	added, err := t.limiter.Observe(context.WithoutCancel(ctx), d.request(), o)
	if err != nil {
		t.logger.WarnContext(ctx, "polite: could not tell the limiter what the server said", "domain", d.key, "status", resp.StatusCode, "err", err)
		return
	}
	if added <= 0 {
		return
	}
	d.stats.Paused(added)
	if t.logger.Enabled(ctx, slog.LevelDebug) {
		t.logger.DebugContext(ctx, "polite: server asked for a pause", "domain", d.key, "added", added, "status", resp.StatusCode)
	}
}
