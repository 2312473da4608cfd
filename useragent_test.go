package polite_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/limiter"
)

// arrival is one request as a loopback server saw it.
type arrival struct {
	path, userAgent string
	hasUserAgent    bool
	at              time.Time
}

// recorder is a loopback server that records every request it gets,
// robots.txt fetches included, and answers /robots.txt with robots.
type recorder struct {
	*httptest.Server
	mu       sync.Mutex
	arrivals []arrival
}

func newRecorder(t *testing.T, robots string) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, has := req.Header["User-Agent"]
		r.mu.Lock()
		r.arrivals = append(r.arrivals, arrival{req.URL.Path, req.UserAgent(), has, time.Now()})
		r.mu.Unlock()
		if req.URL.Path == "/robots.txt" {
			io.WriteString(w, robots)
		}
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) seen() []arrival {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]arrival(nil), r.arrivals...)
}

const exampleBotUA = "ExampleBot/2.1 (+https://example.com/bot)"

// TestUserAgentAndRobotsEndToEnd is the crawler of the README: with
// WithUserAgent and WithRobots(""), it sends its User-Agent with every
// request and robots.txt fetch, obeys the ExampleBot group, and gets that
// group's Crawl-delay, as a loopback server sees it.
func TestUserAgentAndRobotsEndToEnd(t *testing.T) {
	srv := newRecorder(t, "User-agent: *\nDisallow: /\nCrawl-delay: 5\n\n"+
		"User-agent: ExampleBot\nAllow: /\nDisallow: /private\nCrawl-delay: 0.5\n")
	tr := newTransport(t, srv.Client().Transport, polite.WithDefault(fastLimit),
		polite.WithUserAgent(exampleBotUA), polite.WithRobots(""))

	for _, path := range []string{"/a", "/b", "/c"} {
		require.NoError(t, roundTrip(t, tr, context.Background(), srv.URL+path))
	}
	err := roundTrip(t, tr, context.Background(), srv.URL+"/private/x")
	require.ErrorIs(t, err, polite.ErrDisallowed)

	seen := srv.seen()
	var paths []string
	for _, a := range seen {
		paths = append(paths, a.path)
		assert.Equal(t, exampleBotUA, a.userAgent, a.path)
	}
	assert.Equal(t, []string{"/robots.txt", "/a", "/b", "/c"}, paths, "ExampleBot's group: /private is never sent, the rest is")
	for i := 2; i < len(seen); i++ {
		gap := seen[i].at.Sub(seen[i-1].at)
		assert.GreaterOrEqual(t, gap, 400*time.Millisecond, "%s came %v after %s: ExampleBot's Crawl-delay is 0.5s", seen[i].path, gap, seen[i-1].path)
	}
	st, ok := tr.Stats("127.0.0.1")
	require.True(t, ok)
	assert.Equal(t, limiter.Reason("crawl-delay"), st.PauseReason)
	last := seen[len(seen)-1].at
	assert.Less(t, st.PausedUntil.Sub(last), 2*time.Second, "the next request may go 0.5s after the last, not the 5s of \"*\"")
}

func TestUserAgent(t *testing.T) {
	tests := []struct {
		name   string
		opts   []polite.Option
		header []string // the request's own User-Agent header, if any
		want   string   // what the server sees of the page
		has    bool     // whether the page arrives with a User-Agent header
		robots string   // what the server sees of robots.txt
	}{
		{"none set: the ua", []polite.Option{polite.WithUserAgent(exampleBotUA)}, nil, exampleBotUA, true, exampleBotUA},
		{"the request's own is kept", []polite.Option{polite.WithUserAgent(exampleBotUA)}, []string{"Custom/1.0"}, "Custom/1.0", true, exampleBotUA},
		{"the request's own empty one is kept", []polite.Option{polite.WithUserAgent(exampleBotUA)}, []string{""}, "", false, exampleBotUA},
		{"without WithUserAgent, Go's", nil, nil, "Go-http-client/1.1", true, "Go-http-client/1.1"},
		{"without WithUserAgent, the request's for robots.txt too", nil, []string{"Custom/1.0"}, "Custom/1.0", true, "Custom/1.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRecorder(t, "User-agent: *\nAllow: /\n")
			opts := append([]polite.Option{polite.WithDefault(fastLimit), polite.WithRobots("testbot")}, tt.opts...)
			tr := newTransport(t, srv.Client().Transport, opts...)
			req, err := http.NewRequest(http.MethodGet, srv.URL+"/page", nil)
			require.NoError(t, err)
			if tt.header != nil {
				req.Header["User-Agent"] = tt.header
			}
			before := req.Header.Clone()
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, before, req.Header, "the caller's request is not modified")

			seen := srv.seen()
			require.Len(t, seen, 2)
			assert.Equal(t, arrival{"/robots.txt", tt.robots, true, seen[0].at}, seen[0])
			assert.Equal(t, arrival{"/page", tt.want, tt.has, seen[1].at}, seen[1])
		})
	}
}

