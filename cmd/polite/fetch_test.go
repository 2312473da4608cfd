package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// site is a test server that answers each path with its own status and
// records the requests it gets.
type site struct {
	*httptest.Server
	statuses   map[string]int // by path; 200 when absent
	robots     string         // the body of /robots.txt
	delay      time.Duration  // before each answer
	retryAfter string         // the Retry-After header of answers other than 200

	mu       sync.Mutex
	paths    []string
	agents   []string
	arrivals []time.Time
}

func newSite(t *testing.T, statuses map[string]int) *site {
	return startSite(t, &site{statuses: statuses})
}

// startSite starts s, whose statuses and robots are set.
func startSite(t *testing.T, s *site) *site {
	s.Server = httptest.NewServer(s.handler())
	t.Cleanup(s.Close)
	return s
}

// handler answers as s says and records the requests.
func (s *site) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.RequestURI())
		s.agents = append(s.agents, r.UserAgent())
		s.arrivals = append(s.arrivals, time.Now())
		s.mu.Unlock()
		time.Sleep(s.delay)
		if r.URL.Path == "/robots.txt" && s.robots != "" {
			fmt.Fprint(w, s.robots)
			return
		}
		if status, ok := s.statuses[r.URL.Path]; ok {
			if s.retryAfter != "" {
				w.Header().Set("Retry-After", s.retryAfter)
			}
			w.WriteHeader(status)
		}
		fmt.Fprintf(w, "body of %s", r.URL.RequestURI())
	})
}

func (s *site) arrivalTimes() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.arrivals...)
}

func (s *site) userAgents() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.agents...)
}

func (s *site) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

// snapshotJSON is the part of stats.Snapshot's JSON the tests read.
type snapshotJSON struct {
	Domain          string           `json:"domain"`
	TotalRequests   int64            `json:"total_requests"`
	DelayedRequests int64            `json:"delayed_requests"`
	TotalWaitMS     *float64         `json:"total_wait_time_ms"`
	AverageWaitMS   *float64         `json:"average_wait_time_ms"`
	LastRequestTime time.Time        `json:"last_request_time"`
	DelayRate       *float64         `json:"delay_rate"`
	Responses       map[string]int64 `json:"responses"`
}

func parseStats(t *testing.T, stdout string) map[string]snapshotJSON {
	t.Helper()
	var out map[string]snapshotJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &out), "stdout: %s", stdout)
	return out
}

func TestFetchArguments(t *testing.T) {
	s := newSite(t, map[string]int{"/missing": http.StatusNotFound})
	o := runPolite(t, "", "fetch", "-rate", "100", "-burst", "10", s.URL+"/a", s.URL+"/missing", "-concurrency", "2", s.URL+"/b")
	require.Equal(t, exitOK, o.code, "a 404 is a response; stderr: %s", o.stderr)
	assert.ElementsMatch(t, []string{"/a", "/missing", "/b"}, s.requests())
	for _, agent := range s.userAgents() {
		assert.Equal(t, defaultUserAgent, agent)
	}
	// Not a terminal: one plain line per URL, then the summary.
	progress := lines(o.stderr)
	require.Len(t, progress, 4, "stderr: %s", o.stderr)
	assert.Contains(t, o.stderr, "404 "+s.URL+"/missing")
	assert.Regexp(t, `^\[\d/3 \d+\.\d{3}s\] (200|404) http://`, progress[0], "each line says when, since the start")
	assert.Contains(t, progress[3], "3 fetched, 0 failed")
	// The table: a header and one row for the server's domain.
	table := lines(o.stdout)
	require.Len(t, table, 3, "stdout: %s", o.stdout)
	assert.Equal(t, queuedLegend, table[2], "the table says what QUEUED sums")
	assert.Equal(t, []string{"DOMAIN", "REQUESTS", "RATE", "QUEUED", "WAITED", "PAUSED", "RETRIES", "ROBOTS", "ERRORS", "RESPONSES"}, strings.Fields(table[0]))
	row := strings.Fields(table[1])
	assert.Equal(t, "127.0.0.1", row[0])
	assert.Equal(t, "3", row[1])
	assert.Equal(t, []string{"2xx:2", "4xx:1"}, row[len(row)-2:])
}

