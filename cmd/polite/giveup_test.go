package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// siteOn starts s listening on ip, another domain key on this machine.
func siteOn(t *testing.T, ip string, s *site) *site {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	require.NoError(t, err, "listening on %s for a domain of its own", ip)
	s.Server = httptest.NewUnstartedServer(s.handler())
	s.Listener.Close()
	s.Listener = ln
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// TestFetchGivesUpDeadHosts is issue 41's run: 200 URLs on 10 loopback
// hosts, one answering only 502 and one refusing connections, at the
// default flags. The run ends by itself well within 2 minutes (without
// giving up, the 502 host's backoff alone, doubling from 1 s, would take
// it past 8 minutes), exit 1; every healthy URL is fetched once, and
// every URL of the dead hosts is reported failed with the give-up reason.
func TestFetchGivesUpDeadHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("takes about 65 seconds")
	}
	var healthy []*site
	for i := 1; i <= 8; i++ {
		healthy = append(healthy, siteOn(t, fmt.Sprintf("127.0.0.%d", i), &site{}))
	}
	failing := siteOn(t, "127.0.0.9", &site{statuses: map[string]int{}})
	for i := range 20 {
		failing.statuses[fmt.Sprintf("/page/%d", i)] = http.StatusBadGateway
	}
	ln, err := net.Listen("tcp", "127.0.0.10:0")
	require.NoError(t, err)
	refusing := "http://" + ln.Addr().String()
	ln.Close() // nothing listens: connections are refused

	var list []string
	dead := map[string]bool{}
	for i := range 20 {
		for _, s := range healthy {
			list = append(list, fmt.Sprintf("%s/page/%d", s.URL, i))
		}
		for _, base := range []string{failing.URL, refusing} {
			u := fmt.Sprintf("%s/page/%d", base, i)
			list = append(list, u)
			dead[u] = true
		}
	}
	o := runPoliteWithin(t, 2*time.Minute, strings.Join(list, "\n")+"\n", "fetch")
	t.Logf("200 URLs, two of 10 hosts dead: %v, exit %d", o.took.Round(time.Millisecond), o.code)
	assert.Equal(t, exitFailed, o.code, "stderr: %s", o.stderr)
	for _, s := range healthy {
		got := s.requests()
		slices.Sort(got)
		assert.Len(t, slices.Compact(got), 20, "%s: every URL", s.URL)
		assert.Len(t, got, 20, "%s: each once", s.URL)
	}
	assert.Contains(t, o.stderr, "200 URLs in")
	assert.Contains(t, o.stderr, "160 fetched, 40 failed")
	givenUp := 0
	logged := 0
	for _, line := range lines(o.stderr) {
		for u := range dead {
			if strings.HasSuffix(line, "]") || !strings.Contains(line, u+":") || !strings.Contains(line, "FAIL") {
				continue
			}
			assert.Contains(t, line, "domain given up after 7 failed answers in a row", "every dead URL ends given up")
			givenUp++
			if logged < 3 {
				t.Logf("a give-up line: %s", line)
				logged++
			}
		}
	}
	assert.Equal(t, 40, givenUp, "one final line per dead URL; stderr: %s", o.stderr)
	assert.Contains(t, o.stdout, "given up")
	t.Logf("the table:\n%s", o.stdout)
}
