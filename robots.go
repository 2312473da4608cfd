package polite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/temoto/robotstxt"

	"github.com/polite-go/polite/limiter"
)

// robotsTTL is how long a host's robots.txt is kept before it is fetched
// again: RFC 9309 asks crawlers not to keep it longer than 24 hours.
const robotsTTL = 24 * time.Hour

// defaultMaxCrawlDelay caps the Crawl-delay a robots.txt can impose,
// unless WithMaxCrawlDelay says otherwise.
const defaultMaxCrawlDelay = 30 * time.Second

// robotsRetry is how long a robots.txt that could not be fetched (a 5xx or
// 429 answer, or no answer) stands before it is fetched again. In that
// time its host is wholly disallowed, as RFC 9309 asks, unless an earlier
// copy of the file is known: then that copy is used.
const robotsRetry = time.Minute

// maxRobotsHosts caps the hosts whose robots.txt rules a Transport keeps;
// past it, expired entries and then the least recently used are forgotten.
const maxRobotsHosts = 1000

const (
	maxRobotsSize      = 500 << 10 // RFC 9309 asks to parse at least 500 KiB
	maxRobotsRedirects = 5         // RFC 9309 asks to follow at least 5
)

// robotsOptions is what the With options say about robots.txt.
type robotsOptions struct {
	on            bool
	agent         string
	maxCrawlDelay time.Duration
}

func (o robotsOptions) check() error {
	switch {
	case o.on && strings.TrimSpace(o.agent) == "":
		return errors.New("polite: WithRobots: the user-agent token is empty")
	case o.maxCrawlDelay < 0:
		return fmt.Errorf("polite: WithMaxCrawlDelay: must not be negative, got %v", o.maxCrawlDelay)
	}
	return nil
}

// robotsCache fetches, keeps and applies the robots.txt of each host
// (scheme, host, port). mu guards hosts and every entry and fetch in it.
type robotsCache struct {
	t             *Transport
	client        *http.Client
	agent         string
	ttl           time.Duration
	maxCrawlDelay time.Duration
	maxHosts      int

	mu    sync.Mutex
	hosts map[string]*robotsEntry
}

type robotsEntry struct {
	rules    *robotsRules // nil until the first fetch ends
	expires  time.Time    // when rules must be fetched again
	lastUsed time.Time
	fetch    *robotsFetch // the fetch in flight, if any
}

// robotsFetch is one fetch of a robots.txt that concurrent requests share.
// It is cancelled when every request waiting for it has given up.
type robotsFetch struct {
	done    chan struct{} // closed when rules and err are set
	waiters int
	cancel  context.CancelFunc
	rules   *robotsRules
	err     error
}

// robotsRules is what one robots.txt says to the agent. It does not change
// once made.
type robotsRules struct {
	group       *robotstxt.Group // the agent's group; nil allows every path
	unreachable string           // why the file could not be fetched; if set, every path is disallowed
	crawlDelay  time.Duration
}

func (r *robotsRules) allows(path string) bool {
	return r.unreachable == "" && (r.group == nil || r.group.Test(path))
}

