package redislimiter

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// clusterSlot is Redis Cluster's slot of key: CRC16 (XMODEM) of its hash
// tag, the text between the first "{" and the next "}" when not empty.
func clusterSlot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if n := strings.IndexByte(key[open+1:], '}'); n > 0 {
			key = key[open+1 : open+1+n]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}

func TestKeysOfADomainShareOneSlot(t *testing.T) {
	domains := []string{"example.com", "", "%", "%25", "{", "}", "%7B", "a{b}c", "}x{", "{}", "xn--bcher-kva.example", "127.0.0.1", "::1"}
	for _, prefix := range []string{"polite:", "", "app:}", "p}"} {
		l, err := New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), WithPrefix(prefix))
		require.NoError(t, err)
		tags, slots := map[string]string{}, map[int]bool{}
		for _, domain := range domains {
			keys := l.keys(domain)
			require.Len(t, keys, 3)
			assert.True(t, strings.HasPrefix(keys[0], prefix), keys[0])
			for _, key := range keys[1:] {
				assert.Equal(t, clusterSlot(keys[0]), clusterSlot(key), "prefix %q, domain %q: %s and %s", prefix, domain, keys[0], key)
			}
			state := strings.TrimSuffix(keys[0], "state")
			if other, dup := tags[state]; dup {
				t.Errorf("prefix %q: domains %q and %q share the keys %s...", prefix, other, domain, state)
			}
			tags[state] = domain
			slots[clusterSlot(keys[0])] = true
		}
		assert.Greater(t, len(slots), len(domains)/2, "prefix %q: domains spread over slots", prefix)
	}
	l, err := New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}))
	require.NoError(t, err)
	assert.Equal(t, []string{"polite:{example.com}:state", "polite:{example.com}:starts", "polite:{example.com}:last"}, l.keys("example.com"))
}