func TestFetchStdinJSON(t *testing.T) {
	s := newSite(t, nil)
	stdin := "# a list of URLs\n\n" + s.URL + "/one\n   \n  " + s.URL + "/two  \r\n# done\n" + s.URL + "/three"
	o := runPolite(t, stdin, "fetch", "-json", "-rate", "100", "-burst", "10")
	require.Equal(t, exitOK, o.code, "stderr: %s", o.stderr)
	assert.ElementsMatch(t, []string{"/one", "/two", "/three"}, s.requests())
	all := parseStats(t, o.stdout)
	require.Len(t, all, 1)
	got, ok := all["127.0.0.1"]
	require.True(t, ok, "stdout: %s", o.stdout)
	assert.Equal(t, "127.0.0.1", got.Domain)
	assert.Equal(t, int64(3), got.TotalRequests)
	assert.Equal(t, map[string]int64{"2xx": 3}, got.Responses)
	assert.NotNil(t, got.TotalWaitMS, "total_wait_time_ms")
	assert.NotNil(t, got.AverageWaitMS, "average_wait_time_ms")
	assert.NotNil(t, got.DelayRate, "delay_rate")
	assert.WithinDuration(t, time.Now(), got.LastRequestTime, time.Minute)
}

// TestFetchStdinByteOrderMark checks that a list saved with a UTF-8
// byte-order mark, as some Windows editors do, is read whole.
func TestFetchStdinByteOrderMark(t *testing.T) {
	s := newSite(t, nil)
	o := runPolite(t, "\ufeff"+s.URL+"/one\r\n"+s.URL+"/two\r\n", "fetch", "-rate", "100", "-burst", "10")
	require.Equal(t, exitOK, o.code, "stderr: %s", o.stderr)
	assert.ElementsMatch(t, []string{"/one", "/two"}, s.requests())
	assert.NotContains(t, o.stderr, "bad URL")
}

// TestFetchConfigEndlessIsQuick checks that -config /dev/zero fails at
// once, without reading more than the limit.
func TestFetchConfigEndlessIsQuick(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip(err)
	}
	o := runPolite(t, "", "fetch", "-config", "/dev/zero", "http://a.test/")
	assertOneLineError(t, o, "/dev/zero: larger than 1 MiB")
	assert.Less(t, o.took, 20*time.Second)
}

// TestFetchPaces checks that the command really paces: at 5 requests/s
// with no burst, 6 requests to one domain take at least a second.
func TestFetchPaces(t *testing.T) {
	s := newSite(t, nil)
	var urls []string
	for i := range 6 {
		urls = append(urls, fmt.Sprintf("%s/%d", s.URL, i))
	}
	o := runPolite(t, "", append([]string{"fetch", "-json", "-rate", "5", "-burst", "1", "-concurrency", "6"}, urls...)...)
	require.Equal(t, exitOK, o.code, "stderr: %s", o.stderr)
	assert.GreaterOrEqual(t, o.took, 900*time.Millisecond)
	got := parseStats(t, o.stdout)["127.0.0.1"]
	assert.Equal(t, int64(6), got.TotalRequests)
	assert.LessOrEqual(t, got.DelayedRequests, int64(1), "workers wait for turns in the frontier, not in RoundTrip")
}

