// Package redistest starts real Redis processes for tests: a
// redis-server (Start), a Cluster of three primaries with a replica each
// (StartCluster) and a primary with a replica watched by three Sentinels
// (StartSentinel), on free loopback ports, killed when the test ends; a
// test may kill one sooner to see an outage. It runs the redis-server and
// redis-cli it finds on PATH: without them the test is skipped, saying
// so, or fails when POLITE_REQUIRE_REDIS=1.
//
// polite's own modules test against it, and so can a crawler that shares
// its pace through redislimiter.
package redistest

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// RequireEnv names the variable that, set to 1, makes a missing
// redis-server a failure instead of a skip; .ci/run sets it after
// installing redis-server.
const RequireEnv = "POLITE_REQUIRE_REDIS"

// Server is a redis-server that a test started on a free loopback
// port; it is killed when the test ends. Its methods are safe for
// concurrent use.
type Server struct {
	tb    testing.TB
	path  string
	port  int
	head  []string // arguments before the port: a config file, --sentinel
	extra []string

	mu  sync.Mutex
	cmd *exec.Cmd
	out *bytes.Buffer
}

// Start starts a redis-server from PATH without persistence, with
// extra arguments. Without redis-server on PATH the test is skipped, loudly,
// or fails when POLITE_REQUIRE_REDIS=1.
func Start(tb testing.TB, extra ...string) *Server {
	tb.Helper()
	return start(tb, nil, extra)
}

// start starts a redis-server with head before its port and extra after
// the options Start sets.
func start(tb testing.TB, head, extra []string) *Server {
	tb.Helper()
	s := &Server{tb: tb, path: lookPath(tb, "redis-server"), head: head, extra: extra}
	tb.Cleanup(s.Kill)
	var lastErr error
	for range 3 {
		s.port = freePort(tb)
		if lastErr = s.start(); lastErr == nil {
			return s
		}
	}
	tb.Fatalf("redis-server did not start: %v", lastErr)
	return nil
}

// lookPath returns the path of the named tool. Without it on PATH the
// test is skipped, loudly, or fails when POLITE_REQUIRE_REDIS=1.
func lookPath(tb testing.TB, tool string) string {
	tb.Helper()
	path, err := exec.LookPath(tool)
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			tb.Fatalf("%s is not on PATH and %s=1: %v", tool, RequireEnv, err)
		}
		tb.Skipf("SKIPPED: %s is not on PATH (%v): tests against a real Redis did NOT run; install it, or set %s=1 to make this a failure", tool, err, RequireEnv)
	}
	return path
}

// freePort returns a loopback port nothing listens on now.
func freePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("no free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// start runs redis-server on s.port and waits until it answers.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	args := append(slices.Clone(s.head), "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.tb.TempDir())
	args = append(args, s.extra...)
	cmd := exec.Command(s.path, args...)
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		select {
		case err := <-exited:
			return fmt.Errorf("redis-server exited (%v): %s", err, out)
		default:
		}
		if ping(s.Addr()) == nil {
			s.cmd, s.out = cmd, out
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	return fmt.Errorf("redis-server did not answer on %s: %s", s.Addr(), out)
}

// Kill stops the server at once, as a crash would.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	for range 100 { // wait until the port is free
		conn, err := net.DialTimeout("tcp", s.Addr(), 50*time.Millisecond)
		if err != nil {
			break
		}
		conn.Close()
		time.Sleep(10 * time.Millisecond)
	}
	s.cmd = nil
}

// Port is the server's port.
func (s *Server) Port() int { return s.port }

// Restart starts the server again on the same port, empty.
func (s *Server) Restart() {
	s.tb.Helper()
	if err := s.start(); err != nil {
		s.tb.Fatalf("restarting redis-server: %v", err)
	}
}

// ping sends PING to the Redis at addr and expects PONG, speaking the
// protocol by hand so that this package, which the root module holds,
// needs no Redis client.
func ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(200 * time.Millisecond)); err != nil {
		return err
	}
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("redistest: PING answered %q", line)
	}
	return nil
}
