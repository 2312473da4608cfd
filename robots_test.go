package polite_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
)

// site is an in-memory web site for robots tests: robots answers
// /robots.txt; every other request is answered 200 and recorded.
type site struct {
	robots  func(req *http.Request) (*http.Response, error)
	fetches atomic.Int64

	mu    sync.Mutex
	paths []string
	times []time.Time
}

func robotsFile(status int, body string) func(*http.Request) (*http.Response, error) {
	return func(req *http.Request) (*http.Response, error) {
		resp := answer(req, status)
		resp.Body = io.NopCloser(strings.NewReader(body))
		return resp, nil
	}
}

func (s *site) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Path == "/robots.txt" {
		s.fetches.Add(1)
		return s.robots(req)
	}
	s.mu.Lock()
	s.paths = append(s.paths, req.URL.Path)
	s.times = append(s.times, time.Now())
	s.mu.Unlock()
	return answer(req, http.StatusOK), nil
}

func (s *site) sent() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

// TestRobotsOneFetchForConcurrentFirstRequests holds the robots.txt fetch
// until every first request is waiting for it: they share that one fetch.
func TestRobotsOneFetchForConcurrentFirstRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		s := &site{robots: func(req *http.Request) (*http.Response, error) {
			<-release
			return robotsFile(200, "User-agent: *\nDisallow: /private\n")(req)
		}}
		tr := newTransport(t, s, polite.WithDefault(fastLimit), polite.WithRobots("testbot"))

		const n = 50
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() { assert.NoError(t, roundTrip(t, tr, context.Background(), "http://example.com/page")) })
		}
		synctest.Wait() // every request is blocked: on the fetch, or waiting for it
		assert.Equal(t, int64(1), s.fetches.Load(), "one fetch of robots.txt for %d concurrent first requests", n)
		close(release)
		wg.Wait()
		assert.Equal(t, int64(1), s.fetches.Load())
		assert.Len(t, s.sent(), n)
		st, _ := tr.Stats("example.com")
		assert.Equal(t, int64(n), st.TotalRequests, "the robots.txt fetch is counted apart")
		assert.Equal(t, int64(1), st.RobotsRequests)
		assert.Equal(t, int64(n), st.Responses[2], "its response too")
	})
}

func TestRobotsDisallowedRequestIsNeverSent(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path)
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nDisallow: /private\nAllow: /private/ok\n\nUser-agent: strictbot\nDisallow: /\n")
		}
	}))
	defer srv.Close()
	tests := []struct {
		agent, path string
		allowed     bool
	}{
		{"testbot", "/public", true},
		{"testbot", "/private/x", false},
		{"testbot", "/private/ok", true},
		{"testbot", "/robots.txt", true},
		{"StrictBot", "/public", false},
	}
	for _, tt := range tests {
		t.Run(tt.agent+tt.path, func(t *testing.T) {
			mu.Lock()
			seen = nil
			mu.Unlock()
			tr := newTransport(t, srv.Client().Transport, polite.WithDefault(fastLimit), polite.WithRobots(tt.agent))
			body := &closeCounter{Reader: strings.NewReader("payload")}
			req, err := http.NewRequest(http.MethodPost, srv.URL+tt.path, body)
			require.NoError(t, err)
			resp, err := tr.RoundTrip(req)
			mu.Lock()
			defer mu.Unlock()
			if tt.allowed {
				require.NoError(t, err)
				resp.Body.Close()
				assert.Contains(t, seen, tt.path)
				return
			}
			require.Error(t, err)
			assert.Nil(t, resp)
			assert.ErrorIs(t, err, polite.ErrDisallowed)
			assert.Contains(t, err.Error(), tt.path)
			assert.NotContains(t, seen, tt.path, "a disallowed request never reaches the server")
			assert.Equal(t, int32(1), body.closes.Load(), "its body is closed once")
			st, ok := tr.Stats("127.0.0.1")
			require.True(t, ok)
			assert.Equal(t, int64(1), st.DisallowedRequests)
			assert.Equal(t, int64(0), st.TotalRequests, "only robots.txt was sent")
			assert.Equal(t, int64(1), st.RobotsRequests)
		})
	}
}

