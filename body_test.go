package polite

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/internal/ticket"
)

// rwBody is a 101 Switching Protocols body: readable and writable.
type rwBody struct {
	written []byte
	closes  int
}

func (b *rwBody) Read([]byte) (int, error) { return 0, io.EOF }
func (b *rwBody) Write(p []byte) (int, error) {
	b.written = append(b.written, p...)
	return len(p), nil
}
func (b *rwBody) Close() error { b.closes++; return nil }

// A 101 response's body stays writable through the Transport, as
// net/http's is, and closing it ends the flight once, ticket or not.
func TestSwitchingProtocolsBodyStaysWritable(t *testing.T) {
	for _, withTicket := range []bool{false, true} {
		t.Run(map[bool]string{false: "no ticket", true: "ticket"}[withTicket], func(t *testing.T) {
			raw := &rwBody{}
			base := roundTripper(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: http.StatusSwitchingProtocols, Body: raw, Request: r}, nil
			})
			tr, err := NewTransport(base, WithDefault(config.Limit{RequestsPerSecond: 1000, Burst: 10}))
			require.NoError(t, err)
			ctx, done := context.Background(), 0
			if withTicket {
				ctx = ticket.With(ctx, ticket.New(func() { done++ }))
			}
			req, _ := http.NewRequestWithContext(ctx, "GET", "http://example.com/", nil)
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			w, ok := resp.Body.(io.ReadWriteCloser)
			require.True(t, ok, "a 101 body must stay an io.ReadWriteCloser")
			_, err = w.Write([]byte("ping"))
			require.NoError(t, err)
			assert.Equal(t, "ping", string(raw.written))
			st, _ := tr.Stats("example.com")
			assert.Equal(t, int64(1), st.InFlight)
			require.NoError(t, w.Close())
			require.NoError(t, w.Close())
			st, _ = tr.Stats("example.com")
			assert.Equal(t, int64(0), st.InFlight, "closed twice, ended once")
			assert.Equal(t, 2, raw.closes)
			if withTicket {
				assert.Equal(t, 1, done)
			}
		})
	}
}
