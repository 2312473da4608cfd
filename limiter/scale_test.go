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
	writeScaleState(t, path, n)
	info, err := os.Stat(path)
	require.NoError(t, err)
	t.Logf("file: %.1f MB", float64(info.Size())/1e6)

	// Reopen it in a process of its own, whose heap holds nothing else.
	cmd, lines := startChild(t, "reopen", path)
	for lines.Scan() {
		t.Log(lines.Text())
	}
	require.NoError(t, cmd.Wait())
}

// reopenScaleState reopens the state at path, which writeScaleState wrote,
// and says how long that took and how much heap it needed, then what a
// commit after one change costs.
func reopenScaleState(path string) error {
	runtime.GC()
	base := heapBytes()
	peak := sampleHeap()
	start, cpu := time.Now(), cpuTime()
	m := limiter.NewMemory()
	if err := m.Persist(path); err != nil {
		return err
	}
	took, tookCPU := time.Since(start), cpuTime()-cpu
	fmt.Printf("reopen of %d domains: %v (%v of CPU), peak heap %.1f MB\n", m.Len(), took.Round(time.Millisecond),
		tookCPU.Round(time.Millisecond), (float64(peak())-float64(base))/1e6)
	runtime.GC()
	fmt.Printf("heap after the reopen and a GC: %.1f MB\n", (float64(heapBytes())-float64(base))/1e6)

	rule := scaleRule
	const commits = 20
	var total, worst time.Duration
	for i := range commits {
		m.Reserve(context.Background(), limiter.Request{Key: scaleKey(i * (m.Len() / commits)), Rule: &rule})
		start := time.Now()
		if err := m.Commit(); err != nil {
			return err
		}
		d := time.Since(start)
		total += d
		worst = max(worst, d)
	}
	fmt.Printf("commit after one change: %v on average, %v at worst, of %d\n", (total / commits).Round(time.Microsecond), worst.Round(time.Microsecond), commits)
	return m.Close()
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

// scaleRule gives each domain of TestStateScale a turn and a quota window
// that last long after the test.
var scaleRule = limiter.Rule{Rate: 0.001, Burst: 1, Quotas: []config.Quota{{Requests: 100, Window: time.Hour}}}

func scaleKey(i int) string { return fmt.Sprintf("domain%d.example", i) }

// writeScaleState writes a state of n domains at path, from a Memory of
// its own that it leaves to the garbage collector.
func writeScaleState(t *testing.T, path string, n int) {
	rule := scaleRule
	m := limiter.NewMemory()
	require.NoError(t, m.Persist(path))
	for i := range n {
		m.Reserve(context.Background(), limiter.Request{Key: scaleKey(i), Rule: &rule})
	}
	require.Equal(t, n, m.Len())
	start := time.Now()
	require.NoError(t, m.Close())
	t.Logf("first commit of %d domains: %v", n, time.Since(start).Round(time.Millisecond))
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
