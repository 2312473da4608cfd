package limiter_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
)

var stateDomains = flag.Int("state-domains", 0, "measure a persisted state of this many domains (TestStateScale)")

// TestStateScale measures a state of -state-domains domains, each with a
// turn and a quota window: the file's size, the time and peak heap to
// reopen it, and the time of a commit after a single change.
//
//	go test ./limiter -run TestStateScale -v -state-domains=200000
func TestStateScale(t *testing.T) {
	if *stateDomains == 0 {
		t.Skip("set -state-domains to measure")
	}
	n := *stateDomains
	path := filepath.Join(t.TempDir(), "state")
	rule := limiter.Rule{Rate: 0.001, Burst: 1, Quotas: []config.Quota{{Requests: 100, Window: time.Hour}}}
	key := func(i int) string { return fmt.Sprintf("domain%d.example", i) }

	write := limiter.NewMemory()
	require.NoError(t, write.Persist(path))
	for i := range n {
		write.Reserve(context.Background(), limiter.Request{Key: key(i), Rule: &rule})
	}
	start := time.Now()
	require.NoError(t, write.Close())
	t.Logf("first commit of %d domains: %v", n, time.Since(start).Round(time.Millisecond))
	write = nil
	info, err := os.Stat(path)
	require.NoError(t, err)
	t.Logf("file: %.1f MB", float64(info.Size())/1e6)

	runtime.GC()
	base := heapBytes()
	peak := sampleHeap()
	start, cpu := time.Now(), cpuTime()
	m := limiter.NewMemory()
	require.NoError(t, m.Persist(path))
	took, tookCPU := time.Since(start), cpuTime()-cpu
	t.Logf("reopen: %v (%v of CPU), peak heap %.1f MB above what it was before", took.Round(time.Millisecond),
		tookCPU.Round(time.Millisecond), (float64(peak())-float64(base))/1e6)
	require.Equal(t, n, m.Len())
	runtime.GC()
	t.Logf("heap before reopening %.1f MB, after it and a GC %.1f MB", float64(base)/1e6, float64(heapBytes())/1e6)

	const commits = 20
	var total, worst time.Duration
	for i := range commits {
		m.Reserve(context.Background(), limiter.Request{Key: key(i * (n / commits)), Rule: &rule})
		start := time.Now()
		require.NoError(t, m.Commit())
		d := time.Since(start)
		total += d
		worst = max(worst, d)
	}
	t.Logf("commit after one change: %v on average, %v at worst, of %d", (total / commits).Round(time.Microsecond), worst.Round(time.Microsecond), commits)
	require.NoError(t, m.Close())
	runtime.KeepAlive(m)
}

// cpuTime is the CPU time the process has used, the garbage collector's
// included: on a busy machine, a fairer measure than the time it took.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// sampleHeap samples the heap every millisecond until the returned
// function is called, which returns the highest sample.
func sampleHeap() func() uint64 {
	var mu sync.Mutex
	var peak uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			h := heapBytes()
			mu.Lock()
			peak = max(peak, h)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		return max(peak, heapBytes())
	}
}
