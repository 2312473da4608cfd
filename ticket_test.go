package polite

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/internal/ticket"
)

// A ticket carried by a request ends when its flight does: on refusal, on
// a failed send, or when the response body is closed.
func TestTicketEndsWithTheRequestsFlight(t *testing.T) {
	body := roundTripper(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Body: io.NopCloser(&errReader{}), Request: r}, nil
	})
	failing := roundTripper(func(*http.Request) (*http.Response, error) { return nil, errors.New("down") })
	cases := []struct {
		name      string
		base      http.RoundTripper
		cancelled bool
		closeBody bool
	}{
		{"answered, body closed", body, false, true},
		{"base failed", failing, false, false},
		{"refused", body, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := NewTransport(c.base, WithDefault(config.Limit{RequestsPerSecond: 1, Burst: 1}))
			require.NoError(t, err)
			done := 0
			ctx, cancel := context.WithCancel(context.Background())
			if c.cancelled {
				cancel()
			} else {
				defer cancel()
			}
			req, _ := http.NewRequestWithContext(ticket.With(ctx, ticket.New(func() { done++ })), "GET", "http://example.com/", nil)
			resp, err := tr.RoundTrip(req)
			if resp != nil {
				assert.Equal(t, 0, done, "the flight goes on until the body is closed")
				resp.Body.Close()
			} else {
				require.Error(t, err)
			}
			assert.Equal(t, 1, done)
		})
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, io.EOF }