// TestRobotsMatchesPathsAsRFC9309Encodes them: a rule and a URL that
// spell one path differently (raw UTF-8 or percent-encoded, "~" or "%7E")
// still match.
func TestRobotsMatchesPathsAsRFC9309EncodesThem(t *testing.T) {
	s := &site{robots: robotsFile(200, "User-agent: *\nDisallow: /über\nDisallow: /%7eprivate\nDisallow: /%E3%83%84\n")}
	tr := newTransport(t, s, polite.WithDefault(fastLimit), polite.WithRobots("testbot"))
	tests := []struct {
		url     string
		allowed bool
	}{
		{"http://example.com/über-uns", false},
		{"http://example.com/%C3%BCber-uns", false},
		{"http://example.com/%c3%bcber-uns", false},
		{"http://example.com/~private/x", false},
		{"http://example.com/%7Eprivate/x", false},
		{"http://example.com/ツ", false},
		{"http://example.com/uber-uns", true},
		{"http://example.com/~public", true},
	}
	for _, tt := range tests {
		err := roundTrip(t, tr, context.Background(), tt.url)
		if tt.allowed {
			assert.NoError(t, err, tt.url)
		} else {
			assert.ErrorIs(t, err, polite.ErrDisallowed, tt.url)
		}
	}
	assert.Equal(t, []string{"/uber-uns", "/~public"}, s.sent(), "only the allowed requests were sent")
}

func TestRobotsCrawlDelay(t *testing.T) {
	tests := []struct {
		name  string
		limit config.Limit
		opts  []polite.Option
		gap   time.Duration
	}{
		{"slows a fast domain", fastLimit, nil, 2 * time.Second},
		{"capped", fastLimit, []polite.Option{polite.WithMaxCrawlDelay(500 * time.Millisecond)}, 500 * time.Millisecond},
		{"all but ignored with a nanosecond cap", fastLimit, []polite.Option{polite.WithMaxCrawlDelay(time.Nanosecond)}, time.Nanosecond},
		{"a zero cap is the default", fastLimit, []polite.Option{polite.WithMaxCrawlDelay(0)}, 2 * time.Second},
		{"never faster than configured", config.Limit{MinDelay: 3 * time.Second}, nil, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &site{robots: robotsFile(200, "User-agent: *\nCrawl-delay: 2\n")}
				opts := append([]polite.Option{polite.WithDefault(tt.limit), polite.WithRobots("testbot")}, tt.opts...)
				tr := newTransport(t, s, opts...)
				for range 3 {
					require.NoError(t, roundTrip(t, tr, context.Background(), "http://example.com/page"))
				}
				require.Len(t, s.times, 3)
				assert.Equal(t, tt.gap, s.times[1].Sub(s.times[0]))
				assert.Equal(t, tt.gap, s.times[2].Sub(s.times[1]))
				if tt.gap > tt.limit.MinDelay {
					st, _ := tr.Stats("example.com")
					assert.Equal(t, limiter.Reason("crawl-delay"), st.PauseReason, "the Crawl-delay shows in the stats")
					assert.Equal(t, s.times[2].Add(tt.gap), st.PausedUntil)
					assert.Zero(t, st.PausedTime, "a Crawl-delay is not a pause")
				}
			})
		})
	}
}

// TestRobotsCrawlDelayFollowsTheFileFetchedAnew: once the robots.txt
// expires and is fetched again, its new, shorter Crawl-delay applies.
func TestRobotsCrawlDelayFollowsTheFileFetchedAnew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fetches atomic.Int32
		s := &site{robots: func(req *http.Request) (*http.Response, error) {
			if fetches.Add(1) == 1 {
				return robotsFile(200, "User-agent: *\nCrawl-delay: 2\n")(req)
			}
			return robotsFile(200, "User-agent: *\nCrawl-delay: 1\n")(req)
		}}
		tr := newTransport(t, s, polite.WithDefault(fastLimit), polite.WithRobots("testbot"))
		get := func() { require.NoError(t, roundTrip(t, tr, context.Background(), "http://example.com/page")) }
		get()
		get()
		time.Sleep(25 * time.Hour) // the file expires after 24 hours
		get()
		get()
		require.Len(t, s.times, 4)
		assert.Equal(t, 2*time.Second, s.times[1].Sub(s.times[0]))
		assert.Equal(t, time.Second, s.times[3].Sub(s.times[2]), "the new Crawl-delay")
		assert.Equal(t, int32(2), fetches.Load())
	})
}

func TestRobotsFetchIsPaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &site{robots: robotsFile(200, "User-agent: *\nAllow: /\n")}
		tr := newTransport(t, s, polite.WithDefault(everySecond), polite.WithRobots("testbot"))
		start := time.Now()
		require.NoError(t, roundTrip(t, tr, context.Background(), "http://example.com/page"))
		assert.Equal(t, start.Add(time.Second), s.times[0], "the page waited for its turn after the robots.txt fetch")
	})
}

func TestRobotsStatus(t *testing.T) {
	unreachable := func(req *http.Request) (*http.Response, error) { return nil, errors.New("connection refused") }
	tests := []struct {
		name    string
		robots  func(*http.Request) (*http.Response, error)
		allowed bool
		why     string
	}{
		{"200 with rules", robotsFile(200, "User-agent: *\nDisallow: /page\n"), false, ""},
		{"200 empty", robotsFile(200, ""), true, ""},
		{"404 allows all", robotsFile(404, "User-agent: *\nDisallow: /\n"), true, ""},
		{"403 allows all", robotsFile(403, ""), true, ""},
		{"503 disallows all", robotsFile(503, ""), false, "robots.txt answered 503"},
		{"500 disallows all", robotsFile(500, ""), false, "robots.txt answered 500"},
		{"429 disallows all", robotsFile(429, ""), false, "robots.txt answered 429"},
		{"unreachable disallows all", unreachable, false, "connection refused"},
		{"too many redirects allow all", func(req *http.Request) (*http.Response, error) {
			resp := answer(req, http.StatusFound)
			resp.Header.Set("Location", "/robots.txt")
			return resp, nil
		}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &site{robots: tt.robots}
				tr := newTransport(t, s, polite.WithDefault(fastLimit), polite.WithRobots("testbot"))
				err := roundTrip(t, tr, context.Background(), "http://example.com/page")
				if tt.allowed {
					require.NoError(t, err)
					assert.Equal(t, []string{"/page"}, s.sent())
					return
				}
				require.ErrorIs(t, err, polite.ErrDisallowed)
				assert.Contains(t, err.Error(), tt.why)
				assert.Empty(t, s.sent())
			})
		})
	}
}

// TestRobotsUnreachableIsRetried: a 503 disallows all for RobotsRetry, then
// the file is fetched again.
func TestRobotsUnreachableIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var status atomic.Int64
		status.Store(http.StatusServiceUnavailable)
		s := &site{robots: func(req *http.Request) (*http.Response, error) { return answer(req, int(status.Load())), nil }}
		tr := newTransport(t, s, polite.WithDefault(fastLimit), polite.WithRobots("testbot"))
		ctx := context.Background()
		err := roundTrip(t, tr, ctx, "http://example.com/page")
		require.ErrorIs(t, err, polite.ErrDisallowed)
		require.ErrorIs(t, err, polite.ErrRobotsUnreachable)
		var we *polite.WaitError
		require.ErrorAs(t, err, &we)
		assert.Equal(t, time.Now().Add(time.Minute), we.RetryAt, "it says when the file is fetched again")
		assert.NotContains(t, err.Error(), "polite: robots.txt unreachable", "the message says why, not the sentinel")
		status.Store(http.StatusNotFound)
		time.Sleep(time.Minute - time.Second)
		require.ErrorIs(t, roundTrip(t, tr, ctx, "http://example.com/page"), polite.ErrDisallowed, "still within RobotsRetry")
		assert.Equal(t, int64(1), s.fetches.Load())
		time.Sleep(time.Second)
		require.NoError(t, roundTrip(t, tr, ctx, "http://example.com/page"))
		assert.Equal(t, int64(2), s.fetches.Load())
	})
}

// TestRobotsKeepsAnEarlierCopyWhileUnreachable: when the file expires and
// its host then answers 5xx, the earlier copy stands (RFC 9309).
func TestRobotsKeepsAnEarlierCopyWhileUnreachable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var down atomic.Bool
		s := &site{robots: func(req *http.Request) (*http.Response, error) {
			if down.Load() {
				return answer(req, http.StatusBadGateway), nil
			}
			return robotsFile(200, "User-agent: *\nDisallow: /secret\n")(req)
		}}
		tr := newTransport(t, s, polite.WithDefault(fastLimit), polite.WithRobots("testbot"))
		ctx := context.Background()
		require.NoError(t, roundTrip(t, tr, ctx, "http://example.com/page"))
		down.Store(true)
		time.Sleep(24 * time.Hour)
		require.NoError(t, roundTrip(t, tr, ctx, "http://example.com/page"))
		err := roundTrip(t, tr, ctx, "http://example.com/secret")
		require.ErrorIs(t, err, polite.ErrDisallowed)
		require.NotErrorIs(t, err, polite.ErrRobotsUnreachable, "the earlier copy forbids it")
		assert.Equal(t, int64(2), s.fetches.Load(), "expired, fetched again, the earlier copy kept")
		time.Sleep(time.Minute)
		require.NoError(t, roundTrip(t, tr, ctx, "http://example.com/page"))
		assert.Equal(t, int64(3), s.fetches.Load(), "the unreachable file is retried after a minute")
	})
}

