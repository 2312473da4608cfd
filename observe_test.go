package polite

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTransportFailure sorts the errors a real http.Transport returns: the
// server's failures count, the caller's and the name's do not; the
// deadline of the request's context counts once the server has had the
// request for answerTime.
func TestTransportFailure(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer hanging.Close()
	plain := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer plain.Close()
	tlsServer := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer tlsServer.Close()

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refusedURL := "http://" + closed.Addr().String() + "/"
	closed.Close()

	hangUp := listen(t, func(c net.Conn) { c.Close() })
	reset := listen(t, func(c net.Conn) {
		c.(*net.TCPConn).SetLinger(0)
		buf := make([]byte, 1024)
		c.Read(buf)
		c.Close()
	})

	tests := []struct {
		name    string
		url     string
		base    *http.Transport
		ctx     func() (context.Context, context.CancelFunc)
		failure bool
	}{
		{"refused", refusedURL, nil, nil, true},
		{"closed without an answer", "http://" + hangUp + "/", nil, nil, true},
		{"reset", "http://" + reset + "/", nil, nil, true},
		{"deadline while the server hangs", hanging.URL, nil, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, true},
		{"response header timeout", hanging.URL, &http.Transport{ResponseHeaderTimeout: 50 * time.Millisecond}, nil, true},
		{"TLS to a plain server", "https://" + plain.Listener.Addr().String() + "/", nil, nil, true},
		{"untrusted certificate", tlsServer.URL, nil, nil, true},
		{"cancelled while the server hangs", hanging.URL, nil, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			return ctx, cancel
		}, false},
		{"no such scheme", "gopher://example.com/", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()
			base := tt.base
			if base == nil {
				base = &http.Transport{}
			}
			defer base.CloseIdleConnections()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, tt.url, nil)
			require.NoError(t, err)
			resp, err := base.RoundTrip(req)
			if resp != nil {
				resp.Body.Close()
			}
			require.Error(t, err)
			assert.Equal(t, tt.failure, transportFailure(ctx, err, answerTime), "%v", err)
			if ctx.Err() != nil {
				assert.False(t, transportFailure(ctx, err, answerTime-time.Millisecond), "the caller's deadline, or its cancel, came too soon to blame the server: %v", err)
			}
		})
	}

	notFound := &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "nowhere.invalid", IsNotFound: true}}
	assert.False(t, transportFailure(context.Background(), notFound, answerTime), "a name that does not resolve is not the server's doing")
	dnsTimeout := &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "i/o timeout", Name: "slow.example", IsTimeout: true}}
	assert.True(t, transportFailure(context.Background(), dnsTimeout, 0))
	assert.False(t, transportFailure(context.Background(), errors.New("reset"), answerTime), "an error that says nothing of the network")
}

// listen serves each connection to a loopback listener with handle, and
// returns its address.
func listen(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return l.Addr().String()
}
