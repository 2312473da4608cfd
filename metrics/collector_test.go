package metrics_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/metrics"
	"github.com/polite-go/polite/stats"
)

// statusByHost answers each request with the status its host's first
// label names ("s404.test" answers 404), and 200 otherwise.
type statusByHost struct{}

func (statusByHost) RoundTrip(req *http.Request) (*http.Response, error) {
	status := http.StatusOK
	fmt.Sscanf(req.URL.Hostname(), "s%d.", &status)
	return &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader("ok")), Request: req, Header: http.Header{}}, nil
}

var fast = config.Limit{RequestsPerSecond: 1000, Burst: 1000}

// newCollector returns NewCollector(tr, opts...), failing t if that fails.
func newCollector(t *testing.T, tr *polite.Transport, opts ...metrics.Option) prometheus.Collector {
	t.Helper()
	c, err := metrics.NewCollector(tr, opts...)
	require.NoError(t, err)
	return c
}

func TestNewCollectorRejectsBadOptions(t *testing.T) {
	tr, _ := newTransport(t)
	_, err := metrics.NewCollector(tr, metrics.WithMaxDomains(-1))
	require.EqualError(t, err, "metrics: WithMaxDomains: must not be negative, got -1")
	_, err = metrics.NewCollector(nil)
	require.EqualError(t, err, "metrics: NewCollector: Transport is nil")
}

func newTransport(t *testing.T, opts ...polite.Option) (*polite.Transport, *limiter.Memory) {
	t.Helper()
	mem := limiter.NewMemory()
	tr, err := polite.NewTransport(statusByHost{}, append([]polite.Option{polite.WithDefault(fast), polite.WithLimiter(mem)}, opts...)...)
	require.NoError(t, err)
	return tr, mem
}

// get sends a GET for url through tr and closes the body unless keep.
func get(t *testing.T, tr http.RoundTripper, url string, keep bool) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	if !keep {
		resp.Body.Close()
	}
}

// value finds the value of the gathered metric name with labels, and
// whether it exists.
func value(families []*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue(), true
			case m.Gauge != nil:
				return m.Gauge.GetValue(), true
			}
		}
	}
	return 0, false
}

func gather(t *testing.T, c prometheus.Collector) []*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	families, err := reg.Gather()
	require.NoError(t, err)
	return families
}

// expected lists, for one domain's snapshot, every series the collector
// must report and its value.
func expected(s stats.Snapshot, now time.Time) map[string]float64 {
	paused, reason := 0.0, ""
	if s.PausedUntil.After(now) {
		paused, reason = 1, string(s.PauseReason)
	}
	want := map[string]float64{
		"polite_requests_total":            float64(s.TotalRequests),
		"polite_robots_requests_total":     float64(s.RobotsRequests),
		"polite_requests_delayed_total":    float64(s.DelayedRequests),
		"polite_requests_canceled_total":   float64(s.CanceledRequests),
		"polite_requests_failed_total":     float64(s.FailedRequests),
		"polite_requests_disallowed_total": float64(s.DisallowedRequests),
		"polite_requests_given_up_total":   float64(s.GivenUpRequests),
		"polite_queued_seconds_total":      s.QueuedTime.Seconds(),
		"polite_wait_seconds_total":        s.TotalWaitTime.Seconds(),
		"polite_throttled_responses_total": float64(s.ThrottledResponses),
		"polite_degraded_requests_total":   float64(s.DegradedRequests),
		"polite_paused_seconds_total":      s.PausedTime.Seconds(),
		"polite_requests_in_flight":        float64(s.InFlight),
		"polite_paused/reason=" + reason:   paused,
	}
	for class, n := range s.Responses {
		want["polite_responses_total/"+stats.StatusClass(class)] = float64(n)
	}
	return want
}

