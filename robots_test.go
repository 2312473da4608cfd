package polite_test

import (
	"context"
	"errors"
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
		assert.Equal(t, int64(n+1), st.TotalRequests, "the robots.txt fetch is a request of its domain")
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
			assert.Equal(t, int64(1), st.TotalRequests, "only robots.txt was sent")
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
		require.ErrorIs(t, roundTrip(t, tr, ctx, "http://example.com/page"), polite.ErrDisallowed)
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
		require.ErrorIs(t, roundTrip(t, tr, ctx, "http://example.com/secret"), polite.ErrDisallowed)
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
// with its context, the fetch goes on for the others, and a fetch nobody
// waits for any more is cancelled.
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

		// The only waiter gives up: the fetch is cancelled, and the next
		// request fetches anew.
		release = make(chan struct{})
		ctx, cancel = context.WithCancel(context.Background())
		done.Go(func() { assert.ErrorIs(t, roundTrip(t, tr, ctx, "http://b.example/page"), context.Canceled) })
		synctest.Wait()
		cancel()
		done.Wait()
		synctest.Wait()
		assert.Equal(t, int64(1), cancelled.Load(), "the orphaned fetch was cancelled")
		close(release)
		require.NoError(t, roundTrip(t, tr, context.Background(), "http://b.example/page"))
		assert.Equal(t, int64(3), s.fetches.Load())
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
