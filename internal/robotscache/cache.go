// Package robotscache fetches, keeps and applies each host's robots.txt for polite's Transport.
package robotscache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/polite-go/polite/internal/lru"
	"github.com/polite-go/polite/robots"
)

// robotsTTL is how long a host's robots.txt is kept before it is fetched
// again: RFC 9309 asks crawlers not to keep it longer than 24 hours.
const robotsTTL = 24 * time.Hour

// robotsRetry is how long a robots.txt that could not be fetched (a 5xx or
// 429 answer, no answer, or not within robotsFetchTimeout) stands before it
// is fetched again. In that time its host is wholly disallowed, as RFC 9309
// asks, unless an earlier copy of the file is known: then that copy is used.
const robotsRetry = time.Minute

// robotsFetchTimeout is how long a robots.txt fetch may take in all, from
// the send of its first request to the end of the file's body, its
// redirects included; the waits for its turns under the pacing do not
// count. Past it, the file is unreachable.
const robotsFetchTimeout = 10 * time.Second

// DefaultMaxCrawlDelay caps the Crawl-delay a robots.txt can impose,
// unless the Transport's WithMaxCrawlDelay, or the command's
// -max-crawl-delay, says otherwise.
const DefaultMaxCrawlDelay = 30 * time.Second

// robotsBudget is how many bytes the robots.txt cache may count; past it,
// the least recently used hosts are forgotten.
const robotsBudget = 16 << 20

// robotsEntrySize is what the cache counts for a host besides its file's
// rules: the entry, its key, and the fixed part of a parsed file.
const robotsEntrySize = 1 << 10

const (
	maxRobotsSize      = 500 << 10 // RFC 9309 asks to parse at least 500 KiB
	maxRobotsRedirects = 5         // RFC 9309 asks to follow at least 5
)

// ErrDisallowed is the error for a request that robots.txt forbids.
var ErrDisallowed = errors.New("polite: disallowed by robots.txt")

// ErrUnreachable is matched, with ErrDisallowed, by the error for a
// request refused because its host's robots.txt could not be fetched.
var ErrUnreachable = errors.New("polite: robots.txt unreachable")

// UnreachableError is the error for a request refused because its host's
// robots.txt could not be fetched: it matches ErrDisallowed and
// ErrUnreachable, and says when the file is fetched again.
type UnreachableError struct {
	msg     string
	RetryAt time.Time // when the file is fetched again
	Host    string    // scheme, host and port, as Result.Host
}

// RefusedBy returns the host whose robots.txt refused the request and the
// rule it applied: every path is disallowed.
func (e *UnreachableError) RefusedBy() (host, rule string) { return e.Host, unreachableRule }

// DisallowedError is the error for a request its host's robots.txt
// forbids: it matches ErrDisallowed.
type DisallowedError struct {
	msg  string // names the request, its URL redacted, and the rule
	Host string // scheme, host and port, as Result.Host
	Rule string // the rule that refused the request: "Disallow: /private"
}

// Error names the request refused and the rule that refused it.
func (e *DisallowedError) Error() string { return e.msg }

// Is reports whether target is ErrDisallowed.
func (e *DisallowedError) Is(target error) bool { return target == ErrDisallowed }

// RefusedBy returns the host whose robots.txt refused the request and the
// rule that did.
func (e *DisallowedError) RefusedBy() (host, rule string) { return e.Host, e.Rule }

// Error names the request refused and why its robots.txt was not fetched.
func (e *UnreachableError) Error() string { return e.msg }

// Is reports whether target is ErrDisallowed or ErrUnreachable.
func (e *UnreachableError) Is(target error) bool {
	return target == ErrDisallowed || target == ErrUnreachable
}

// Config is what a Cache needs from the Transport.
type Config struct {
	Agent         string            // the product token the files are read for
	UserAgent     string            // sent with each fetch; if empty, that of the request that needs the file
	MaxCrawlDelay time.Duration     // caps the Crawl-delay a file can ask for
	Base          http.RoundTripper // what the fetches are sent through, by way of Pacer
	// Pacer returns the Transport's pacing step as a RoundTripper that
	// sends through base: paced, counted and observed like any request
	// to its domain. The fetches go through it.
	Pacer func(base http.RoundTripper) http.RoundTripper
	Now   func() time.Time // the clock; time.Now in the Transport
	// Fetching, if not nil, is called when a request whose context is ctx
	// starts a fetch of the file at url: the fetch is sent with the
	// context it returns, without its cancellation, instead of
	// context.Background(), and done is called with nil when the fetch
	// ends with rules (a file, or none), or with why it did not.
	Fetching func(ctx context.Context, url string) (fetchCtx context.Context, done func(error))
	// Joined, if not nil, is called when a request whose context is ctx
	// waits for a fetch another request started; fetchCtx is the fetch's.
	Joined func(ctx, fetchCtx context.Context)
}

