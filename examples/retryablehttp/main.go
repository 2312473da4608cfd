package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync/atomic"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run fetches the URLs that args name, writing a line per URL to stdout,
// and returns the exit code: 0 when every URL was fetched, 1 when some
// failed, 2 for bad usage.
func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("retry-polite", flag.ContinueOnError)
	flags.SetOutput(stderr)
	rate := flags.Float64("rate", 1, "requests per second per domain")
	burst := flags.Int("burst", 1, "burst per domain")
	retries := flags.Int("retries", 4, "retries per URL after the first attempt")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: retry-polite [-rate R] [-burst B] [-retries N] URL...")
		return 2
	}
	t, err := polite.NewTransport(nil, polite.WithDefault(config.Limit{RequestsPerSecond: *rate, Burst: *burst}))
	if err != nil {
		fmt.Fprintf(stderr, "retry-polite: %v\n", err)
		return 2
	}
	client := newClient(t, *retries)
	var attempts atomic.Int64
	client.RequestLogHook = func(retryablehttp.Logger, *http.Request, int) { attempts.Add(1) }

	code := 0
	for _, u := range flags.Args() {
		attempts.Store(0)
		resp, err := client.Get(u)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", u, err)
			code = 1
			continue
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", u, err)
			code = 1
			continue
		}
		fmt.Fprintf(stdout, "%s %s after %d attempts\n", resp.Status, u, attempts.Load())
	}
	return code
}
