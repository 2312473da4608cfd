package statefile_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/statefile"
)

var (
	stateDomains   = flag.Int("state-domains", 0, "measure a persisted state of this many domains (TestStateScale)")
	stateForgotten = flag.Int("state-forgotten", 0, "with -state-domains, this many more domains that recover before the reopen, which compacts the file")
)

// TestStateScale measures a state of -state-domains domains, each with a
// turn and a quota window: the file's size, which it holds to at most
// 250 bytes a domain, then, in a process of its own, the time, peak heap
// and peak RSS to reopen it, and the time of a commit after a single
// change. With -state-forgotten, the file also holds that many domains
// that recover before the reopen, which then compacts it.
//
//	go test ./limiter/statefile -run TestStateScale -v -state-domains=200000
//	go test ./limiter/statefile -run TestStateScale -v -state-domains=200000 -state-forgotten=200000
func TestStateScale(t *testing.T) {
	if *stateDomains == 0 {
		t.Skip("set -state-domains to measure")
	}
	n := *stateDomains
	path := filepath.Join(t.TempDir(), "state")
	writeScaleState(t, path, n, *stateForgotten)
	info, err := os.Stat(path)
	require.NoError(t, err)
	perDomain := float64(info.Size()) / float64(n+*stateForgotten)
	t.Logf("file: %.1f MB, %.0f B a domain", float64(info.Size())/1e6, perDomain)
	assert.LessOrEqual(t, perDomain, 250.0, "bytes of file a domain")

	// Reopen it in a process of its own, whose heap holds nothing else.
	cmd, lines := startChild(t, "reopen", path)
	for lines.Scan() {
		t.Log(lines.Text())
	}
	require.NoError(t, cmd.Wait())
	if info, err = os.Stat(path); err == nil {
		t.Logf("file after the reopen: %.1f MB", float64(info.Size())/1e6)
	}
}

// countingFile is a File that counts the keys its Load restores.
type countingFile struct {
	*statefile.File
	restored int
}

func (f *countingFile) Load(restore func(key, state []byte) (bool, error)) error {
	return f.File.Load(func(key, state []byte) (bool, error) {
		keep, err := restore(key, state)
		if keep {
			f.restored++
		}
		return keep, err
	})
}

// reopenScaleState reopens the state at path, which writeScaleState wrote,
// and says how long that took, how much heap it needed and the peak RSS
// of the process, then what a commit after one change costs.
func reopenScaleState(path string) error {
	runtime.GC()
	base := heapBytes()
	peak := sampleHeap()
	start, cpu := time.Now(), cpuTime()
	opened, err := statefile.Open(path)
	if err != nil {
		return err
	}
	f := &countingFile{File: opened}
	m := limiter.NewMemory()
	if err := m.Persist(f); err != nil {
		return err
	}
	took, tookCPU := time.Since(start), cpuTime()-cpu
	fmt.Printf("reopen of %d domains: %v (%v of CPU), peak heap %.1f MB\n", f.restored, took.Round(time.Millisecond),
		tookCPU.Round(time.Millisecond), (float64(peak())-float64(base))/1e6)
	peakRSS, err := peakResidentBytes()
	if err != nil {
		return err
	}
	fmt.Printf("peak RSS of the reopening process: %.1f MB\n", float64(peakRSS)/1e6)
	runtime.GC()
	fmt.Printf("heap after the reopen and a GC: %.1f MB\n", (float64(heapBytes())-float64(base))/1e6)

	rule := scaleRule
	const commits = 20
	var total, worst time.Duration
	for i := range commits {
		m.Reserve(context.Background(), limiter.Request{Key: scaleKey(i * (f.restored / commits)), Rule: &rule})
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

// peakResidentBytes is the most memory this process has held resident
// (VmHWM), its mapped file included.
func peakResidentBytes() (uint64, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(status)) {
		if kb, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var n uint64
			_, err := fmt.Sscanf(strings.TrimSpace(kb), "%d kB", &n)
			return n << 10, err
		}
	}
	return 0, errors.New("no VmHWM in /proc/self/status")
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

// writeScaleState writes a state of n domains at path, and of forgotten
// more that have recovered when it returns, from a Memory of its own that
// it leaves to the garbage collector.
func writeScaleState(t *testing.T, path string, n, forgotten int) {
	rule := scaleRule
	m := limiter.NewMemory()
	require.NoError(t, persist(m, path))
	const brief = 5 * time.Second // long enough to write them all
	quick := limiter.Rule{MinDelay: brief}
	for i := range forgotten {
		m.Reserve(context.Background(), limiter.Request{Key: fmt.Sprintf("forgotten%d.example", i), Rule: &quick})
	}
	reserved := time.Now() // the last of them
	require.NoError(t, m.Commit())
	for i := range n {
		m.Reserve(context.Background(), limiter.Request{Key: scaleKey(i), Rule: &rule})
	}
	start := time.Now()
	require.NoError(t, m.Close())
	t.Logf("first commit of %d domains: %v", n+forgotten, time.Since(start).Round(time.Millisecond))
	time.Sleep(time.Until(reserved.Add(brief))) // the forgotten domains recover
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
