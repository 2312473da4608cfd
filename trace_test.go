package polite_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/limiter"
)

// events records what a Trace is told, one line per hook call.
type events struct {
	mu    sync.Mutex
	lines []string
}

func (e *events) add(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lines = append(e.lines, fmt.Sprintf(format, args...))
}

func (e *events) trace() *polite.Trace {
	return &polite.Trace{
		TurnAsked: func(_ context.Context, domain string) { e.add("asked %s", domain) },
		Waited: func(_ context.Context, domain, scope string, reason limiter.Reason, wait time.Duration) {
			e.add("waited %s %s %s %v", domain, scope, reason, wait)
		},
		PauseObserved: func(_ context.Context, domain string, reason limiter.Reason, pause time.Duration) {
			e.add("paused %s %s %v", domain, reason, pause)
		},
		Refused: func(_ context.Context, domain string, err error) {
			e.add("refused %s disallowed=%v", domain, errors.Is(err, polite.ErrDisallowed))
		},
		Sent: func(_ context.Context, domain string, degraded bool) { e.add("sent %s degraded=%v", domain, degraded) },
		Answered: func(_ context.Context, domain string, status int, err error) {
			e.add("answered %s %d %v", domain, status, err)
		},
		RobotsFetch: func(ctx context.Context, url string) (context.Context, func(error)) {
			e.add("robots %s", url)
			return ctx, func(err error) { e.add("robots done %v", err) }
		},
	}
}

// TestTraceTellsEachStep: a Trace hears, in order, the robots.txt fetch,
// each turn asked, the wait (its scope, rule and length), the send, the
// answer or the base's error, the pause a 429 asks for and the refusal
// robots.txt makes; a second Trace hears the same.
func TestTraceTellsEachStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &site{robots: robotsFile(200, "User-agent: *\nDisallow: /private\n")}
		busy := baseFunc(func(req *http.Request) (*http.Response, error) {
			if req.URL.Path == "/busy" {
				resp := answer(req, http.StatusTooManyRequests)
				resp.Header.Set("Retry-After", "3")
				return resp, nil
			}
			if req.URL.Path == "/down" {
				return nil, errors.New("no route to the server")
			}
			return s.RoundTrip(req)
		})
		var first, second events
		tr := newTransport(t, busy, polite.WithDefault(everySecond), polite.WithRobots("testbot"),
			polite.WithTrace(first.trace()), polite.WithTrace(nil), polite.WithTrace(second.trace()))
		require.NoError(t, roundTrip(t, tr, context.Background(), "http://example.com/busy"))
		require.Error(t, roundTrip(t, tr, context.Background(), "http://example.com/down"))
		require.ErrorIs(t, roundTrip(t, tr, context.Background(), "http://example.com/private"), polite.ErrDisallowed)

		want := []string{
			"robots http://example.com/robots.txt",
			"asked example.com",
			"sent example.com degraded=false",
			"answered example.com 200 <nil>",
			"robots done <nil>",
			"asked example.com",
			"waited example.com domain rate 1s",
			"sent example.com degraded=false",
			"answered example.com 429 <nil>",
			"paused example.com retry-after 3s",
			"asked example.com",
			"waited example.com domain retry-after 3s",
			"sent example.com degraded=false",
			"answered example.com 0 no route to the server",
			"refused example.com disallowed=true",
		}
		assert.Equal(t, want, first.lines)
		assert.Equal(t, want, second.lines)
	})
}

// TestLogRobotsRefusals: each request robots.txt refuses is logged at
// Debug with its domain, host and rule, never its query; the first of a
// host by a rule at Info too.
func TestLogRobotsRefusals(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := &site{robots: robotsFile(200, "User-agent: *\nDisallow: /private\nDisallow: /tmp\n")}
	tr := newTransport(t, s, polite.WithDefault(fastLimit), polite.WithRobots("testbot"), polite.WithLogger(logger))
	for _, path := range []string{"/private?token=secret", "/private/2?token=secret", "/tmp/x?token=secret", "/private"} {
		require.ErrorIs(t, roundTrip(t, tr, context.Background(), "http://www.example.com"+path), polite.ErrDisallowed)
	}

	type line struct {
		Level, Msg, Domain, Host, Rule string
	}
	var refusals []line
	for l := range strings.Lines(buf.String()) {
		assert.NotContains(t, l, "secret", "never the query")
		var got line
		require.NoError(t, json.Unmarshal([]byte(l), &got))
		if got.Msg == "polite: robots.txt refused a request" {
			refusals = append(refusals, got)
		}
	}
	host := "http://www.example.com:80"
	assert.Equal(t, []line{
		{"INFO", "polite: robots.txt refused a request", "example.com", host, "Disallow: /private"},
		{"DEBUG", "polite: robots.txt refused a request", "example.com", host, "Disallow: /private"},
		{"INFO", "polite: robots.txt refused a request", "example.com", host, "Disallow: /tmp"},
		{"DEBUG", "polite: robots.txt refused a request", "example.com", host, "Disallow: /private"},
	}, refusals)
}

// namedKey keys a value a test puts in a context.
type namedKey string

// TestRobotsFetchContext: a robots.txt fetch is sent with the context
// RobotsFetch made from the request's, without its cancellation (the
// request is cancelled while the file is fetched), and with none of the
// request's values without a Trace.
func TestRobotsFetchContext(t *testing.T) {
	for _, withTrace := range []bool{false, true} {
		t.Run(fmt.Sprint("trace ", withTrace), func(t *testing.T) {
			seen := make(chan string, 1)
			ctx, cancel := context.WithCancel(context.WithValue(context.Background(), namedKey("request"), "request's"))
			defer cancel()
			base := baseFunc(func(req *http.Request) (*http.Response, error) {
				if req.URL.Path == "/robots.txt" {
					cancel() // the fetch's context must outlive the request's
					select {
					case seen <- fmt.Sprint(req.Context().Value(namedKey("request")), " ", req.Context().Value(namedKey("fetch")), " ", req.Context().Err()):
					default: // a second fetch: the first one's context is the one checked
					}
				}
				return robotsFile(200, "")(req)
			})
			opts := []polite.Option{polite.WithDefault(fastLimit), polite.WithRobots("testbot")}
			if withTrace {
				opts = append(opts, polite.WithTrace(&polite.Trace{
					RobotsFetch: func(ctx context.Context, _ string) (context.Context, func(error)) {
						return context.WithValue(ctx, namedKey("fetch"), "fetch's"), nil
					},
				}))
			}
			tr := newTransport(t, base, opts...)
			_ = roundTrip(t, tr, ctx, "http://example.com/page") // cancelled while it waits for the file, or not
			want := "<nil> <nil> <nil>"
			if withTrace {
				want = "request's fetch's <nil>"
			}
			assert.Equal(t, want, <-seen) // the fetch may end after the cancelled request
		})
	}
}

// TestLogRefusal: a request not sent for another reason than robots.txt
// is logged at Debug with its domain and why.
func TestLogRefusal(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var calls atomic.Int64
	tr := newTransport(t, countingBase(&calls), polite.WithDefault(everySecond), polite.WithMaxWait(time.Millisecond), polite.WithLogger(logger))
	require.NoError(t, roundTrip(t, tr, context.Background(), "http://example.com/1"))
	require.ErrorIs(t, roundTrip(t, tr, context.Background(), "http://example.com/2?token=secret"), limiter.ErrWaitTooLong)
	assert.Contains(t, buf.String(), `"msg":"polite: request not sent","domain":"example.com","why":"wait too long"`)
	assert.NotContains(t, buf.String(), "secret")
}