func TestRobotsPerSchemeHostAndPort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &site{robots: robotsFile(200, "User-agent: *\nDisallow: /x\n")}
		tr := newTransport(t, s, polite.WithDefault(fastLimit), polite.WithRobots("testbot"))
		ctx := context.Background()
		for _, u := range []string{
			"http://example.com/a", "http://EXAMPLE.com:80/b", // one host
			"https://example.com/a", "https://example.com:443/b", // another
			"http://example.com:8080/a", "http://www.example.com/a", // two more
		} {
			require.NoError(t, roundTrip(t, tr, ctx, u))
		}
		assert.Equal(t, int64(4), s.fetches.Load())
	})
}

func TestRobotsFollowsRedirects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &site{}
		s.robots = func(req *http.Request) (*http.Response, error) {
			if req.URL.Host == "example.com" {
				resp := answer(req, http.StatusMovedPermanently)
				resp.Header.Set("Location", "https://www.example.com/robots.txt")
				return resp, nil
			}
			return robotsFile(200, "User-agent: *\nDisallow: /x\n")(req)
		}
		tr := newTransport(t, s, polite.WithDefault(fastLimit), polite.WithRobots("testbot"))
		require.ErrorIs(t, roundTrip(t, tr, context.Background(), "http://example.com/x"), polite.ErrDisallowed)
		assert.Equal(t, int64(2), s.fetches.Load(), "the redirect was followed")
	})
}

// TestRobotsWaitIsCancellable: a request waiting for robots.txt gives up
// with its context, and the fetch goes on for the others, even when nobody
// waits for it any more: the next request joins it.
func TestRobotsWaitIsCancellable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var cancelled atomic.Int64
		s := &site{robots: func(req *http.Request) (*http.Response, error) {
			select {
			case <-release:
				return robotsFile(200, "")(req)
			case <-req.Context().Done():
				cancelled.Add(1)
				return nil, req.Context().Err()
			}
		}}
		tr := newTransport(t, s, polite.WithDefault(fastLimit), polite.WithRobots("testbot"))

		// Two wait; one gives up; the other gets its answer.
		ctx, cancel := context.WithCancel(context.Background())
		var done sync.WaitGroup
		done.Go(func() {
			err := roundTrip(t, tr, ctx, "http://a.example/page")
			assert.ErrorIs(t, err, context.Canceled)
			var we *polite.WaitError
			assert.ErrorAs(t, err, &we)
		})
		done.Go(func() { assert.NoError(t, roundTrip(t, tr, context.Background(), "http://a.example/page")) })
		synctest.Wait()
		cancel()
		synctest.Wait()
		close(release)
		done.Wait()
		assert.Equal(t, int64(1), s.fetches.Load())
		assert.Zero(t, cancelled.Load())

		// The only waiter gives up: the fetch goes on, and the next
		// request waits for it rather than fetching anew.
		release = make(chan struct{})
		ctx, cancel = context.WithCancel(context.Background())
		done.Go(func() { assert.ErrorIs(t, roundTrip(t, tr, ctx, "http://b.example/page"), context.Canceled) })
		synctest.Wait()
		cancel()
		done.Wait()
		synctest.Wait()
		assert.Zero(t, cancelled.Load(), "the fetch nobody waits for goes on")
		done.Go(func() { assert.NoError(t, roundTrip(t, tr, context.Background(), "http://b.example/page")) })
		synctest.Wait()
		assert.Equal(t, int64(2), s.fetches.Load(), "the next request joined the fetch")
		close(release)
		done.Wait()
		assert.Equal(t, int64(2), s.fetches.Load())
	})
}

