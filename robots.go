package polite

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/polite-go/polite/internal/robotscache"
	"github.com/polite-go/polite/limiter"
)

// robotsOptions is what the With options say about robots.txt.
type robotsOptions struct {
	on            bool
	agent         string
	maxCrawlDelay time.Duration
}

// check reports whether the options can be used, and puts agent in the
// form it is matched in (see robotsAgent), taking it from userAgent if
// need be.
func (o *robotsOptions) check(userAgent string) error {
	if o.maxCrawlDelay < 0 {
		return fmt.Errorf("polite: WithMaxCrawlDelay: must not be negative, got %v", o.maxCrawlDelay)
	}
	if !o.on {
		return nil
	}
	agent, err := robotsAgent(o.agent, userAgent)
	o.agent = agent
	return err
}

// newRobotsCache returns the robots.txt cache of t, or nil without
// WithRobots. Its fetches go through t's pacing step (see pacer), and
// t's Trace is told of them.
func newRobotsCache(t *Transport, o robotsOptions, userAgent string) *robotscache.Cache {
	if !o.on {
		return nil
	}
	var fetching func(context.Context, string) (context.Context, func(error))
	var joined func(ctx, fetchCtx context.Context)
	if t.trace != nil {
		fetching, joined = t.trace.RobotsFetch, t.trace.RobotsJoined
	}
	return robotscache.New(robotscache.Config{
		Agent:         o.agent,
		UserAgent:     userAgent,
		MaxCrawlDelay: o.maxCrawlDelay,
		Base:          t.base,
		Pacer:         func(base http.RoundTripper) http.RoundTripper { return pacer{t, base} },
		Now:           time.Now,
		Fetching:      fetching,
		Joined:        joined,
	})
}

// checkRobots is the robots.txt step of req, which claims d: it returns an
// error wrapping ErrDisallowed if the robots.txt of req's host forbids
// req, and applies the file's Crawl-delay to d.
func (t *Transport) checkRobots(req *http.Request, d *domain) error {
	ctx := req.Context()
	res, err := t.robots.Check(ctx, req)
	if lim := d.inForce.Load(); res.Host != "" && !d.unpaced(lim) {
		o := limiter.Observation{Host: res.Host, CrawlDelay: res.CrawlDelay}
		if _, err := t.limiter.Observe(ctx, d.request(lim), o); err != nil {
			t.logger.WarnContext(ctx, "polite: could not apply robots.txt's Crawl-delay", "domain", d.key, "err", err)
		}
	}
	var unreachable *robotscache.UnreachableError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &unreachable):
		d.stats.Disallowed()
		return &WaitError{Domain: d.key, RetryAt: unreachable.RetryAt, Err: err}
	case errors.Is(err, ErrDisallowed):
		d.stats.Disallowed()
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		d.stats.Canceled()
		return &WaitError{Domain: d.key, RetryAt: time.Now(), Err: err}
	}
	return err
}
