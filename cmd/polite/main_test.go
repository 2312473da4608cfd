package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// binary is the polite command, built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "polite-cmd-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "polite")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the polite command:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// outcome is what one run of the binary did.
type outcome struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// runPolite runs the binary with args and stdin, and fails the test if it
// cannot run or does not end within a minute.
func runPolite(t *testing.T, stdin string, args ...string) outcome {
	t.Helper()
	return runPoliteWithin(t, time.Minute, stdin, args...)
}

// runPoliteWithin is runPolite with a time limit of its own.
func runPoliteWithin(t *testing.T, limit time.Duration, stdin string, args ...string) outcome {
	t.Helper()
	o, err := runBinaryWithin(limit, stdin, args...)
	require.NoError(t, err)
	return o
}

// runBinary runs the binary with args and stdin, for at most a minute.
func runBinary(stdin string, args ...string) (outcome, error) {
	return runBinaryWithin(time.Minute, stdin, args...)
}

// runBinaryWithin runs the binary with args and stdin, for at most limit.
func runBinaryWithin(limit time.Duration, stdin string, args ...string) (outcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	o := outcome{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	if ctx.Err() != nil {
		return o, fmt.Errorf("polite %v did not end within %v", args, limit)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		o.code = exit.ExitCode()
		return o, nil
	}
	return o, err
}

// lines splits s into its non-empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// assertOneLineError checks that a run failed for bad usage with one clear
// line on stderr, containing want, and nothing like a stack trace.
func assertOneLineError(t *testing.T, o outcome, want string) {
	t.Helper()
	assert.Equal(t, exitUsage, o.code, "stderr: %s", o.stderr)
	assert.Len(t, lines(o.stderr), 1, "stderr: %q", o.stderr)
	assert.Contains(t, o.stderr, want)
	assert.NotContains(t, o.stderr, "goroutine")
	assert.NotContains(t, o.stderr, "panic")
	assert.Empty(t, o.stdout)
}

func TestCommands(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		code int
		out  string // in stdout
		err  string // in stderr
	}{
		{"no command", nil, exitUsage, "", "Usage:"},
		{"help", []string{"help"}, exitOK, "polite fetch", ""},
		{"-h", []string{"-h"}, exitOK, "polite demo", ""},
		{"unknown", []string{"fetchh"}, exitUsage, "", `unknown command "fetchh"`},
		{"fetch -h", []string{"fetch", "-h"}, exitOK, "-concurrency", ""},
		{"demo -h", []string{"demo", "-h"}, exitOK, "polite demo", ""},
		{"key -h", []string{"key", "-h"}, exitOK, "-host", ""},
		{"demo extra", []string{"demo", "now"}, exitUsage, "", `unexpected argument "now"`},
		{"-version", []string{"-version"}, exitOK, "polite (devel)", ""},
		{"fetch -h says the exit codes", []string{"fetch", "-h"}, exitOK, "143 for SIGTERM", ""},
		{"fetch -h says which limit covers what", []string{"fetch", "-h"}, exitOK, "-max-wait bounds how long a URL waits", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := runPolite(t, "", c.args...)
			assert.Equal(t, c.code, o.code, "stderr: %s", o.stderr)
			assert.Contains(t, o.stdout, c.out)
			assert.Contains(t, o.stderr, c.err)
		})
	}
}

// serveLoopback serves h on every loopback address (127.0.0.1, 127.0.0.2,
// ...: one domain key each) until the test ends, and returns its port.
func serveLoopback(t *testing.T, h http.Handler) int {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	require.NoError(t, err)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return ln.Addr().(*net.TCPAddr).Port
}