// TestFetchConfig checks that a config file's domain entry applies and
// that -rate only replaces the default.
func TestFetchConfig(t *testing.T) {
	s := newSite(t, nil)
	cfg := filepath.Join(t.TempDir(), "polite.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{
		"version": "1.0",
		"default_config": {"requests_per_second": 100, "burst_capacity": 10},
		"domains": {"127.0.0.1": {"requests_per_second": 4, "burst_capacity": 1}}
	}`), 0o644))
	o := runPolite(t, "", "fetch", "-config", cfg, "-rate", "1000", "-json", s.URL+"/1", s.URL+"/2", s.URL+"/3")
	require.Equal(t, exitOK, o.code, "stderr: %s", o.stderr)
	assert.GreaterOrEqual(t, o.took, 450*time.Millisecond, "two gaps of 250ms")
	got := parseStats(t, o.stdout)["127.0.0.1"]
	assert.Equal(t, int64(3), got.TotalRequests)
}

func TestFetchFailures(t *testing.T) {
	s := newSite(t, map[string]int{"/busy": http.StatusServiceUnavailable})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + ln.Addr().String() + "/"
	ln.Close()

	for _, c := range []struct {
		name string
		args []string
		want []string // in stderr, as regular expressions
	}{
		{"bad URL among good", []string{s.URL + "/ok", "http://exa mple.com/"}, []string{`bad URL "http://exa mple\.com/"`, "1 fetched, 1 failed"}},
		{"still asked to come back", []string{"-retries", "1", s.URL + "/busy"}, []string{
			"RETRY " + regexp.QuoteMeta(s.URL+"/busy") + ": 503; attempt 2 in",
			"FAIL 503 " + regexp.QuoteMeta(s.URL+"/busy") + `: still asked to come back \(Service Unavailable\) at attempt 2 of 2`,
			"0 fetched, 1 failed",
		}},
		{"no scheme", []string{"example.com/x"}, []string{`bad URL "example\.com/x": no scheme`}},
		{"other scheme", []string{"ftp://example.com/x"}, []string{`scheme "ftp" is not http or https`}},
		{"no host", []string{"http:///x"}, []string{`bad URL "http:///x": no host`}},
		{"two URLs in one argument", []string{s.URL + "/a http://alice:PW@a.test/b"}, []string{`bad URL "http://127\.0\.0\.1:\d+/a http://alice:xxxxx@a\.test/b": a space inside`}},
		{"connection refused", []string{closed}, []string{"RETRY " + regexp.QuoteMeta(closed) + ".*attempt 4", "FAIL " + regexp.QuoteMeta(closed), "connection refused"}},
		{"timeout", []string{"-timeout", "300ms", "-retries", "1", slow.URL}, []string{"RETRY " + regexp.QuoteMeta(slow.URL), "FAIL " + regexp.QuoteMeta(slow.URL), `Timeout|deadline exceeded`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := runPolite(t, "", append([]string{"fetch", "-rate", "100"}, c.args...)...)
			assert.Equal(t, exitFailed, o.code, "stderr: %s", o.stderr)
			for _, want := range c.want {
				assert.Regexp(t, want, o.stderr)
			}
			assert.NotContains(t, o.stderr, "panic")
			assert.NotContains(t, o.stderr, "goroutine")
		})
	}
}

func TestFetchBadUsage(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		return path
	}
	badRate := write("bad-rate.json", `{"domains": {"example.com": {"requests_per_second": -1, "burst_capacity": 1}}}`)
	unknown := write("unknown.json", `{"default_config": {"requests_per_second": 1, "burst_capacity": 1, "speed": 3}}`)
	notJSON := write("not.json", `{"default_config": `)
	missing := filepath.Join(dir, "missing.json")
	file := write("file", "x")
	domainTwice := write("domain-twice.json", `{"domains": {"a.com": {"min_delay": "1s"}, "a.com": {"min_delay": "2s"}}}`)
	defaultTwice := write("default-twice.json", `{"default_config": {"min_delay": "1s"}, "default_config": {"min_delay": "2s"}}`)
	fieldTwice := write("field-twice.json", `{"domains": {"a.com": {"min_delay": "1s", "min_delay": "2s"}}}`)
	twoSpellings := write("two-spellings.json", `{"domains": {"Example.com": {"min_delay": "1s"}, "example.com": {"min_delay": "2s"}}}`)
	tooLarge := write("large.json", "{"+strings.Repeat(" ", 1<<20)+"}")

	for _, c := range []struct {
		name  string
		args  []string
		stdin string
		want  string
	}{
		{"unknown flag", []string{"-nope", "http://a.test/"}, "", "flag provided but not defined: -nope"},
		{"rate not a number", []string{"-rate", "fast", "http://a.test/"}, "", `invalid value "fast" for flag -rate`},
		{"rate zero", []string{"-rate", "0", "http://a.test/"}, "", "-rate: must be a positive number"},
		{"rate negative", []string{"-rate", "-2", "http://a.test/"}, "", "-rate: must be a positive number"},
		{"rate NaN", []string{"-rate", "NaN", "http://a.test/"}, "", "-rate: must be a positive number"},
		{"rate Inf", []string{"-rate", "+Inf", "http://a.test/"}, "", "-rate: must be a positive number"},
		{"burst zero", []string{"-burst", "0", "http://a.test/"}, "", "-burst: must be at least 1"},
		{"concurrency zero", []string{"-concurrency", "0", "http://a.test/"}, "", "-concurrency: must be at least 1"},
		{"negative timeout", []string{"-timeout", "-1s", "http://a.test/"}, "", "-timeout: must not be negative"},
		{"flag without value", []string{"http://a.test/", "-config"}, "", "flag needs an argument: -config"},
		{"no URLs", nil, "\n# nothing\n", "no URLs"},
		{"missing config", []string{"-config", missing, "http://a.test/"}, "", missing},
		{"config bad field", []string{"-config", badRate, "http://a.test/"}, "", `domain "example.com": requests_per_second:`},
		{"config unknown field", []string{"-config", unknown, "http://a.test/"}, "", `"default_config": speed: unknown field`},
		{"config not JSON", []string{"-config", notJSON, "http://a.test/"}, "", notJSON},
		{"out is a file", []string{"-out", file, "http://a.test/"}, "", "-out:"},
		{"metrics bad address", []string{"-metrics", "nowhere:-1", "http://a.test/"}, "", "-metrics:"},
		{"config too large", []string{"-config", tooLarge, "http://a.test/"}, "", tooLarge + ": larger than 1 MiB"},
		{"config domain twice", []string{"-config", domainTwice, "http://a.test/"}, "", `domain "a.com": domains: duplicate key`},
		{"config default twice", []string{"-config", defaultTwice, "http://a.test/"}, "", "default_config: duplicate key"},
		{"config field twice", []string{"-config", fieldTwice, "http://a.test/"}, "", `domain "a.com": min_delay: duplicate key`},
		{"config one domain in two spellings", []string{"-config", twoSpellings, "http://a.test/"}, "", "names the same domain"},
		{"redis negative pool", []string{"-redis", "redis://h/0?pool_size=-5", "http://a.test/"}, "", `-redis: option pool_size: "-5": must be a whole number from 1 to 10000 (polite fetch -h for help)`},
		{"redis huge pool", []string{"-redis", "redis://h/0?pool_size=99999999999", "http://a.test/"}, "", "-redis: option pool_size:"},
		{"redis huge idle pool", []string{"-redis", "redis://h/0?min_idle_conns=99999999999", "http://a.test/"}, "", "-redis: option min_idle_conns:"},
		{"redis bad duration", []string{"-redis", "redis://h/0?dial_timeout=forever", "http://a.test/"}, "", "-redis: option dial_timeout:"},
		{"redis unknown option", []string{"-redis", "redis://h/0?speed=3", "http://a.test/"}, "", "-redis: option speed: unknown"},
		{"redis bad database", []string{"-redis", "redis://h/-1", "http://a.test/"}, "", `-redis: database "-1"`},
		{"robots CRLF", []string{"-robots", "bot\r\nX-Evil: 1", "http://a.test/"}, "", `-robots: agent "bot\r\nX-Evil: 1" has a line break at byte 3`},
		{"robots LF", []string{"-robots", "bot\n", "http://a.test/"}, "", "-robots: agent"},
		{"robots tab", []string{"-robots", "my\tbot", "http://a.test/"}, "", "has a space"},
		{"robots space", []string{"-robots", "my bot", "http://a.test/"}, "", "has a space at byte 2"},
		{"robots empty", []string{"-robots", "", "http://a.test/"}, "", "-robots: empty agent"},
		{"user agent empty", []string{"-user-agent", "", "http://a.test/"}, "", `-user-agent: "" is not a User-Agent`},
		{"user agent CRLF", []string{"-user-agent", "bot\r\nX-Evil: 1", "http://a.test/"}, "", "-user-agent:"},
		{"contact and user agent", []string{"-user-agent", "bot", "-contact", "https://example.com/", "http://a.test/"}, "", "-contact: not with -user-agent"},
		{"contact not a URL", []string{"-contact", "me", "http://a.test/"}, "", `-contact: "me": want an https://, http:// or mailto: URL`},
		{"contact ftp", []string{"-contact", "ftp://example.com/", "http://a.test/"}, "", "-contact:"},
		{"contact without host", []string{"-contact", "https:///bot", "http://a.test/"}, "", "has no host"},
		{"contact with a space", []string{"-contact", "https://example.com/a b", "http://a.test/"}, "", "at byte 21"},
		{"contact with a parenthesis", []string{"-contact", "https://example.com/a)", "http://a.test/"}, "", "without spaces or parentheses"},
		{"robots escape", []string{"-robots", "bot\x1b[31m", "http://a.test/"}, "", "a control character"},
		{"negative retries", []string{"-retries", "-1", "http://a.test/"}, "", "-retries: must not be negative"},
		{"negative max-errors", []string{"-max-errors", "-1", "http://a.test/"}, "", "-max-errors: must not be negative"},
		{"negative max-wait", []string{"-max-wait", "-1s", "http://a.test/"}, "", "-max-wait: must not be negative"},
		{"zero max-pause", []string{"-max-pause", "0", "http://a.test/"}, "", "-max-pause: must be positive"},
		{"zero max-crawl-delay", []string{"-max-crawl-delay", "0", "http://a.test/"}, "", "-max-crawl-delay: must be positive"},
		{"stdin UTF-16", nil, "\xff\xfeh\x00t\x00t\x00p\x00:\x00/\x00/\x00a\x00\n\x00", "UTF-16"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := runPolite(t, c.stdin, append([]string{"fetch"}, c.args...)...)
			assertOneLineError(t, o, c.want)
		})
	}
}

// TestFetchMetrics scrapes -metrics while a request is in flight.
func TestFetchMetrics(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	defer once.Do(func() { close(release) })
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		fmt.Fprint(w, "done")
	}))
	defer s.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()

	type ended struct {
		o   outcome
		err error
	}
	done := make(chan ended, 1)
	go func() {
		o, err := runBinary("", "fetch", "-metrics", addr, s.URL+"/")
		done <- ended{o, err}
	}()
	var body string
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		body = string(raw)
		return err == nil && strings.Contains(body, `polite_requests_in_flight{domain="127.0.0.1"} 1`)
	}, 20*time.Second, 50*time.Millisecond, "metrics never showed the request in flight")
	assert.Contains(t, body, `polite_requests_total{domain="127.0.0.1"} 1`)
	once.Do(func() { close(release) })
	end := <-done
	require.NoError(t, end.err)
	o := end.o
	assert.Equal(t, exitOK, o.code, "stderr: %s", o.stderr)
	assert.Contains(t, o.stderr, "serving metrics at http://"+addr+"/metrics")
}
