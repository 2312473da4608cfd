package redislimiter

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// failover is a run of workers, each a Limiter with a client of its own,
// pacing domains together while the test kills a Redis primary and its
// replica is promoted, as a fleet of crawler processes would.
type failover struct {
	workers, domains int
	rule             limiter.Rule
	client           func() redis.UniversalClient // a worker's client
	victim           func(domain string) bool     // whether domain's keys live on the primary killed
	kill             func()
	promoted         func() bool // whether the replica is a primary now
	// announced, if set, reports whether the clients can find out about the
	// promotion: with Sentinel, once the Sentinels name the new primary,
	// up to a second after its promotion (they read its INFO every
	// second during a failover).
	announced func() bool
	// back is how long after the promotion (with Sentinel, its
	// announcement) every worker must share the pace again.
	back time.Duration
}

// started is a request that went, as limiter.Wait let it.
type started struct {
	at       time.Time
	worker   int
	degraded bool
}

// failoverFigures are what a failover cost.
type failoverFigures struct {
	promotion  time.Duration // from the kill to the replica's promotion
	announce   time.Duration // from the promotion to the Sentinels' naming it, if they do
	sharedBack time.Duration // from the promotion (with Sentinel, its announcement) until every worker paces through Redis
	promotedTo time.Duration // from the promotion until every worker paces through Redis
	lastOff    time.Duration // from the promotion (or its announcement) to the last start the fallback paced
	over       int           // the most starts of one domain over its pace from the kill to the end
	busiest    int           // the most starts of one domain in a window of failoverWindow
	healthyOff int           // starts of domains on healthy primaries that the fallback paced
	warnings   []int         // per worker
	recoveries []int         // per worker
	requests   int
	logs       []*logRecorder
}

// failoverWindow is the window the fallback's bound is checked in.
const failoverWindow = 2 * time.Second

// run runs the workers for two seconds, kills the primary, waits for the
// promotion and runs three seconds more, and returns the figures, after
// checking that no request failed.
func (f *failover) run(t *testing.T) failoverFigures {
	t.Helper()
	var (
		mu     sync.Mutex
		starts = map[string][]started{}
		stop   = make(chan struct{})
		wg     sync.WaitGroup
		logs   []*logRecorder
	)
	var outage []time.Time // per worker: when it was last seen pacing in its fallback
	for w := range f.workers {
		outage = append(outage, time.Time{})
		rec := &logRecorder{}
		logs = append(logs, rec)
		client := f.client()
		t.Cleanup(func() { client.Close() })
		// A timeout a loaded machine does not reach, so that the outage is
		// the one the test makes; a call to the dead primary fails at once.
		l, err := New(client, WithLogger(slog.New(rec)), WithTimeout(time.Second))
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
				if l.down() {
					mu.Lock()
					outage[w] = time.Now()
					mu.Unlock()
				}
			}
		})
		for d := range f.domains {
			domain := fmt.Sprintf("d%d.example", d)
			wg.Go(func() {
				req := limiter.Request{Key: domain, Rule: &f.rule}
				for {
					select {
					case <-stop:
						return
					default:
					}
					waited, err := limiter.Wait(context.Background(), l, req)
					if !assert.NoError(t, err, "no request fails") {
						return
					}
					mu.Lock()
					starts[domain] = append(starts[domain], started{at: time.Now(), worker: w, degraded: waited.Degraded})
					mu.Unlock()
				}
			})
		}
	}
	time.Sleep(2 * time.Second)
	killed := time.Now()
	t.Logf("killed at %s", killed.Format("15:04:05.000"))
	f.kill()
	require.Eventually(t, f.promoted, 20*time.Second, 10*time.Millisecond, "the replica is promoted")
	promoted := time.Now()
	fig := failoverFigures{promotion: promoted.Sub(killed)}
	if f.announced != nil {
		require.Eventually(t, f.announced, 20*time.Second, 10*time.Millisecond, "the Sentinels name the new primary")
		fig.announce = time.Since(promoted)
		promoted = time.Now()
	}
	time.Sleep(3 * time.Second)
	close(stop)
	wg.Wait()
	end := time.Now()
	for _, rec := range logs {
		require.Eventually(t, func() bool { return rec.count(upLog) > 0 }, steady+10*time.Second, 10*time.Millisecond, "recovery logged")
	}

	for _, at := range outage {
		fig.sharedBack = max(fig.sharedBack, at.Sub(promoted))
	}
	fig.promotedTo = fig.announce + fig.sharedBack
	for domain, ss := range starts {
		slices.SortFunc(ss, func(a, b started) int { return a.at.Compare(b.at) })
		fig.requests += len(ss)
		after := 0
		for i, s := range ss {
			if s.degraded {
				if !f.victim(domain) {
					fig.healthyOff++
				}
				fig.lastOff = max(fig.lastOff, s.at.Sub(promoted))
			}
			if !s.at.Before(killed) {
				after++
			}
			n := 0
			for _, next := range ss[i:] {
				if next.at.Sub(s.at) >= failoverWindow {
					break
				}
				n++
			}
			fig.busiest = max(fig.busiest, n)
		}
		pace := f.rule.Burst + int(math.Floor(f.rule.Rate*end.Sub(killed).Seconds()))
		fig.over = max(fig.over, after-pace)
	}
	fig.logs = logs
	for _, rec := range logs {
		fig.warnings = append(fig.warnings, rec.count(downLog))
		fig.recoveries = append(fig.recoveries, rec.count(upLog))
	}
	t.Logf("%d requests; promoted %v after the kill, announced %v later (Sentinel); every worker shared the pace %v after that (%v after the promotion), the fallback's last start %v after it; "+
		"per domain at most %d starts over its pace from the kill on, at most %d in a %v window (%d workers' own paces: %d); "+
		"%d starts of domains on healthy primaries paced by the fallback; warnings per worker %v, recoveries %v",
		fig.requests, fig.promotion.Round(time.Millisecond), fig.announce.Round(time.Millisecond), fig.sharedBack.Round(time.Millisecond),
		fig.promotedTo.Round(time.Millisecond), fig.lastOff.Round(time.Millisecond), fig.over, fig.busiest,
		failoverWindow, f.workers, f.workers*ownPaceAllows(&f.rule, failoverWindow), fig.healthyOff, fig.warnings, fig.recoveries)
	return fig
}

