package redistest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// SentinelSet is a primary, its replica and three Sentinels watching
// them, started by a test on loopback (down-after-milliseconds 1000,
// failover-timeout 2000, quorum 2). Its servers are killed when the test
// ends.
type SentinelSet struct {
	Name      string // the primary's name in the Sentinels' configuration
	Primary   *Server
	Replica   *Server
	Sentinels []*Server
}

// StartSentinel starts a Sentinel set and waits until every Sentinel
// knows the replica and the two other Sentinels, and the replica is in
// sync. Without redis-server or redis-cli on PATH the test is skipped, or
// fails when POLITE_REQUIRE_REDIS=1.
func StartSentinel(tb testing.TB) *SentinelSet {
	tb.Helper()
	lookPath(tb, "redis-cli")
	set := &SentinelSet{Name: "polite", Primary: Start(tb)}
	set.Replica = Start(tb, "--replicaof", "127.0.0.1", fmt.Sprint(set.Primary.Port()))
	for i := range 3 {
		conf := filepath.Join(tb.TempDir(), fmt.Sprintf("sentinel%d.conf", i))
		text := fmt.Sprintf("sentinel monitor %[1]s 127.0.0.1 %[2]d 2\n"+
			"sentinel down-after-milliseconds %[1]s 1000\n"+
			"sentinel failover-timeout %[1]s 2000\n", set.Name, set.Primary.Port())
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			tb.Fatalf("writing %s: %v", conf, err)
		}
		set.Sentinels = append(set.Sentinels, start(tb, []string{conf, "--sentinel"}, nil))
	}
	set.waitReady(tb)
	return set
}

// SentinelAddrs are the Sentinels' host:port addresses.
func (s *SentinelSet) SentinelAddrs() []string {
	addrs := make([]string, len(s.Sentinels))
	for i, n := range s.Sentinels {
		addrs[i] = n.Addr()
	}
	return addrs
}

func (s *SentinelSet) waitReady(tb testing.TB) {
	tb.Helper()
	var last string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		last = ""
		if repl, err := Command(s.Replica.Addr(), "INFO", "replication"); err != nil || !strings.Contains(repl, "master_link_status:up") {
			last = fmt.Sprintf("replica not in sync: %v %s", err, repl)
			continue
		}
		for _, n := range s.Sentinels {
			out, err := Command(n.Addr(), "SENTINEL", "MASTER", s.Name)
			fields := strings.Fields(out)
			if err != nil || field(fields, "num-slaves") != "1" || field(fields, "num-other-sentinels") != "2" {
				last = fmt.Sprintf("sentinel %s: %v %s", n.Addr(), err, out)
				break
			}
		}
		if last == "" {
			return
		}
	}
	tb.Fatalf("the Sentinel set did not become ready: %s", last)
}

// field returns the value after name in a flat list of names and values.
func field(fields []string, name string) string {
	for i := 0; i+1 < len(fields); i += 2 {
		if fields[i] == name {
			return fields[i+1]
		}
	}
	return ""
}