// TestRobotsFetchRefusedByThePace: a robots.txt fetch that polite itself
// refuses (here: longer than WithMaxWait) says nothing about the file; the
// request fails with that refusal, not as disallowed.
func TestRobotsFetchRefusedByThePace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &site{robots: robotsFile(200, "")}
		tr := newTransport(t, s, polite.WithDefault(config.Limit{MinDelay: time.Hour}), polite.WithMaxWait(time.Minute), polite.WithRobots("testbot"))
		ctx := context.Background()
		require.NoError(t, roundTrip(t, tr, ctx, "http://example.com/robots.txt"), "the file itself is always allowed")
		err := roundTrip(t, tr, ctx, "http://example.com/page")
		require.ErrorIs(t, err, limiter.ErrWaitTooLong)
		assert.NotErrorIs(t, err, polite.ErrDisallowed)
	})
}

// TestRobotsRedirectRefusedByThePace: a robots.txt that redirects to a
// domain whose pace refuses the hop says nothing about the file either: the
// request fails with that refusal, and the next one fetches the file anew.
func TestRobotsRedirectRefusedByThePace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &site{}
		s.robots = func(req *http.Request) (*http.Response, error) {
			if req.URL.Host == "example.com" {
				resp := answer(req, http.StatusMovedPermanently)
				resp.Header.Set("Location", "http://slow.org/robots.txt")
				return resp, nil
			}
			return robotsFile(200, "")(req)
		}
		tr := newTransport(t, s, polite.WithDefault(fastLimit), polite.WithDomain("slow.org", config.Limit{MinDelay: time.Hour}),
			polite.WithMaxWait(time.Minute), polite.WithRobots("testbot"))
		ctx := context.Background()
		require.NoError(t, roundTrip(t, tr, ctx, "http://slow.org/robots.txt"), "slow.org's turn is taken for an hour")
		for range 2 {
			err := roundTrip(t, tr, ctx, "http://example.com/page")
			require.ErrorIs(t, err, limiter.ErrWaitTooLong)
			assert.NotErrorIs(t, err, polite.ErrDisallowed)
		}
		assert.Equal(t, int64(3), s.fetches.Load(), "slow.org's, then example.com's twice: nothing was observed of the first")
	})
}

// TestRobotsRulesAsRFC9309Says: files on which the former matcher
// (temoto/robotstxt) went wrong, and lenient parsing, through the
// Transport.
func TestRobotsRulesAsRFC9309Says(t *testing.T) {
	tests := []struct {
		name, body, path string
		allowed          bool
	}{
		{"home page only: the home page", "User-agent: *\nAllow: /$\nDisallow: /\n", "/", true},
		{"home page only: a directory", "User-agent: *\nAllow: /$\nDisallow: /\n", "/private/", false},
		{"a wildcard rule matches from the first octet", "User-agent: *\nDisallow: /\nAllow: /public/*.html\n", "/private/public/a.html", false},
		{"a wildcard rule: its match", "User-agent: *\nDisallow: /\nAllow: /public/*.html\n", "/public/a.html", true},
		{"a group names a whole token", "User-agent: test\nDisallow: /\n", "/page", true},
		{"a group's token, in any case", "User-agent: TestBot\nDisallow: /\n", "/page", false},
		{"a comment ends a rule", "User-agent: *\nDisallow: /page#x\n", "/page", false},
		{"%2A matches a literal *", "User-agent: *\nDisallow: /a%2Ab\n", "/a*b", false},
		{"Allow wins a tie", "User-agent: *\nDisallow: /page\nAllow: /page\n", "/page", true},
		{"a rule is measured by its octets", "User-agent: *\nAllow: /x/page.\nDisallow: /*.html\n", "/x/page.html", true},
		{"an empty last group allows all", "User-agent: *\nDisallow: /\n\nUser-agent: testbot\n", "/page", true},
		{"a rule before any user-agent is ignored", "Disallow: /page\nUser-agent: *\nDisallow: /other\n", "/page", true},
		{"a malformed Crawl-delay is skipped", "User-agent: *\nCrawl-delay: soon\nDisallow: /page\n", "/page", false},
		{"CRLF and comments", "User-agent: * # all\r\nDisallow: /page # no\r\n", "/page", false},
		{"garbage allows all", "\x00\xff<html>not robots</html>", "/page", true},
		{"a final $", "User-agent: *\nDisallow: /*.pdf$\n", "/x.pdf", false},
		{"a final $: a longer path", "User-agent: *\nDisallow: /*.pdf$\n", "/x.pdf?y", true},
		{"the query counts", "User-agent: *\nDisallow: /search?q=\n", "/search?q=go", false},
		{"the query counts: none", "User-agent: *\nDisallow: /search?q=\n", "/search", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &site{robots: robotsFile(200, tt.body)}
				tr := newTransport(t, s, polite.WithDefault(fastLimit), polite.WithRobots("testbot"))
				err := roundTrip(t, tr, context.Background(), "http://example.com"+tt.path)
				if tt.allowed {
					assert.NoError(t, err)
				} else {
					assert.ErrorIs(t, err, polite.ErrDisallowed)
				}
			})
		})
	}
}

