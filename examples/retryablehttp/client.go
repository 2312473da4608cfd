package main

import (
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/polite-go/polite"
)

// newClient returns a retryablehttp client that makes up to retries more
// attempts of a request, each sent through t, which paces it. It does not
// retry what t refused, and leaves the wait after a 429 or 503 to t.
func newClient(t *polite.Transport, retries int) *retryablehttp.Client {
	client := retryablehttp.NewClient()
	client.Logger = nil
	client.HTTPClient.Transport = t
	client.RetryMax = retries
	// The Transport paces the attempts; retryablehttp's own wait between
	// them can stay short.
	client.RetryWaitMin, client.RetryWaitMax = 10*time.Millisecond, 100*time.Millisecond
	client.CheckRetry = t.RetryPolicy(retryablehttp.DefaultRetryPolicy)
	client.Backoff = t.Backoff(retryablehttp.DefaultBackoff)
	return client
}
