package polite

import (
	"io"
	"net/http"
	"sync/atomic"

	"github.com/polite-go/polite/internal/ticket"
	"github.com/polite-go/polite/limiter"
)

// flight is one request on its way: its turn, then its response's body,
// which ends the flight when it is closed, once. It is the one allocation
// the Transport makes per request: the turn must not escape on its own
// through the Limiter interface.
type flight struct {
	req limiter.Request
	res limiter.Reservation
	trackedBody
}

// trackedBody ends its request's flight when it is closed, once.
type trackedBody struct {
	io.ReadCloser
	done atomic.Bool
	d    *domain
	tk   *ticket.Ticket // the request's, if it carries one
}

func (b *trackedBody) Close() error {
	err := b.ReadCloser.Close()
	if b.done.CompareAndSwap(false, true) {
		b.d.finish()
		b.tk.Done()
	}
	return err
}

// trackedReadWriteBody keeps the io.Writer of a 101 Switching Protocols body.
type trackedReadWriteBody struct {
	*trackedBody
	w io.Writer
}

func (b trackedReadWriteBody) Write(p []byte) (int, error) { return b.w.Write(p) }

// track wraps body in f so that closing it ends the request's flight; a
// missing or empty body ends it at once.
func (f *flight) track(body io.ReadCloser) io.ReadCloser {
	if body == nil || body == http.NoBody {
		f.d.finish()
		f.tk.Done()
		return body
	}
	f.ReadCloser = body
	if w, ok := body.(io.ReadWriteCloser); ok {
		return trackedReadWriteBody{&f.trackedBody, w}
	}
	return &f.trackedBody
}
