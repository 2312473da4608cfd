package polite

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/polite-go/polite/internal/ticket"
)

// trackedBody ends its request's flight when it is read to its end or
// closed, whichever comes first, once, as net/http returns a connection to
// its pool then. It holds no pointer it changes, so that ending the flight
// costs no write barrier.
type trackedBody struct {
	io.ReadCloser
	done   atomic.Bool
	d      *domain
	tk     *ticket.Ticket     // nil if the request carries none
	cancel context.CancelFunc // ends WithTimeout's context; nil without it
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.end()
	}
	return n, err
}

func (b *trackedBody) Close() error {
	err := b.ReadCloser.Close()
	b.end()
	return err
}

func (b *trackedBody) end() {
	if b.done.CompareAndSwap(false, true) {
		endFlight(b.d, b.tk, b.cancel)
	}
}

// endFlight ends the flight of a request to d: its place and stats, its
// ticket and its WithTimeout context.
func endFlight(d *domain, tk *ticket.Ticket, cancel context.CancelFunc) {
	d.finish()
	tk.Done() // once only: a Ticket calls its function the first time
	if cancel != nil {
		cancel()
	}
}

// trackedReadWriteBody keeps the io.Writer of a 101 Switching Protocols
// body, which its tracked body closes.
type trackedReadWriteBody struct {
	io.ReadCloser
	w io.Writer
}

func (b trackedReadWriteBody) Write(p []byte) (int, error) { return b.w.Write(p) }

// track wraps body so that reading it to its end or closing it ends the
// flight of its request to d, with tk and cancel; a missing or empty body
// ends it at once.
func track(d *domain, tk *ticket.Ticket, cancel context.CancelFunc, body io.ReadCloser) io.ReadCloser {
	if body == nil || body == http.NoBody {
		endFlight(d, tk, cancel)
		return body
	}
	tracked := &trackedBody{ReadCloser: body, d: d, tk: tk, cancel: cancel}
	if w, ok := body.(io.ReadWriteCloser); ok {
		return trackedReadWriteBody{tracked, w}
	}
	return tracked
}