func newRobotsCache(t *Transport, o robotsOptions) *robotsCache {
	if !o.on {
		return nil
	}
	c := &robotsCache{
		t:             t,
		agent:         strings.TrimSpace(o.agent),
		ttl:           robotsTTL,
		maxCrawlDelay: o.maxCrawlDelay,
		maxHosts:      maxRobotsHosts,
		hosts:         make(map[string]*robotsEntry),
	}
	c.client = &http.Client{
		Transport: pacer{t},
		CheckRedirect: func(_ *http.Request, via []*http.Request) error {
			if len(via) > maxRobotsRedirects {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	return c
}

// check returns an error wrapping ErrDisallowed if the robots.txt of req's
// host forbids req, fetching the file first if it is not known or has
// expired, and applies the file's Crawl-delay to d.
func (c *robotsCache) check(ctx context.Context, req *http.Request, d *domain) error {
	u := req.URL
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil
	}
	path := u.RequestURI()
	if path == "/robots.txt" {
		return nil
	}
	host := robotsKey(u)
	rules, err := c.rules(ctx, host, req, d)
	if err != nil {
		return err
	}
	if !d.unpaced {
		o := limiter.Observation{Host: host, CrawlDelay: rules.crawlDelay}
		if _, err := c.t.limiter.Observe(context.WithoutCancel(ctx), &limiter.Request{Key: d.key, Rule: &d.rule}, &o); err != nil {
			c.t.logger.WarnContext(ctx, "polite: could not apply robots.txt's Crawl-delay", "domain", d.key, "err", err)
		}
	}
	if rules.allows(robotsPath(path)) {
		return nil
	}
	if rules.unreachable != "" {
		return fmt.Errorf("%w: %s %s: %s", ErrDisallowed, req.Method, u.Redacted(), rules.unreachable)
	}
	return fmt.Errorf("%w: %s %s", ErrDisallowed, req.Method, u.Redacted())
}

// rules returns the robots.txt rules of req's host, whose robotsKey is
// key, waiting for a fetch when they are not known or have expired.
func (c *robotsCache) rules(ctx context.Context, key string, req *http.Request, d *domain) (*robotsRules, error) {
	now := c.t.clock.now()
	c.mu.Lock()
	e, ok := c.hosts[key]
	if !ok {
		if len(c.hosts) >= c.maxHosts {
			c.sweepLocked(now)
		}
		e = &robotsEntry{}
		c.hosts[key] = e
	}
	e.lastUsed = now
	if e.rules != nil && now.Before(e.expires) {
		rules := e.rules
		c.mu.Unlock()
		return rules, nil
	}
	f := e.fetch
	if f == nil {
		f = c.startLocked(e, req)
	}
	f.waiters++
	c.mu.Unlock()

	select {
	case <-f.done:
		if f.err != nil {
			return nil, fmt.Errorf("polite: robots.txt of %s: %w", key, f.err)
		}
		return f.rules, nil
	case <-ctx.Done():
		c.mu.Lock()
		f.waiters--
		if f.waiters == 0 && e.fetch == f {
			e.fetch = nil
			f.cancel()
		}
		c.mu.Unlock()
		d.stats.Canceled()
		return nil, &WaitError{Domain: d.key, RetryAt: c.t.clock.now(), Err: ctx.Err()}
	}
}

// startLocked starts fetching the robots.txt of req's host for e.
func (c *robotsCache) startLocked(e *robotsEntry, req *http.Request) *robotsFetch {
	ctx, cancel := context.WithCancel(context.Background())
	f := &robotsFetch{done: make(chan struct{}), cancel: cancel}
	e.fetch = f
	target := req.URL.Scheme + "://" + req.URL.Host + "/robots.txt"
	go c.run(ctx, f, e, target, req.Header.Get("User-Agent"))
	return f
}

// run fetches target for e and hands the result to f's waiters.
func (c *robotsCache) run(ctx context.Context, f *robotsFetch, e *robotsEntry, target, userAgent string) {
	defer f.cancel()
	rules, err := c.fetch(ctx, target, userAgent)
	now := c.t.clock.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && e.fetch == f {
		switch {
		case rules.unreachable == "":
			e.rules, e.expires = rules, now.Add(c.ttl)
		case e.rules != nil && e.rules.unreachable == "":
			// RFC 9309: an earlier copy may stand while the file is unreachable.
			rules, e.expires = e.rules, now.Add(robotsRetry)
		default:
			e.rules, e.expires = rules, now.Add(robotsRetry)
		}
	}
	if e.fetch == f {
		e.fetch = nil
	}
	f.rules, f.err = rules, err
	close(f.done)
}

// fetch gets and reads one robots.txt through the Transport's pacing
// step, so that the fetch is paced, counted and listened to like any
// request to its domain. An error is returned only when the fetch says nothing about the
// file: polite refused to send it (*WaitError) or nobody waits for it any
// more; a server or network error makes the file unreachable.
func (c *robotsCache) fetch(ctx context.Context, target, userAgent string) (*robotsRules, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	if userAgent != "" {
		req.Header.Set("User-Agent", userAgent)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		var we *WaitError
		if errors.As(err, &we) || errors.Is(err, context.Canceled) {
			return nil, err
		}
		return &robotsRules{unreachable: fmt.Sprintf("robots.txt unreachable (%v); retried after %v", err, robotsRetry)}, nil
	}
	defer resp.Body.Close()
	switch code := resp.StatusCode; {
	case code >= 200 && code <= 299:
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxRobotsSize+1))
		if err != nil {
			return &robotsRules{unreachable: fmt.Sprintf("robots.txt unreadable (%v); retried after %v", err, robotsRetry)}, nil
		}
		if len(body) > maxRobotsSize {
			body = body[:maxRobotsSize]
			body = body[:bytes.LastIndexByte(body, '\n')+1] // no cut line
		}
		g := parseRobots(body).FindGroup(c.agent)
		return &robotsRules{group: g, crawlDelay: min(g.CrawlDelay, c.maxCrawlDelay)}, nil
	case code >= 300 && code <= 499 && code != http.StatusTooManyRequests:
		// 3xx after too many redirects, 4xx: there is no robots.txt, so no rules.
		return &robotsRules{}, nil
	default:
		// 5xx, and 429: the server asking to slow down, not the file's
		// absence, which Google too treats as a server error.
		return &robotsRules{unreachable: fmt.Sprintf("robots.txt answered %d %s; retried after %v", code, http.StatusText(code), robotsRetry)}, nil
	}
}

