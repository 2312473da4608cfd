package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/stretchr/testify/assert"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

// busySite answers 500 to the first failures requests, then 200.
func busySite(t *testing.T, failures int64) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) <= failures {
			http.Error(w, "busy", http.StatusInternalServerError)
		}
	}))
	t.Cleanup(site.Close)
	return site, &hits
}

func TestRun(t *testing.T) {
	site, hits := busySite(t, 2)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"retried until it succeeds", []string{"-rate", "20", site.URL + "/a"}, 0, "200 OK " + site.URL + "/a after 3 attempts\n", ""},
		{"no URL", nil, 2, "", "usage: retry-polite"},
		{"bad flag", []string{"-rate", "fast", site.URL}, 2, "", "invalid value"},
		{"bad limit", []string{"-rate", "-1", site.URL}, 2, "", "retry-polite: "},
		{"bad URL", []string{"http://[::1/"}, 1, "", "http://[::1/: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			assert.Equal(t, tt.code, code, "stderr: %s", stderr.String())
			assert.Equal(t, tt.stdout, stdout.String())
			assert.Contains(t, stderr.String(), tt.stderr)
		})
	}
	assert.Equal(t, int64(3), hits.Load())
}

func TestRunGivesUp(t *testing.T) {
	site, hits := busySite(t, 100)
	var stdout, stderr bytes.Buffer

	code := run([]string{"-rate", "20", "-retries", "1", site.URL}, &stdout, &stderr)

	assert.Equal(t, 1, code)
	assert.Empty(t, stdout.String())
	assert.Contains(t, stderr.String(), "giving up after 2 attempt(s)")
	assert.Equal(t, int64(2), hits.Load())
}

// Put the Transport under retryablehttp with newClient: every attempt is
// paced, and what polite refused is not retried.
func Example() {
	var hits atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusInternalServerError)
		}
	}))
	defer site.Close()
	transport, err := polite.NewTransport(nil, polite.WithDefault(config.Limit{MinDelay: 200 * time.Millisecond}))
	if err != nil {
		log.Fatal(err)
	}

	// Each attempt waits for its turn in the Transport; what the Transport
	// refused is not retried.
	client := newClient(transport, 4)

	resp, err := client.Get(site.URL)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Status, "after", hits.Load(), "attempts")

	// A deadline polite cannot meet fails at once, and is not retried.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, site.URL, nil)
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.Do(req)
	var we *polite.WaitError
	fmt.Println(errors.Is(err, context.DeadlineExceeded), errors.As(err, &we), hits.Load(), "attempts")
	// Output:
	// 200 OK after 3 attempts
	// true true 3 attempts
}