func TestCollectorMatchesStats(t *testing.T) {
	tr, mem := newTransport(t, polite.WithDomain("slow.test", config.Limit{RequestsPerSecond: 0.001, Burst: 1}))
	for range 3 {
		get(t, tr, "http://www.a.test/", false)
	}
	get(t, tr, "http://s404.test/", false)
	get(t, tr, "http://s429.test/x", false)
	get(t, tr, "http://s503.test/x", false)
	get(t, tr, "http://s500.test/x", true) // left in flight
	get(t, tr, "http://slow.test/", false)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://slow.test/", nil)
	require.NoError(t, err)
	_, err = tr.RoundTrip(req) // a wait of ~1000s cannot meet the deadline: canceled
	require.ErrorIs(t, err, context.DeadlineExceeded)
	_, err = mem.Observe(context.Background(), limiter.Request{Key: "s429.test"},
		limiter.Observation{Status: http.StatusTooManyRequests, RetryAfter: time.Hour, Sent: time.Now()})
	require.NoError(t, err)

	all := tr.AllStats()
	require.Len(t, all, 6)
	families := gather(t, newCollector(t, tr))
	now := time.Now()

	got, ok := value(families, "polite_domains", nil)
	require.True(t, ok)
	assert.Equal(t, float64(len(all)), got)
	for domain, s := range all {
		t.Run(domain, func(t *testing.T) {
			for name, want := range expected(s, now) {
				labels := map[string]string{"domain": domain}
				if metric, reason, ok := strings.Cut(name, "/reason="); ok {
					name, labels["reason"] = metric, reason
				} else if metric, class, ok := strings.Cut(name, "/"); ok {
					name, labels["class"] = metric, class
				}
				got, ok := value(families, name, labels)
				require.True(t, ok, "%s%v missing", name, labels)
				assert.Equal(t, want, got, "%s%v", name, labels)
			}
		})
	}
	// The cases the transport was driven through are all visible.
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"polite_requests_total", map[string]string{"domain": "a.test"}, 3},
		{"polite_responses_total", map[string]string{"domain": "s404.test", "class": "4xx"}, 1},
		{"polite_throttled_responses_total", map[string]string{"domain": "s503.test"}, 1},
		{"polite_requests_in_flight", map[string]string{"domain": "s500.test"}, 1},
		{"polite_requests_canceled_total", map[string]string{"domain": "slow.test"}, 1},
		{"polite_paused", map[string]string{"domain": "s429.test", "reason": "retry-after"}, 1},
		{"polite_paused", map[string]string{"domain": "s500.test", "reason": "errors"}, 1},
		{"polite_paused", map[string]string{"domain": "a.test", "reason": ""}, 0},
	} {
		got, ok := value(families, c.name, c.labels)
		require.True(t, ok, "%s%v missing", c.name, c.labels)
		assert.Equal(t, c.want, got, "%s%v", c.name, c.labels)
	}
}

func TestCollectorCountsSeries(t *testing.T) {
	tr, _ := newTransport(t)
	c := newCollector(t, tr)
	assert.Equal(t, 1, testutil.CollectAndCount(c), "only polite_domains before any request")
	get(t, tr, "http://a.test/", false)
	get(t, tr, "http://b.test/", false)
	assert.Equal(t, 1+2*22, testutil.CollectAndCount(c))
	assert.Equal(t, 2, testutil.CollectAndCount(c, "polite_requests_total"))
}

func TestCollectorLint(t *testing.T) {
	tr, _ := newTransport(t)
	get(t, tr, "http://a.test/", false)
	problems, err := testutil.CollectAndLint(newCollector(t, tr))
	require.NoError(t, err)
	assert.Empty(t, problems)
}