// TestScriptsRunOnCluster runs every script through a ClusterClient
// against a one-node Redis Cluster, which refuses a script whose keys are
// in different slots (CROSSSLOT), and checks clusterSlot against Redis.
func TestScriptsRunOnCluster(t *testing.T) {
	srv := redistest.Start(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
	ctx := context.Background()
	admin := newClient(t, srv)
	require.NoError(t, admin.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err())
	require.Eventually(t, func() bool {
		info, err := admin.ClusterInfo(ctx).Result()
		return err == nil && strings.Contains(info, "cluster_state:ok")
	}, 10*time.Second, 20*time.Millisecond)

	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{srv.Addr()}})
	t.Cleanup(func() { cluster.Close() })
	l, err := New(cluster, WithLogger(slog.New(slog.DiscardHandler)), WithTimeout(5*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	rule := limiter.Rule{Rate: 10, Burst: 2, MinDelay: time.Millisecond, Quotas: []config.Quota{{Requests: 5, Window: time.Second}, {Requests: 50, Window: time.Minute}}}
	for _, domain := range []string{"example.com", "a{b}c", ""} {
		r := limiter.Request{Key: domain, Rule: &rule}
		res, err := l.Reserve(ctx, r)
		require.NoError(t, err, domain)
		require.True(t, res.OK())
		require.IsType(t, &turn{}, res.Turn())
		require.NoError(t, res.Cancel(ctx), domain)
		_, err = l.Observe(ctx, r, limiter.Observation{Status: http.StatusTooManyRequests, RetryAfter: time.Second})
		require.NoError(t, err, domain)
		st, err := l.State(ctx, r)
		require.NoError(t, err, domain)
		assert.Positive(t, st.Paused, domain)
		paused, err := sharedPause(ctx, l, domain)
		require.NoError(t, err, domain)
		assert.Positive(t, paused, domain)
		for _, key := range l.keys(domain) {
			slot, err := admin.ClusterKeySlot(ctx, key).Result()
			require.NoError(t, err)
			assert.Equal(t, int(slot), clusterSlot(key), key)
		}
	}
	assert.False(t, l.down())

	// The check is real: keys of two domains in one script are refused.
	keys := append(l.keys("one.example"), l.keys("two.example")...)
	_, err = l.run(ctx, &l.scripts.reserve, keys, append(ruleArgs(limiter.Rule{Rate: 1, Burst: 1, Quotas: []config.Quota{{Requests: 1, Window: time.Second}}}, 1), "report"))
	require.ErrorContains(t, err, "CROSSSLOT")
}

func TestKeysExpireOnceIdle(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	t.Run("once quiet", func(t *testing.T) {
		f := newFakeClock(t, srv)
		f.at(t, 0)
		pttl := func(key string) time.Duration {
			d, err := f.client.PTTL(ctx, key).Result()
			require.NoError(t, err)
			return d
		}
		// Keys live until the domain is quiet, plus as long again (at least
		// a second), so that a busy domain seldom needs PEXPIRE. A TTL
		// counts down in real time from when it was set: it is at most want,
		// and short of it by no more than the moments a loaded machine takes
		// (a second of slack; the cases below differ by more).
		near := func(want time.Duration, key string) {
			t.Helper()
			got := pttl(key)
			assert.LessOrEqual(t, got, want, key)
			assert.Greater(t, got, want-time.Second, key)
		}
		// Quiet once a 1/s bucket has refilled: after 1s.
		bucket := limiter.Rule{Rate: 1, Burst: 1}
		_, err := reserveScript(ctx, f.Limiter, "bucket", &bucket, 0, 0)
		require.NoError(t, err)
		near(2*time.Second, f.keys("bucket")[0])
		// A pause that ends after the expiry moves it.
		require.NoError(t, f.pause(ctx, "bucket", 30*time.Second))
		near(60*time.Second, f.keys("bucket")[0])

		// Quiet once the quota's window has passed: after 5s; the list too.
		quota := limiter.Rule{MinDelay: 10 * time.Millisecond, Quotas: []config.Quota{{Requests: 2, Window: 5 * time.Second}}}
		_, err = reserveScript(ctx, f.Limiter, "quota", &quota, 0, 0)
		require.NoError(t, err)
		for _, key := range f.keys("quota") {
			near(10*time.Second, key)
		}
		// A pause within the expiry leaves it.
		require.NoError(t, f.pause(ctx, "quota", 7*time.Second))
		near(10*time.Second, f.keys("quota")[0])
		// A new list (another quota) gets an expiry too: the request starts
		// when the pause ends, at 7s, and the domain is quiet 5s later, 11s
		// from now.
		f.at(t, time.Second)
		other := []config.Quota{{Requests: 3, Window: 5 * time.Second}}
		_, err = reserveScript(ctx, f.Limiter, "quota", &limiter.Rule{MinDelay: 10 * time.Millisecond, Quotas: other}, 0, 0)
		require.NoError(t, err)
		for _, key := range f.keys("quota") {
			near(22*time.Second, key)
		}
	})
	t.Run("gone in real time", func(t *testing.T) {
		client := newClient(t, srv)
		l, err := New(client, WithLogger(slog.New(slog.DiscardHandler)), WithTimeout(5*time.Second))
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
		rule := limiter.Rule{Rate: 50, Burst: 1, Quotas: []config.Quota{{Requests: 3, Window: 100 * time.Millisecond}}}
		_, err = l.Reserve(ctx, limiter.Request{Key: "idle.example", Rule: &rule})
		require.NoError(t, err)
		keys := l.keys("idle.example")
		n, err := client.Exists(ctx, keys...).Result()
		require.NoError(t, err)
		require.Equal(t, int64(3), n, "keys exist while the domain is busy")
		assert.Eventually(t, func() bool {
			n, err := client.Exists(ctx, keys...).Result()
			return err == nil && n == 0
		}, 2*time.Second, 20*time.Millisecond, "keys expire once the domain is idle")
	})
}

// TestEarlierStateFieldsAreDropped: the state of earlier versions (fields
// s and p of the state hash, other encodings) is not read: a domain that
// holds only that starts as a fresh one, and its first state deletes them,
// so that a domain busy across an upgrade does not keep them for good.
func TestEarlierStateFieldsAreDropped(t *testing.T) {
	srv := redistest.Start(t)
	l, _ := newTestLimiter(t, srv)
	admin := newClient(t, srv)
	ctx := context.Background()
	key := l.keys("upgraded.example")[0]
	require.NoError(t, admin.HSet(ctx, key, "s", "\x93\x01\x02\x03", "p", "\xcb\x7f\xf8").Err())
	require.NoError(t, admin.Expire(ctx, key, time.Minute).Err())

	res, err := l.Reserve(ctx, limiter.Request{Key: "upgraded.example", Rule: &limiter.Rule{MinDelay: time.Second}})
	require.NoError(t, err)
	require.True(t, res.OK())
	assert.Zero(t, res.Wait(), "a fresh state")
	fields, err := admin.HKeys(ctx, key).Result()
	require.NoError(t, err)
	assert.Equal(t, []string{"v"}, fields)
}