// parseRobots reads a robots.txt leniently, as RFC 9309 asks: when the
// parser rejects the file, the lines it rejects (an Allow or Disallow
// before any User-agent, a malformed Crawl-delay) are dropped and the rest
// is read. A file that still fails to parse allows everything. The rules'
// paths are read in robotsPath's form, as request URIs are matched.
func parseRobots(body []byte) *robotstxt.RobotsData {
	body = canonicalRules(body)
	if data, err := robotstxt.FromBytes(body); err == nil {
		return data
	}
	var kept [][]byte
	inGroup := false
	for line := range bytes.Lines(body) {
		probe := line
		if inGroup {
			probe = append([]byte("User-agent: *\n"), line...)
		}
		if _, err := robotstxt.FromBytes(probe); err != nil {
			continue
		}
		field, _, _ := bytes.Cut(bytes.TrimSpace(line), []byte(":"))
		field = bytes.ToLower(bytes.TrimSpace(field))
		inGroup = inGroup || bytes.Equal(field, []byte("user-agent")) || bytes.Equal(field, []byte("useragent"))
		kept = append(kept, line)
	}
	if data, err := robotstxt.FromBytes(bytes.Join(kept, nil)); err == nil {
		return data
	}
	data, _ := robotstxt.FromBytes(nil)
	return data
}

// robotsKey names the host whose robots.txt governs u: scheme, host and
// port, the port made explicit.
func robotsKey(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return u.Scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// sweepLocked forgets the entries whose rules have expired, then, if that
// is not enough, the least recently used, until a quarter of the cache is
// free. Entries with a fetch in flight stay.
func (c *robotsCache) sweepLocked(now time.Time) {
	idle := make([]string, 0, len(c.hosts))
	for key, e := range c.hosts {
		switch {
		case e.fetch != nil:
		case e.rules == nil || !now.Before(e.expires):
			delete(c.hosts, key)
		default:
			idle = append(idle, key)
		}
	}
	excess := len(c.hosts) - c.maxHosts*3/4
	if excess <= 0 {
		return
	}
	slices.SortFunc(idle, func(a, b string) int { return c.hosts[a].lastUsed.Compare(c.hosts[b].lastUsed) })
	for _, key := range idle[:min(excess, len(idle))] {
		delete(c.hosts, key)
	}
}