// Result is what a host's robots.txt says of one request.
type Result struct {
	// Host is the scheme, host and port whose robots.txt applies; empty
	// when none does (a scheme other than http and https, or a request for
	// robots.txt itself).
	Host string
	// CrawlDelay is the file's Crawl-delay for the agent, at most
	// MaxCrawlDelay; zero if it gives none.
	CrawlDelay time.Duration
}

// Cache fetches, keeps and applies the robots.txt of each host (scheme,
// host and port), within a byte budget. It is safe for concurrent use.
// mu guards hosts, used and every entry in hosts.
type Cache struct {
	Config
	ttl     time.Duration
	timeout time.Duration // robotsFetchTimeout
	budget  int64         // robotsBudget

	mu    sync.Mutex
	hosts lru.List[string, *robotsEntry]
	used  int64 // the sum of the entries' sizes
}

type robotsEntry struct {
	rules   *robotsRules // nil until the first fetch ends
	expires time.Time    // when rules must be fetched again
	fetch   *robotsFetch // the fetch in flight, if any
	size    int64        // what the entry counts in Cache.used
}

// robotsFetch is one fetch of a robots.txt, shared by every request that
// waits for it. Its waiters may give up; it goes on for the next ones, for
// at most robotsFetchTimeout once sent.
type robotsFetch struct {
	done  chan struct{}   // closed when rules and err are set
	ctx   context.Context // what the fetch is sent with: context.Background(), or what Config.Fetching made
	rules *robotsRules
	err   error
}

// robotsRules is what one robots.txt says. It does not change once made.
type robotsRules struct {
	file        *robots.Robots // nil allows every path
	unreachable string         // why the file could not be fetched; if set, every path is disallowed
	retryAt     time.Time      // with unreachable: when the file is fetched again
	crawlDelay  time.Duration  // the agent's, capped
	size        int64          // the bytes file holds at most: 4 per byte of body parsed
}

// match reports whether the rules allow agent to fetch uri and, if not,
// the rule that refuses it.
func (r *robotsRules) match(agent, uri string) (allowed bool, rule string) {
	if r.unreachable != "" {
		return false, unreachableRule
	}
	allowed, pattern := r.file.Match(agent, uri)
	if allowed {
		return true, ""
	}
	return false, "Disallow: " + pattern
}

// unreachableRule is the Rule of a request refused because its host's
// robots.txt could not be fetched.
const unreachableRule = "Disallow: / (robots.txt unreachable)"

// New returns an empty Cache.
func New(c Config) *Cache {
	return &Cache{
		Config:  c,
		ttl:     robotsTTL,
		timeout: robotsFetchTimeout,
		budget:  robotsBudget,
	}
}

// Check says whether the robots.txt of req's host allows req, fetching the
// file first if it is not known or has expired, and what the file's
// Crawl-delay is. A request the file forbids gets an error wrapping
// ErrDisallowed (a *DisallowedError or an *UnreachableError), with the
// Result. If ctx ends while req waits for the
// file, Check returns ctx.Err(), and the fetch goes on for the next
// requests. An error that wraps neither says the file could not be asked
// for at all (the pacing refused the fetch).
func (c *Cache) Check(ctx context.Context, req *http.Request) (Result, error) {
	u := req.URL
	if u.Scheme != "http" && u.Scheme != "https" {
		return Result{}, nil
	}
	uri := u.RequestURI()
	if uri == "/robots.txt" {
		return Result{}, nil
	}
	host := robotsKey(u)
	rules, err := c.rules(ctx, host, req)
	if err != nil {
		return Result{}, err
	}
	res := Result{Host: host, CrawlDelay: rules.crawlDelay}
	allowed, rule := rules.match(c.Agent, uri)
	switch {
	case allowed:
		return res, nil
	case rules.unreachable != "":
		msg := fmt.Sprintf("%v: %s %s: %s", ErrDisallowed, req.Method, u.Redacted(), rules.unreachable)
		return res, &UnreachableError{msg: msg, RetryAt: rules.retryAt, Host: host}
	}
	msg := fmt.Sprintf("%v: %s %s (%s)", ErrDisallowed, req.Method, u.Redacted(), rule)
	return res, &DisallowedError{msg: msg, Host: host, Rule: rule}
}

