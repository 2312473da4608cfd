package statefile_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/statefile"
)

// The tests below start this test binary again as a child process that
// keeps a state, to kill it or to see what a second process meets.
const (
	childMode  = "LIMITER_TEST_CHILD"
	childState = "LIMITER_TEST_STATE"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childMode); mode != "" {
		if err := runChild(mode, os.Getenv(childState)); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// keysPerRound is how many keys each commit of the "commit" child adds.
const keysPerRound = 2000

// slowRule keeps a key from recovering for 1,000 s.
var slowRule = limiter.Rule{Rate: 0.001, Burst: 1}

// runChild runs a child process: "commit" adds keysPerRound keys and
// commits, over and over, saying "committed N" after round N; "hold"
// keeps the state open, saying "ready"; "full" commits under a file size
// limit of 64 KB and says what the commit and Close returned; "tiny" says
// what Persist returned under a limit of 8 KB, too small for a new store;
// "reopen" measures a reopen for TestStateScale; "open" opens the state,
// which may compact it, says "opened" and closes it.
func runChild(mode, path string) error {
	if mode == "full" || mode == "tiny" {
		size := uint64(64 << 10)
		if mode == "tiny" {
			size = 8 << 10
		}
		limit := syscall.Rlimit{Cur: size, Max: size}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
			return err
		}
	}
	if mode == "reopen" {
		return reopenScaleState(path)
	}
	m := limiter.NewMemory()
	if err := persist(m, path); err != nil {
		if mode == "tiny" {
			fmt.Printf("persist: %v; damaged: %v\n", err, errors.Is(err, limiter.ErrStateDamaged))
			return nil
		}
		return err
	}
	switch mode {
	case "open":
		fmt.Println("opened")
		return m.Close()
	case "hold":
		fmt.Println("ready")
		select {}
	case "commit":
		for round := 0; ; round++ {
			for i := range keysPerRound {
				r := limiter.Request{Key: fmt.Sprintf("round%d-%d.example", round, i), Rule: &slowRule}
				if _, err := m.Reserve(context.Background(), r); err != nil {
					return err
				}
			}
			if err := m.Commit(); err != nil {
				return err
			}
			fmt.Println("committed", round)
		}
	case "full":
		for i := range 5000 {
			m.Reserve(context.Background(), limiter.Request{Key: fmt.Sprintf("domain%d.example", i), Rule: &slowRule})
		}
		fmt.Printf("commit: %v\n", m.Commit())
		fmt.Printf("close: %v\n", m.Close())
		return nil
	}
	return fmt.Errorf("no child mode %q", mode)
}

// persist keeps m's state in the file at path.
func persist(m *limiter.Memory, path string) error {
	f, err := statefile.Open(path)
	if err != nil {
		return err
	}
	return m.Persist(f)
}

// startChild starts a child process in mode on the state at path, and
// returns it with its output read line by line. go test -short skips the
// tests that start one.
func startChild(t *testing.T, mode, path string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childMode+"="+mode, childState+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, bufio.NewScanner(out)
}

// A process killed in the middle of its commits leaves a store that opens,
// holds every round it said it committed, and nothing beside it.
func TestPersistSurvivesAKillMidCommit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	committed := -1
	for _, rounds := range []int{1, 2, 4, 1, 3, 1} {
		cmd, lines := startChild(t, "commit", path)
		for range rounds {
			require.True(t, lines.Scan(), "the child stopped: %v", lines.Err())
			var round int
			_, err := fmt.Sscanf(lines.Text(), "committed %d", &round)
			require.NoError(t, err, lines.Text())
			committed = round
		}
		// Kill it at some point of the next round, its adding keys or its
		// commit.
		time.Sleep(time.Duration(rand.N(50)) * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		cmd.Wait()

		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, entries, 1, "nothing beside the state")
		m := limiter.NewMemory()
		require.NoError(t, persist(m, path), "the store opens after a kill")
		for i := range keysPerRound {
			key := fmt.Sprintf("round%d-%d.example", committed, i)
			require.Positive(t, m.StateAt(limiter.Request{Key: key, Rule: &slowRule}, time.Now()).Wait, key)
		}
		require.NoError(t, m.Close())
	}
}