// check asserts the targets: the fallback's bound, the shared pace back
// within f.back of the promotion (with Sentinel, of its announcement), one
// warning and one recovery per worker.
func (fig failoverFigures) check(t *testing.T, f *failover) {
	t.Helper()
	// One start more than the bound is tolerated around the switch back,
	// as in TestOutageKeepsEachWorkersPace: the starts are measured when
	// each request's timer fired, late by a loaded machine's scheduling.
	assert.LessOrEqual(t, fig.busiest, f.workers*ownPaceAllows(&f.rule, failoverWindow)+1, "no domain exceeds the fallback's bound")
	assert.LessOrEqual(t, fig.sharedBack, f.back, "the shared pace is back after the promotion (with Sentinel, the Sentinels naming it)")
	for w := range f.workers {
		assert.Equal(t, 1, fig.warnings[w], "worker %d: one warning", w)
		assert.Equal(t, 1, fig.recoveries[w], "worker %d: one recovery", w)
	}
	if t.Failed() {
		for w, rec := range fig.logs {
			t.Logf("worker %d:\n%s", w, rec)
		}
	}
}

// TestClusterFailover: three workers pace 30 domains at 5/s through a
// Redis Cluster of three primaries and three replicas; one primary is
// killed. Only the domains of that primary are paced by each worker's
// fallback, until the worker's probe finds the promoted replica. With
// cluster-require-full-coverage no, the others keep the shared pace
// throughout; with yes (Redis's default), every primary refuses commands
// from when the cluster marks the dead one failed until the promotion, and
// the domains of every primary are paced by the fallbacks meanwhile.
func TestClusterFailover(t *testing.T) {
	for _, fullCoverage := range []string{"no", "yes"} {
		t.Run("cluster-require-full-coverage "+fullCoverage, func(t *testing.T) {
			c := redistest.StartCluster(t, "--cluster-require-full-coverage", fullCoverage)
			primary, replica := c.Serving("polite:{d0.example}:state")
			admin := redis.NewClient(&redis.Options{Addr: replica.Addr()})
			t.Cleanup(func() { admin.Close() })
			const domains = 30
			onVictim := map[string]bool{}
			for d := range domains {
				domain := fmt.Sprintf("d%d.example", d)
				p, _ := c.Serving("polite:{" + domain + "}:state")
				onVictim[domain] = p == primary
			}
			t.Logf("%d of %d domains on the primary killed", countTrue(onVictim), domains)
			f := &failover{
				workers: 3, domains: domains, rule: limiter.Rule{Rate: 5, Burst: 1},
				client: func() redis.UniversalClient {
					return redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), ContextTimeoutEnabled: true})
				},
				victim:   func(domain string) bool { return onVictim[domain] },
				kill:     primary.Kill,
				promoted: func() bool { return isPrimary(admin) },
				back:     time.Second,
			}
			fig := f.run(t)
			fig.check(t, f)
			if fullCoverage == "no" {
				assert.Zero(t, fig.healthyOff, "the domains of healthy primaries keep the shared pace")
			}
		})
	}
}

// TestSentinelFailover: three workers pace 30 domains at 5/s through a
// primary that Sentinels watch; the primary is killed and the Sentinels
// promote its replica. Each worker's client finds the new primary
// when the Sentinels announce it, 0.8 to 1s after the promotion (they read
// the promoted replica's INFO once a second during a failover), and the
// Limiter's probe reaches it within a probe interval of that, through a
// pool the outage left usable.
func TestSentinelFailover(t *testing.T) {
	s := redistest.StartSentinel(t)
	admin := redis.NewClient(&redis.Options{Addr: s.Replica.Addr()})
	t.Cleanup(func() { admin.Close() })
	sentinel := redis.NewSentinelClient(&redis.Options{Addr: s.Sentinels[0].Addr()})
	t.Cleanup(func() { sentinel.Close() })
	f := &failover{
		workers: 3, domains: 30, rule: limiter.Rule{Rate: 5, Burst: 1},
		client: func() redis.UniversalClient {
			return redis.NewFailoverClient(&redis.FailoverOptions{MasterName: s.Name, SentinelAddrs: s.SentinelAddrs(), ContextTimeoutEnabled: true})
		},
		victim:   func(string) bool { return true },
		kill:     s.Primary.Kill,
		promoted: func() bool { return isPrimary(admin) },
		announced: func() bool {
			addr, err := sentinel.GetMasterAddrByName(context.Background(), s.Name).Result()
			return err == nil && len(addr) == 2 && addr[0]+":"+addr[1] == s.Replica.Addr()
		},
		// A probe interval (100ms) after the announcement on a quiet
		// machine; the bound is generous, as a loaded machine's timers
		// fire hundreds of milliseconds late. That the pool's gate stays
		// open is TestOutageLeavesThePoolUsable's.
		back: 2 * time.Second,
	}
	f.run(t).check(t, f)
}

// isPrimary reports whether the Redis that client reaches says it is a
// primary.
func isPrimary(client *redis.Client) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	role, err := client.Do(ctx, "ROLE").Slice()
	return err == nil && len(role) > 0 && role[0] == "master"
}

func countTrue(m map[string]bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}