// TestRobotsHugeCrawlDelay: a Crawl-delay too large for a time.Duration
// is the cap, never a negative gap.
func TestRobotsHugeCrawlDelay(t *testing.T) {
	tests := []struct {
		value string
		opts  []polite.Option
		gap   time.Duration
	}{
		{"99999999999", nil, 30 * time.Second},
		{"1e300", nil, 30 * time.Second},
		{"9223372036.854775808", nil, 30 * time.Second},
		{"99999999999", []polite.Option{polite.WithMaxCrawlDelay(5 * time.Second)}, 5 * time.Second},
		{"1e300", []polite.Option{polite.WithMaxCrawlDelay(5 * time.Second)}, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s capped at %v", tt.value, tt.gap), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &site{robots: robotsFile(200, "User-agent: *\nCrawl-delay: "+tt.value+"\n")}
				opts := append([]polite.Option{polite.WithDefault(fastLimit), polite.WithRobots("testbot")}, tt.opts...)
				tr := newTransport(t, s, opts...)
				for range 3 {
					require.NoError(t, roundTrip(t, tr, context.Background(), "http://example.com/page"))
				}
				require.Len(t, s.times, 3)
				assert.Equal(t, tt.gap, s.times[1].Sub(s.times[0]))
				assert.Equal(t, tt.gap, s.times[2].Sub(s.times[1]))
			})
		})
	}
}

// TestRobotsDotSegments: a path that RFC 3986 makes the same as a
// disallowed one, through its dot segments, is disallowed too.
func TestRobotsDotSegments(t *testing.T) {
	s := &site{robots: robotsFile(200, "User-agent: *\nDisallow: /private\n")}
	tr := newTransport(t, s, polite.WithDefault(fastLimit), polite.WithRobots("testbot"))
	tests := []struct {
		path    string
		allowed bool
	}{
		{"/public/../private/x", false},
		{"/./private/x", false},
		{"/public/%2e%2e/private/x", false},
		{"/public/%2E%2E/private/x", false},
		{"/a/b/../../private", false},
		{"/public/.%2e/private/x", false},
		{"/private/../public/x", true},
		{"/public/./x", true},
	}
	for _, tt := range tests {
		err := roundTrip(t, tr, context.Background(), "http://example.com"+tt.path)
		if tt.allowed {
			assert.NoError(t, err, tt.path)
		} else {
			assert.ErrorIs(t, err, polite.ErrDisallowed, tt.path)
		}
	}
	assert.Equal(t, []string{"/private/../public/x", "/public/./x"}, s.sent(), "only the allowed requests were sent")
}

// trickle is a response body that yields one octet a second until its
// context ends.
type trickle struct{ ctx context.Context }

func (b trickle) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	select {
	case <-time.After(time.Second):
		p[0] = '#'
		return 1, nil
	case <-b.ctx.Done():
		return 0, b.ctx.Err()
	}
}

func (trickle) Close() error { return nil }

