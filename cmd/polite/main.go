// Command polite fetches URLs without hammering anyone: every request goes
// through a polite.Transport, paced per domain.
//
// Usage:
//
//	polite fetch [flags] [URL...]   fetch URLs (arguments, or stdin one per line), paced per domain
//	polite demo                     watch polite pace a crawl of a local site (no network needed)
//	polite key [-host] URL...       print the domain key each URL is paced under
//
// Run "polite COMMAND -h" for a command's flags, and "polite -version" for
// its version. polite fetch exits 0 when every URL got a final answer
// (whatever its status), 1 when some did not or the state could not be
// written, 2 for bad usage, a bad configuration or a -state file another
// process is using, and 128 plus the signal's number when stopped by SIGINT
// (130), SIGTERM (143) or SIGHUP (129).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// Exit codes.
const (
	exitOK     = 0 // every URL got a response
	exitFailed = 1 // some URL got no response
	exitUsage  = 2 // bad usage or configuration, or a -state in use
	// A run stopped by a signal exits with 128 plus its number: see exitSignal.
)

// env is what a command reads and writes, so that tests can run it in
// process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

const usage = `polite fetches URLs without hammering anyone: requests are paced per domain.

Usage:
  polite fetch [flags] [URL...]   fetch URLs (arguments, or stdin one per line), paced per domain
  polite demo                     watch polite pace a crawl of a local site (no network needed)
  polite key [-host] URL...       print the domain key each URL is paced under

Run "polite COMMAND -h" for a command's flags, "polite -version" for the version.
`

func main() {
	ctx, stop := notifyStop(context.Background())
	code := run(ctx, os.Args[1:], env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr})
	stop()
	os.Exit(code)
}

// run runs the command named by args[0] and returns the exit code.
func run(ctx context.Context, args []string, e env) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "fetch":
		return runFetch(ctx, args[1:], e)
	case "demo":
		return runDemo(ctx, args[1:], e)
	case "key":
		return runKey(args[1:], e)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(e.stdout, usage)
		return exitOK
	case "version", "-version", "--version":
		fmt.Fprintln(e.stdout, "polite", version())
		return exitOK
	}
	fmt.Fprintf(e.stderr, "polite: unknown command %q (commands: fetch, demo, key; polite -h for help)\n", args[0])
	return exitUsage
}

// version is the module's version this command was built from, as the
// go command recorded it: "(devel)" for a build from a work tree.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Version == "" {
		return "(devel)"
	}
	return info.Main.Version
}
