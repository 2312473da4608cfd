package polite

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/polite-go/polite/internal/scopes"
	"github.com/polite-go/polite/internal/ticket"
)

// trackedBody ends its request's flight when it is read to its end or
// closed, whichever comes first, once, as net/http returns a connection to
// its pool then. Its domain, taken away as the flight ends, says whether
// it has ended, so that it fits a 32-byte block.
type trackedBody struct {
	io.ReadCloser
	d     atomic.Pointer[domain] // the flight's domain; nil once it ended
	extra *flightExtras
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
	if d := b.d.Swap(nil); d != nil {
		fl := flight{d: d, extra: b.extra}
		fl.end()
	}
}

// flight is what a request sent holds until its flight ends.
type flight struct {
	d     *domain
	extra *flightExtras // nil if the request holds nothing more
}

// flightExtras is what some requests hold besides their domain's place.
type flightExtras struct {
	claims scopes.Claims
	tk     *ticket.Ticket     // nil if the request carries none
	cancel context.CancelFunc // ends WithTimeout's context; nil without it
}

// end ends the flight: its places and stats, its claims on scopes, its
// ticket and its WithTimeout context.
func (fl *flight) end() {
	fl.d.finish()
	if x := fl.extra; x != nil {
		x.claims.End()
		x.tk.Done() // once only: a Ticket calls its function the first time
		if x.cancel != nil {
			x.cancel()
		}
	}
}

// trackedReadWriteBody keeps the io.Writer of a 101 Switching Protocols
// body, which its tracked body closes.
type trackedReadWriteBody struct {
	io.ReadCloser
	w io.Writer
}

func (b trackedReadWriteBody) Write(p []byte) (int, error) { return b.w.Write(p) }

// track wraps body so that reading it to its end or closing it ends fl;
// a missing or empty body ends it at once.
func track(fl flight, body io.ReadCloser) io.ReadCloser {
	if body == nil || body == http.NoBody {
		fl.end()
		return body
	}
	tracked := &trackedBody{ReadCloser: body, extra: fl.extra}
	tracked.d.Store(fl.d)
	if w, ok := body.(io.ReadWriteCloser); ok {
		return trackedReadWriteBody{tracked, w}
	}
	return tracked
}