// TestRobotsAgent checks which group WithRobots's agent obeys, through a
// loopback server.
func TestRobotsAgent(t *testing.T) {
	const figtree = "User-agent: figtree\nCrawl-delay: 3\nRequest-rate: 9/30\nDisallow: /tmp\n"
	const reddit = "User-agent: 008\nDisallow: /\n\nUser-agent: MJ12bot\nDisallow: /\n\nUser-Agent: *\nDisallow: /*.json\n"
	tests := []struct {
		source, robots string
		opts           []polite.Option
		path           string
		allowed        bool
	}{
		{"a product token with a version", "User-agent: FooBot\nDisallow: /x\n", []polite.Option{polite.WithRobots("FooBot/1.0")}, "/x", false},
		{"CPython DifferentAgentTest: a whole User-Agent", figtree, []polite.Option{polite.WithRobots("FigTree Robot libwww-perl/5.04")}, "/tmp", false},
		{"CPython DifferentAgentTest: a whole User-Agent, allowed", figtree, []polite.Option{polite.WithRobots("FigTree Robot libwww-perl/5.04")}, "/foo.html", true},
		{"issue: reddit's MJ12bot", reddit, []polite.Option{polite.WithRobots("MJ12bot")}, "/r/rust/", false},
		{"issue: reddit's 008", reddit, []polite.Option{polite.WithRobots("008")}, "/r/rust/", false},
		{"reddit: others", reddit, []polite.Option{polite.WithRobots("BobBot")}, "/r/rust/", true},
		{"from WithUserAgent", reddit, []polite.Option{polite.WithUserAgent("MJ12bot/1.7 (+http://mj12bot.com/)"), polite.WithRobots("")}, "/r/rust/", false},
		{"WithRobots over WithUserAgent", reddit, []polite.Option{polite.WithUserAgent("MJ12bot/1.7"), polite.WithRobots("BobBot")}, "/r/rust/", true},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			srv := newRecorder(t, tt.robots)
			tr := newTransport(t, srv.Client().Transport, append([]polite.Option{polite.WithDefault(fastLimit)}, tt.opts...)...)
			err := roundTrip(t, tr, context.Background(), srv.URL+tt.path)
			if tt.allowed {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, polite.ErrDisallowed)
			}
		})
	}
}

func TestUserAgentOptionErrors(t *testing.T) {
	tests := []struct {
		name string
		opts []polite.Option
		want string
	}{
		{"robots without agent nor user agent", []polite.Option{polite.WithRobots("")}, "polite: WithRobots: no agent, and no WithUserAgent"},
		{"robots with a blank agent", []polite.Option{polite.WithRobots(" \t")}, "polite: WithRobots: no agent"},
		{"robots with no product token", []polite.Option{polite.WithRobots("/1.0")}, `polite: WithRobots: no product token in "/1.0"`},
		{"robots with a comment only", []polite.Option{polite.WithRobots("(+https://example.com/bot)")}, "polite: WithRobots: no product token"},
		{"no product token in the user agent", []polite.Option{polite.WithUserAgent("(compatible)"), polite.WithRobots("")}, `polite: WithRobots: no product token in "(compatible)"`},
		{"a user agent with a line break", []polite.Option{polite.WithUserAgent("bot\r\nX-Evil: 1")}, "polite: WithUserAgent: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := polite.NewTransport(nil, tt.opts...)
			require.Error(t, err)
			assert.Nil(t, tr)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
