package redistest

import (
	"strings"
	"testing"
	"time"
)

// TestClusterFailover: killing the primary of a slot promotes its replica.
func TestClusterFailover(t *testing.T) {
	c := StartCluster(t)
	primary, replica := c.Serving("{example.com}:state")
	primary.Kill()
	waitPrimary(t, replica, 15*time.Second)
}

// TestSentinelFailover: killing the primary makes the Sentinels promote
// the replica.
func TestSentinelFailover(t *testing.T) {
	s := StartSentinel(t)
	s.Primary.Kill()
	waitPrimary(t, s.Replica, 15*time.Second)
}

// waitPrimary waits until srv says it is a primary.
func waitPrimary(t *testing.T, srv *Server, within time.Duration) {
	t.Helper()
	began := time.Now()
	for time.Since(began) < within {
		if out, err := Command(srv.Addr(), "ROLE"); err == nil && strings.HasPrefix(out, "master") {
			t.Logf("promoted %v after the kill", time.Since(began).Round(time.Millisecond))
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s was not promoted within %v", srv.Addr(), within)
}
