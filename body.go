package polite

import (
	"io"
	"net/http"
	"sync/atomic"

	"github.com/polite-go/polite/internal/ticket"
)

// trackedBody ends its request's flight when it is closed, once. It
// holds no pointer it changes, so that closing it costs no write barrier.
type trackedBody struct {
	io.ReadCloser
	done atomic.Bool
	d    *domain
	p    *pace
	held claims
}

func (b *trackedBody) Close() error {
	err := b.ReadCloser.Close()
	if b.done.CompareAndSwap(false, true) {
		b.d.finish(b.p)
		b.held.end()
	}
	return err
}

// ticketedBody is a trackedBody whose request carries a ticket, which
// ends with the flight.
type ticketedBody struct {
	trackedBody
	tk *ticket.Ticket
}

func (b *ticketedBody) Close() error {
	err := b.trackedBody.Close()
	b.tk.Done() // once only: a Ticket calls its function the first time
	return err
}

// trackedReadWriteBody keeps the io.Writer of a 101 Switching Protocols
// body, which its tracked body closes.
type trackedReadWriteBody struct {
	io.ReadCloser
	w io.Writer
}

func (b trackedReadWriteBody) Write(p []byte) (int, error) { return b.w.Write(p) }

// track wraps body so that closing it ends the flight of its request to
// d, in the scopes it holds, and tk; a missing or empty body ends it at
// once.
func track(d *domain, p *pace, tk *ticket.Ticket, held claims, body io.ReadCloser) io.ReadCloser {
	if body == nil || body == http.NoBody {
		d.finish(p)
		held.end()
		tk.Done()
		return body
	}
	var tracked io.ReadCloser
	if tk == nil {
		tracked = &trackedBody{ReadCloser: body, d: d, p: p, held: held}
	} else {
		tracked = &ticketedBody{trackedBody: trackedBody{ReadCloser: body, d: d, p: p, held: held}, tk: tk}
	}
	if w, ok := body.(io.ReadWriteCloser); ok {
		return trackedReadWriteBody{tracked, w}
	}
	return tracked
}