// A process killed at any point of an open that compacts the file leaves
// a file that opens, holds every key that had not recovered, and has
// nothing beside it once opened.
func TestPersistSurvivesAKillMidCompaction(t *testing.T) {
	dir := t.TempDir()
	prepared := filepath.Join(dir, "prepared")
	const brief = 2 * time.Second // for the commit to write them all, on a slow machine too
	quick := limiter.Rule{MinDelay: brief}
	m := limiter.NewMemory()
	require.NoError(t, persist(m, prepared))
	now := time.Now()
	for i := range 30000 {
		m.ReserveAt(limiter.Request{Key: fmt.Sprintf("quick%d.example", i), Rule: &quick}, now)
	}
	require.NoError(t, m.Commit())
	for i := range 1000 {
		m.Reserve(context.Background(), limiter.Request{Key: fmt.Sprintf("slow%d.example", i), Rule: &slowRule})
	}
	require.NoError(t, m.Close())
	state, err := os.ReadFile(prepared)
	require.NoError(t, err)
	time.Sleep(time.Until(now.Add(brief))) // the quick keys recover: an open compacts the file

	midway := 0
	const rounds = 10
	for round := range rounds {
		path := filepath.Join(dir, fmt.Sprintf("state%d", round))
		require.NoError(t, os.WriteFile(path, state, 0o600))
		cmd, _ := startChild(t, "open", path)
		time.Sleep(rand.N(15 * time.Millisecond)) // the child's whole open takes about 10 ms
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		cmd.Wait()
		if _, err := os.Stat(path + ".compact"); err == nil {
			midway++
		}

		again := limiter.NewMemory()
		require.NoError(t, persist(again, path), "the file opens after a kill")
		for i := range 1000 {
			require.True(t, waits(again, fmt.Sprintf("slow%d.example", i)), "a key kept")
		}
		require.NoError(t, again.Close())
		assert.NoFileExists(t, path+".compact", "nothing beside the file")
	}
	t.Logf("%d of %d kills left a compaction midway", midway, rounds)
}

// A second process meets an error naming the file while the first keeps
// its state there, and opens it once the first is gone.
func TestPersistRefusesASecondProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	cmd, lines := startChild(t, "hold", path)
	require.True(t, lines.Scan())
	require.Equal(t, "ready", lines.Text())

	_, err := statefile.Open(path)
	require.ErrorIs(t, err, limiter.ErrStateInUse)
	assert.Contains(t, err.Error(), path)

	require.NoError(t, cmd.Process.Kill())
	cmd.Wait()
	m := limiter.NewMemory()
	require.NoError(t, persist(m, path))
	require.NoError(t, m.Close())
}

// A commit the disk cannot hold is an error naming the file, from Commit
// and from Close, and the store still opens.
func TestPersistReportsAFullDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	cmd, lines := startChild(t, "full", path)
	var out []string
	for lines.Scan() {
		out = append(out, lines.Text())
	}
	var exit *exec.ExitError
	if err := cmd.Wait(); errors.As(err, &exit) {
		t.Fatalf("the child failed: %v; it said %q", err, out)
	}
	require.Len(t, out, 2, "%q", out)
	t.Logf("the child said %q", out)
	for i, what := range []string{"commit: ", "close: "} {
		assert.True(t, strings.HasPrefix(out[i], what), out[i])
		assert.Contains(t, out[i], "file too large", "%s reports the write that failed", what)
		assert.Contains(t, out[i], path, "%s names the file", what)
	}

	m := limiter.NewMemory()
	require.NoError(t, persist(m, path), "the store still opens")
	require.NoError(t, m.Close())
}

// A new store the disk cannot hold is an error naming the file, not a
// damaged one, and leaves no file behind.
func TestPersistReportsAFullDiskAtOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	cmd, lines := startChild(t, "tiny", path)
	require.True(t, lines.Scan(), "the child said nothing")
	said := lines.Text()
	require.NoError(t, cmd.Wait())
	assert.Contains(t, said, "file too large")
	assert.Contains(t, said, path)
	assert.Contains(t, said, "damaged: false")
	assert.NoFileExists(t, path, "no debris")
}
