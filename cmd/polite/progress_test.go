package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProgressInTerminal runs polite fetch in a real terminal (a tmux
// pane) and reads the screen: a live bar with done/total and the domain
// being waited for, a failure printed above it, then the finished bar;
// the table still goes to stdout.
func TestProgressInTerminal(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("POLITE_REQUIRE_TMUX") == "1" {
			t.Fatal("tmux is not on PATH, and POLITE_REQUIRE_TMUX=1 requires this test")
		}
		t.Skip("SKIPPED: tmux is not on PATH, so the live progress display is not checked; install tmux (or set POLITE_REQUIRE_TMUX=1 to make this a failure)")
	}
	s := newSite(t, nil)
	socket := fmt.Sprintf("polite-test-%d", os.Getpid())
	run := func(args ...string) string {
		cmd := exec.Command(tmux, append([]string{"-L", socket, "-f", "/dev/null"}, args...)...)
		cmd.Env = append(os.Environ(), "TERM=xterm-256color")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "tmux %v: %s", args, out)
		return string(out)
	}
	t.Cleanup(func() { exec.Command(tmux, "-L", socket, "kill-server").Run() })

	stdout := filepath.Join(t.TempDir(), "stdout")
	command := []string{quote(binary), "fetch", "-rate", "4", "-burst", "1"}
	for i := range 8 {
		command = append(command, quote(fmt.Sprintf("%s/%d", s.URL, i)))
	}
	command = append(command, quote("http://exa mple.com/"))
	shell := strings.Join(command, " ") + " > " + quote(stdout) + "; echo EXIT=$?; sleep 60"
	run("new-session", "-d", "-s", "polite", "-x", "120", "-y", "30", shell)
	screen := func() string { return run("capture-pane", "-p", "-t", "polite") }

	live := regexp.MustCompile(`\(\d/9\).*eta \d+s, waiting: 127\.0\.0\.1 \d+\.\ds`)
	var seen string
	require.Eventually(t, func() bool {
		seen = screen()
		return live.MatchString(seen)
	}, 30*time.Second, 20*time.Millisecond, "no live bar with a wait on screen; last screen:\n%s", seen)
	t.Logf("while running:\n%s", strings.TrimSpace(seen))

	require.Eventually(t, func() bool {
		seen = screen()
		return strings.Contains(seen, "EXIT=")
	}, 30*time.Second, 50*time.Millisecond, "polite fetch did not end; last screen:\n%s", seen)
	t.Logf("at the end:\n%s", strings.TrimSpace(seen))
	assert.Contains(t, seen, "EXIT=1")
	assert.Regexp(t, `100% \|█+\| \(9/9\)`, seen)
	assert.Contains(t, seen, `FAIL bad URL "http://exa mple.com/"`, "failures are printed above the bar")
	assert.Contains(t, seen, "8 fetched, 1 failed")
	assert.NotContains(t, seen, "] 200 http", "a terminal gets the bar, not log lines")
	table, err := os.ReadFile(stdout)
	require.NoError(t, err)
	assert.Contains(t, string(table), "127.0.0.1")
}

// quote quotes s for the shell.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
