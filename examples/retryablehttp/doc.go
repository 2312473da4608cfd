// Command retry-polite fetches URLs with github.com/hashicorp/go-retryablehttp,
// every attempt paced per domain by a polite Transport:
//
//	go run . -rate 2 -retries 4 https://example.com/a https://example.com/b
//
// It shows how to put the Transport under retryablehttp (see newClient):
// the Transport is the client's transport, so each attempt waits for its
// domain's turn; the Transport's RetryPolicy keeps retryablehttp from
// retrying what polite refused (a wait that failed, a path robots.txt
// disallows); and its Backoff leaves the wait after a 429 or 503 to the
// Transport, which honours Retry-After once, capped by WithMaxPause,
// rather than sleeping it a second time.
//
// This example is its own module, so that polite itself does not depend
// on retryablehttp.
package main
