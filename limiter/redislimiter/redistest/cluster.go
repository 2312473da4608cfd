package redistest

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Cluster is a Redis Cluster that a test started on loopback: three
// primaries with a replica each, cluster-node-timeout 1000, made by
// redis-cli --cluster create. Its nodes are killed when the test ends.
type Cluster struct {
	tb    testing.TB
	Nodes []*Server
}

// StartCluster starts a Redis Cluster of three primaries and three
// replicas, with extra arguments for each redis-server, and waits until
// every node serves every slot. Without redis-server or redis-cli on PATH
// the test is skipped, or fails when POLITE_REQUIRE_REDIS=1.
func StartCluster(tb testing.TB, extra ...string) *Cluster {
	tb.Helper()
	lookPath(tb, "redis-cli")
	c := &Cluster{tb: tb}
	for range 6 {
		// A primary pings its replica every second, not ten, so that the
		// replica's offset moves and CLUSTER SLOTS lists it soon: Redis
		// leaves out a replica whose offset is still 0.
		args := []string{"--cluster-enabled", "yes", "--cluster-node-timeout", "1000", "--repl-ping-replica-period", "1"}
		c.Nodes = append(c.Nodes, start(tb, nil, append(args, extra...)))
	}
	args := []string{"--cluster", "create"}
	for _, n := range c.Nodes {
		args = append(args, n.Addr())
	}
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		tb.Fatalf("redis-cli --cluster create: %v: %s", err, out)
	}
	c.waitReady()
	return c
}

// Addrs are the nodes' host:port addresses, to seed a cluster client.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr()
	}
	return addrs
}

// waitReady waits until every node says the cluster is ok and knows three
// primaries that hold all 16384 slots, each with a replica in sync that
// CLUSTER SLOTS lists, as clients read it.
func (c *Cluster) waitReady() {
	c.tb.Helper()
	var last string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		last = ""
		for _, n := range c.Nodes {
			info, err := Command(n.Addr(), "CLUSTER", "INFO")
			if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_ok:16384") {
				last = fmt.Sprintf("%s: %v %s", n.Addr(), err, info)
				break
			}
			if repl, err := Command(n.Addr(), "INFO", "replication"); err != nil || strings.Contains(repl, "master_link_status:down") {
				last = fmt.Sprintf("%s: replica not in sync: %v %s", n.Addr(), err, repl)
				break
			}
			if slots, err := Command(n.Addr(), "CLUSTER", "SLOTS"); err != nil || strings.Count(slots, "127.0.0.1") != len(c.Nodes) {
				last = fmt.Sprintf("%s: CLUSTER SLOTS does not list every node: %v %s", n.Addr(), err, slots)
				break
			}
		}
		if last == "" {
			if nodes := c.nodes(); len(nodes) == 6 {
				return
			}
			last = "not every node is known yet"
		}
	}
	c.tb.Fatalf("the cluster did not become ready: %s", last)
}

// clusterNode is a line of CLUSTER NODES.
type clusterNode struct {
	id, addr, primaryID string
	primary, failed     bool
	slots               [][2]int // inclusive ranges
}

// nodes reads CLUSTER NODES from the first node that answers.
func (c *Cluster) nodes() []clusterNode {
	for _, n := range c.Nodes {
		out, err := Command(n.Addr(), "CLUSTER", "NODES")
		if err != nil {
			continue
		}
		var nodes []clusterNode
		for line := range strings.Lines(out) {
			f := strings.Fields(line)
			if len(f) < 8 {
				continue
			}
			node := clusterNode{id: f[0], addr: strings.Split(f[1], "@")[0], primaryID: f[3],
				primary: strings.Contains(f[2], "master"), failed: strings.Contains(f[2], "fail")}
			for _, r := range f[8:] {
				lo, hi, found := strings.Cut(r, "-")
				a, errA := strconv.Atoi(lo)
				b := a
				var errB error
				if found {
					b, errB = strconv.Atoi(hi)
				}
				if errA == nil && errB == nil {
					node.slots = append(node.slots, [2]int{a, b})
				}
			}
			nodes = append(nodes, node)
		}
		return nodes
	}
	return nil
}

// Serving returns the primary that serves key's slot and its replica.
func (c *Cluster) Serving(key string) (primary, replica *Server) {
	c.tb.Helper()
	out, err := Command(c.Nodes[0].Addr(), "CLUSTER", "KEYSLOT", key)
	if err != nil {
		c.tb.Fatalf("CLUSTER KEYSLOT: %v", err)
	}
	slot, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		c.tb.Fatalf("CLUSTER KEYSLOT answered %q", out)
	}
	nodes := c.nodes()
	for _, p := range nodes {
		for _, r := range p.slots {
			if slot < r[0] || slot > r[1] {
				continue
			}
			primary = c.byAddr(p.addr)
			for _, n := range nodes {
				if n.primaryID == p.id {
					replica = c.byAddr(n.addr)
				}
			}
		}
	}
	if primary == nil || replica == nil {
		c.tb.Fatalf("no primary with a replica serves slot %d: %+v", slot, nodes)
	}
	return primary, replica
}

func (c *Cluster) byAddr(addr string) *Server {
	for _, n := range c.Nodes {
		if n.Addr() == addr {
			return n
		}
	}
	return nil
}

// Command runs one command on the Redis at addr with redis-cli and
// returns what it printed.
func Command(addr string, args ...string) (string, error) {
	host, port, _ := strings.Cut(addr, ":")
	out, err := exec.Command("redis-cli", append([]string{"-h", host, "-p", port}, args...)...).CombinedOutput()
	if err == nil && strings.HasPrefix(string(out), "ERR") {
		err = fmt.Errorf("redistest: %s", strings.TrimSpace(string(out)))
	}
	return string(out), err
}