// TestCollectorCountsDisallowed: a request robots.txt forbids counts in
// polite_requests_disallowed_total, and only there.
func TestCollectorCountsDisallowed(t *testing.T) {
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		body := "ok"
		if req.URL.Path == "/robots.txt" {
			body = "User-agent: *\nDisallow: /private\n"
		}
		return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(body)), Request: req, Header: http.Header{}}, nil
	})
	tr, err := polite.NewTransport(base, polite.WithDefault(fast), polite.WithRobots("testbot"))
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodGet, "http://a.test/private", nil)
	require.NoError(t, err)
	_, err = tr.RoundTrip(req)
	require.ErrorIs(t, err, polite.ErrDisallowed)

	families := gather(t, newCollector(t, tr))
	for name, want := range map[string]float64{
		"polite_requests_disallowed_total": 1,
		"polite_requests_total":            0, // robots.txt is counted apart
		"polite_robots_requests_total":     1,
		"polite_requests_canceled_total":   0,
		"polite_requests_failed_total":     0,
	} {
		got, ok := value(families, name, map[string]string{"domain": "a.test"})
		require.True(t, ok, name)
		assert.Equal(t, want, got, name)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestCollectorInvalidUTF8Domain: a custom key function may return bytes
// that Prometheus refuses as a label value; the scrape still succeeds, and
// distinct keys keep distinct series.
func TestCollectorInvalidUTF8Domain(t *testing.T) {
	keys := map[string]string{"a.test": "bad\xff", "b.test": "bad\xfe", "c.test": "good"}
	tr, _ := newTransport(t, polite.WithKeyFunc(func(req *http.Request) (string, error) { return keys[req.URL.Host], nil }))
	for host := range keys {
		get(t, tr, "http://"+host+"/", false)
	}
	families := gather(t, newCollector(t, tr))
	for _, domain := range []string{`"bad\xff"`, `"bad\xfe"`, "good"} {
		got, ok := value(families, "polite_requests_total", map[string]string{"domain": domain})
		require.True(t, ok, domain)
		assert.Equal(t, 1.0, got, domain)
	}
}

func TestMaxDomains(t *testing.T) {
	tr, _ := newTransport(t)
	for i, domain := range []string{"a.test", "b.test", "c.test", "d.test", "e.test"} {
		for range 5 - i { // a.test is the busiest
			get(t, tr, "http://"+domain+"/", false)
		}
	}
	c := newCollector(t, tr, metrics.WithMaxDomains(2))
	families := gather(t, c)
	assert.Equal(t, 3, testutil.CollectAndCount(c, "polite_requests_total"), "two domains and other")
	for domain, want := range map[string]float64{"a.test": 5, "b.test": 4, "other": 3 + 2 + 1} {
		got, ok := value(families, "polite_requests_total", map[string]string{"domain": domain})
		require.True(t, ok, domain)
		assert.Equal(t, want, got, domain)
	}
	got, ok := value(families, "polite_responses_total", map[string]string{"domain": "other", "class": "2xx"})
	require.True(t, ok)
	assert.Equal(t, 6.0, got)
	_, ok = value(families, "polite_requests_total", map[string]string{"domain": "c.test"})
	assert.False(t, ok, "c.test is summed into other")
}

// TestMaxDomainsStaysMonotonic drives a Transport that forgets domains
// and checks that the "other" counter never goes down and the series stay
// bounded.
func TestMaxDomainsStaysMonotonic(t *testing.T) {
	tr, _ := newTransport(t, polite.WithMaxDomains(4))
	c := newCollector(t, tr, metrics.WithMaxDomains(1))
	get(t, tr, "http://keep.test/", false)
	get(t, tr, "http://keep.test/", false)
	var last float64
	sent := 2
	for i := range 40 {
		get(t, tr, fmt.Sprintf("http://d%d.test/", i), false)
		sent++
		get(t, tr, "http://keep.test/", false) // stays recent, never forgotten
		sent++
		families := gather(t, c)
		other, _ := value(families, "polite_requests_total", map[string]string{"domain": "other"})
		require.GreaterOrEqual(t, other, last, "other went down at step %d", i)
		last = other
		keep, ok := value(families, "polite_requests_total", map[string]string{"domain": "keep.test"})
		require.True(t, ok)
		assert.Equal(t, float64(i+3), keep)
		assert.Equal(t, float64(sent), keep+other, "every request is counted once")
		assert.LessOrEqual(t, testutil.CollectAndCount(c, "polite_requests_total"), 2)
	}
}

func TestMaxDomainsNoCap(t *testing.T) {
	tr, _ := newTransport(t)
	for i := range 5 {
		get(t, tr, fmt.Sprintf("http://d%d.test/", i), false)
	}
	for _, n := range []int{0, 5, 100} {
		c := newCollector(t, tr, metrics.WithMaxDomains(n))
		assert.Equal(t, 5, testutil.CollectAndCount(c, "polite_requests_total"), "n=%d", n)
	}
}

// TestCollectorDocListsEverySeries checks NewCollector's doc against what
// it exports: every metric family, and no other.
func TestCollectorDocListsEverySeries(t *testing.T) {
	src, err := os.ReadFile("collector.go")
	require.NoError(t, err)
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^//\s+(polite_[a-z_]+)`).FindAllStringSubmatch(string(src), -1) {
		documented[m[1]] = true
	}
	tr, _ := newTransport(t)
	get(t, tr, "http://a.test/", false)
	exported := map[string]bool{}
	for _, f := range gather(t, newCollector(t, tr)) {
		exported[f.GetName()] = true
	}
	assert.Equal(t, exported, documented)
}

