package polite

import (
	"io"
	"net/http"
	"sync/atomic"

	"github.com/polite-go/polite/internal/ticket"
)

// trackedBody ends its request's flight when it is closed, once.
type trackedBody struct {
	io.ReadCloser
	d  atomic.Pointer[domain] // nil once closed
	tk *ticket.Ticket         // the request's, if it carries one
}

func (b *trackedBody) Close() error {
	err := b.ReadCloser.Close()
	if d := b.d.Swap(nil); d != nil {
		d.finish()
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

// track wraps body so that closing it ends the flight of its request to
// d; a missing or empty body ends it at once.
func track(d *domain, tk *ticket.Ticket, body io.ReadCloser) io.ReadCloser {
	if body == nil || body == http.NoBody {
		d.finish()
		tk.Done()
		return body
	}
	tb := &trackedBody{ReadCloser: body, tk: tk}
	tb.d.Store(d)
	if w, ok := body.(io.ReadWriteCloser); ok {
		return trackedReadWriteBody{tb, w}
	}
	return tb
}