// rules returns the robots.txt rules of req's host, whose robotsKey is
// key, waiting for a fetch when they are not known or have expired. A
// request that gives up waiting leaves the fetch to the others.
func (c *Cache) rules(ctx context.Context, key string, req *http.Request) (*robotsRules, error) {
	now := c.Now()
	c.mu.Lock()
	var e *robotsEntry
	if found := c.hosts.Get(key); found != nil {
		e = found.Value
	} else {
		e = &robotsEntry{size: robotsEntrySize}
		c.hosts.Add(key).Value = e
		c.used += e.size
	}
	if e.rules != nil && now.Before(e.expires) {
		rules := e.rules
		c.mu.Unlock()
		return rules, nil
	}
	f := e.fetch
	joined := f != nil
	if f == nil {
		target := req.URL.Scheme + "://" + req.URL.Host + "/robots.txt"
		f = &robotsFetch{done: make(chan struct{}), ctx: context.Background()}
		var done func(error)
		if c.Fetching != nil {
			var fetchCtx context.Context
			fetchCtx, done = c.Fetching(ctx, target)
			f.ctx = context.WithoutCancel(fetchCtx)
		}
		e.fetch = f
		userAgent := c.UserAgent
		if userAgent == "" {
			userAgent = req.Header.Get("User-Agent")
		}
		go c.run(f, e, key, target, userAgent, done)
	}
	c.trimLocked()
	c.mu.Unlock()
	if joined && c.Joined != nil {
		c.Joined(ctx, f.ctx)
	}

	select {
	case <-f.done:
		if f.err != nil {
			return nil, fmt.Errorf("polite: robots.txt of %s: %w", key, f.err)
		}
		return f.rules, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// run fetches target for e, cached under key, hands the result to f's
// waiters and, if done is not nil, tells it how the fetch ended.
func (c *Cache) run(f *robotsFetch, e *robotsEntry, key, target, userAgent string, done func(error)) {
	rules, err := c.fetch(f.ctx, target, userAgent)
	if done != nil {
		switch {
		case err != nil:
			done(err)
		case rules.unreachable != "":
			done(errors.New(rules.unreachable))
		default:
			done(nil)
		}
	}
	now := c.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if found := c.hosts.Peek(key); found != nil && found.Value == e { // not forgotten meanwhile
		e.fetch = nil
		if err == nil {
			switch {
			case rules.unreachable == "":
				e.rules, e.expires = rules, now.Add(c.ttl)
			case e.rules != nil && e.rules.unreachable == "":
				// RFC 9309: an earlier copy may stand while the file is unreachable.
				rules, e.expires = e.rules, now.Add(robotsRetry)
			default:
				e.rules, e.expires = rules, now.Add(robotsRetry)
			}
			size := robotsEntrySize + e.rules.size
			c.used += size - e.size
			e.size = size
			c.trimLocked()
		}
	}
	f.rules, f.err = rules, err
	close(f.done)
}

// fetch gets and reads one robots.txt through the Transport's pacing
// step, so that the fetch is paced, counted and observed like any
// request to its domain. It is cancelled by nothing but its own time
// limit: ctx may carry values (a trace) but is never cancelled. An error is
// returned only when the fetch says nothing about the file, as the pacing
// refused to send it; a server or network error, or the time limit, makes
// the file unreachable.
func (c *Cache) fetch(ctx context.Context, target, userAgent string) (*robotsRules, error) {
	s := &robotsSender{base: c.Base, now: c.Now, left: c.timeout}
	client := &http.Client{
		Transport: asking{s, c.Pacer(s)},
		CheckRedirect: func(_ *http.Request, via []*http.Request) error {
			if len(via) > maxRobotsRedirects {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	if userAgent != "" {
		req.Header.Set("User-Agent", userAgent)
	}
	resp, err := client.Do(req)
	if err != nil {
		switch {
		case s.refused():
			return nil, err
		case s.timedOut():
			return c.unreachable("robots.txt not fetched within %v; retried after %v", c.timeout, robotsRetry), nil
		}
		return c.unreachable("robots.txt unreachable (%v); retried after %v", err, robotsRetry), nil
	}
	defer resp.Body.Close()
	switch code := resp.StatusCode; {
	case code >= 200 && code <= 299:
		// One octet more than Parse reads, so that it can tell a cut line.
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxRobotsSize+1))
		switch {
		case err != nil && s.timedOut():
			return c.unreachable("robots.txt not read within %v; retried after %v", c.timeout, robotsRetry), nil
		case err != nil:
			return c.unreachable("robots.txt unreadable (%v); retried after %v", err, robotsRetry), nil
		}
		file := robots.Parse(body)
		delay, _ := file.CrawlDelay(c.Agent)
		return &robotsRules{file: file, crawlDelay: min(delay, c.MaxCrawlDelay), size: 4 * int64(min(len(body), maxRobotsSize))}, nil
	case code >= 300 && code <= 499 && code != http.StatusTooManyRequests:
		// 3xx after too many redirects, 4xx: there is no robots.txt, so no rules.
		return &robotsRules{}, nil
	default:
		// 5xx, and 429: the server asking to slow down, not the file's
		// absence, which Google too treats as a server error.
		return c.unreachable("robots.txt answered %d %s; retried after %v", code, http.StatusText(code), robotsRetry), nil
	}
}

// unreachable returns the rules of a file that could not be fetched, for
// the reason format and args say: nothing allowed until robotsRetry.
func (c *Cache) unreachable(format string, args ...any) *robotsRules {
	return &robotsRules{unreachable: fmt.Sprintf(format, args...), retryAt: c.Now().Add(robotsRetry)}
}

// robotsSender is the base transport of one robots.txt fetch: it gives the
// fetch's requests (the file's, and those of its redirects) left to run in
// all, from each send to the close of its response's body, so that the
// waits for turns between them do not count. It is safe for concurrent
// use.
type robotsSender struct {
	base http.RoundTripper
	now  func() time.Time

	mu          sync.Mutex
	left        time.Duration
	ctx         context.Context // the last request's
	asked, sent int             // the requests handed to the pacing, and those it sent
}

func (s *robotsSender) RoundTrip(req *http.Request) (*http.Response, error) {
	start := s.now()
	s.mu.Lock()
	ctx, cancel := context.WithTimeout(req.Context(), s.left)
	s.ctx = ctx
	s.sent++
	s.mu.Unlock()
	end := func() {
		s.mu.Lock()
		s.left -= s.now().Sub(start)
		s.mu.Unlock()
		cancel()
	}
	resp, err := s.base.RoundTrip(req.WithContext(ctx))
	if err != nil || resp == nil || resp.Body == nil || resp.Body == http.NoBody {
		end()
		return resp, err
	}
	resp.Body = &robotsBody{ReadCloser: resp.Body, end: end}
	return resp, nil
}

// refused reports whether the pacing refused to send the fetch's last
// request (the file's, or a redirect's).
func (s *robotsSender) refused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked > s.sent
}

// asking is the pacing of a robots.txt fetch: it counts the requests it
// is handed in its sender.
type asking struct {
	s     *robotsSender
	paced http.RoundTripper
}

func (a asking) RoundTrip(req *http.Request) (*http.Response, error) {
	a.s.mu.Lock()
	a.s.asked++
	a.s.mu.Unlock()
	return a.paced.RoundTrip(req)
}

// timedOut reports whether the fetch ran out of time.
func (s *robotsSender) timedOut() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ctx != nil && errors.Is(s.ctx.Err(), context.DeadlineExceeded)
}

// robotsBody ends its request's time when it is closed, once.
type robotsBody struct {
	io.ReadCloser
	once sync.Once
	end  func()
}

func (b *robotsBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.end)
	return err
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

// trimLocked keeps the cache within its budget: past it, it forgets the
// least recently used hosts, but for those with a fetch in flight, which
// forgetting would only make fetch again.
func (c *Cache) trimLocked() {
	for look := c.hosts.Len(); c.used > c.budget && look > 0; look-- {
		c.hosts.Trim(c.hosts.Len()-1, 1, func(e *lru.Entry[string, *robotsEntry]) bool {
			if e.Value.fetch != nil {
				return false
			}
			c.used -= e.Value.size
			return true
		})
	}
}