func TestCollectorNamesTheScopeThatMadeARequestWait(t *testing.T) {
	tr, _ := newTransport(t, polite.WithGlobalLimit(config.Limit{MinDelay: 50 * time.Millisecond}))
	c := newCollector(t, tr)
	get(t, tr, "http://a.test/", false)
	get(t, tr, "http://b.test/", false) // its domain is fast; the global gap holds it back
	families := gather(t, c)
	got, ok := value(families, "polite_requests_delayed_by_scope_total", map[string]string{"domain": "b.test", "scope": "global"})
	require.True(t, ok)
	assert.Equal(t, 1.0, got)
	got, _ = value(families, "polite_requests_delayed_by_scope_total", map[string]string{"domain": "b.test", "scope": "server"})
	assert.Equal(t, 0.0, got)
	st, ok := tr.Stats("b.test")
	require.True(t, ok)
	assert.EqualValues(t, 1, st.DelayedRequests)
	assert.EqualValues(t, 1, st.GlobalDelayedRequests)
}

// TestPausedByReason: polite_paused says why a domain is paused, and for
// domain="other", how many are, by reason.
func TestPausedByReason(t *testing.T) {
	tr, _ := newTransport(t)
	for range 3 {
		get(t, tr, "http://a.test/", false)
	}
	for _, u := range []string{"http://s500.test/", "http://s502.test/", "http://s429.test/"} {
		get(t, tr, u, false)
	}
	families := gather(t, newCollector(t, tr, metrics.WithMaxDomains(1)))
	for _, c := range []struct {
		domain, reason string
		want           float64
	}{
		{"a.test", "", 0},
		{"other", "errors", 2},
		{"other", "backoff", 1},
	} {
		got, ok := value(families, "polite_paused", map[string]string{"domain": c.domain, "reason": c.reason})
		require.True(t, ok, "%s %q", c.domain, c.reason)
		assert.Equal(t, c.want, got, "%s %q", c.domain, c.reason)
	}
	all := gather(t, newCollector(t, tr))
	got, ok := value(all, "polite_paused", map[string]string{"domain": "s502.test", "reason": "errors"})
	require.True(t, ok)
	assert.Equal(t, 1.0, got)
}

// TestCollectorCountsGivenUp: a request refused because its domain was
// given up counts in polite_requests_given_up_total, not as sent.
func TestCollectorCountsGivenUp(t *testing.T) {
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusBadGateway, Body: io.NopCloser(strings.NewReader("")), Request: req, Header: http.Header{}}, nil
	})
	tr, err := polite.NewTransport(base, polite.WithDefault(fast), polite.WithMaxErrors(1), polite.WithMaxPause(time.Millisecond))
	require.NoError(t, err)
	for range 3 {
		req, err := http.NewRequest(http.MethodGet, "http://a.test/", nil)
		require.NoError(t, err)
		if resp, err := tr.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
	}
	families := gather(t, newCollector(t, tr))
	for name, want := range map[string]float64{
		"polite_requests_given_up_total": 2,
		"polite_requests_total":          1,
	} {
		got, ok := value(families, name, map[string]string{"domain": "a.test"})
		require.True(t, ok, name)
		assert.Equal(t, want, got, name)
	}
}