// TestRobotsSlowloris: a robots.txt served slowly is fetched once, for at
// most 10 seconds, whatever its waiters do; then its host is disallowed as
// unreachable for a minute, without a new fetch, and fetched again after.
func TestRobotsSlowloris(t *testing.T) {
	tests := []struct {
		name  string
		slow  func(req *http.Request) (*http.Response, error)
		cause string
	}{
		{"headers never come", func(req *http.Request) (*http.Response, error) {
			<-req.Context().Done()
			return nil, req.Context().Err()
		}, "robots.txt not fetched within 10s"},
		{"the body trickles", func(req *http.Request) (*http.Response, error) {
			resp := answer(req, http.StatusOK)
			resp.Body = trickle{req.Context()}
			return resp, nil
		}, "robots.txt not read within 10s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var fixed atomic.Bool
				s := &site{robots: func(req *http.Request) (*http.Response, error) {
					if fixed.Load() {
						return robotsFile(200, "User-agent: *\nDisallow: /private\n")(req)
					}
					return tt.slow(req)
				}}
				tr := newTransport(t, s, polite.WithDefault(fastLimit), polite.WithRobots("testbot"))
				start := time.Now()

				// Six requests give up after 1.5 s each, one after the other.
				for range 6 {
					ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
					err := roundTrip(t, tr, ctx, "http://example.com/page")
					cancel()
					require.ErrorIs(t, err, context.DeadlineExceeded)
					var we *polite.WaitError
					require.ErrorAs(t, err, &we)
				}
				assert.Equal(t, 9*time.Second, time.Since(start))
				assert.Equal(t, int64(1), s.fetches.Load(), "the six requests shared one fetch")

				// The fetch ends at 10 s; the host is unreachable for a minute.
				time.Sleep(time.Until(start.Add(10*time.Second + time.Millisecond)))
				for _, after := range []time.Duration{0, 59 * time.Second} {
					time.Sleep(time.Until(start.Add(10*time.Second + after)))
					err := roundTrip(t, tr, context.Background(), "http://example.com/page")
					require.ErrorIs(t, err, polite.ErrDisallowed)
					assert.Contains(t, err.Error(), tt.cause)
				}
				assert.Equal(t, int64(1), s.fetches.Load(), "not fetched again within the minute")

				fixed.Store(true)
				time.Sleep(time.Until(start.Add(70*time.Second + time.Millisecond)))
				require.NoError(t, roundTrip(t, tr, context.Background(), "http://example.com/page"))
				require.ErrorIs(t, roundTrip(t, tr, context.Background(), "http://example.com/private"), polite.ErrDisallowed)
				assert.Equal(t, int64(2), s.fetches.Load(), "fetched again after the minute")
				st, _ := tr.Stats("example.com")
				assert.Equal(t, int64(6), st.CanceledRequests, "the six requests that gave up")
			})
		})
	}
}

// sleepCtx sleeps for d, or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestRobotsFetchTimeLimitLeavesOutTheWaits: the fetch's 10 seconds count
// from its send, not from the wait for its turn, nor from the waits of its
// redirects; its redirects share them.
func TestRobotsFetchTimeLimitLeavesOutTheWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &site{}
		s.robots = func(req *http.Request) (*http.Response, error) {
			if err := sleepCtx(req.Context(), 4*time.Second); err != nil {
				return nil, err
			}
			if req.URL.Host == "a.example.com" {
				resp := answer(req, http.StatusMovedPermanently)
				resp.Header.Set("Location", "http://www.example.com/robots.txt")
				return resp, nil
			}
			return robotsFile(200, "User-agent: *\nDisallow: /private\n")(req)
		}
		tr := newTransport(t, s, polite.WithDefault(config.Limit{MinDelay: 30 * time.Second}), polite.WithRobots("testbot"))
		start := time.Now()

		// b.example.com's file waits for its turn behind a.example.com's,
		// then takes 4 s; a.example.com's is a redirect taking 4 s, whose
		// next hop waits 30 s for its turn and takes 4 s more.
		var done sync.WaitGroup
		done.Go(func() {
			require.ErrorIs(t, roundTrip(t, tr, context.Background(), "http://a.example.com/private"), polite.ErrDisallowed)
		})
		synctest.Wait()
		done.Go(func() {
			require.ErrorIs(t, roundTrip(t, tr, context.Background(), "http://b.example.com/private"), polite.ErrDisallowed)
		})
		done.Wait()
		assert.Equal(t, int64(3), s.fetches.Load())
		assert.GreaterOrEqual(t, time.Since(start), 60*time.Second, "the fetches waited for their turns")

		// A redirect chain of 3 hops of 4 s each runs out of its 10 s.
		s.robots = func(req *http.Request) (*http.Response, error) {
			if err := sleepCtx(req.Context(), 4*time.Second); err != nil {
				return nil, err
			}
			resp := answer(req, http.StatusFound)
			resp.Header.Set("Location", "/robots.txt?again")
			return resp, nil
		}
		err := roundTrip(t, tr, context.Background(), "http://c.example.com/page")
		require.ErrorIs(t, err, polite.ErrDisallowed)
		assert.Contains(t, err.Error(), "not fetched within 10s")
	})
}
