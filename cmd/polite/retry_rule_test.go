package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/limiter"
)

func TestComeBack(t *testing.T) {
	urlError := func(err error) error { return &url.Error{Op: "Get", URL: "http://a.test/", Err: err} }
	for _, c := range []struct {
		name string
		r    result
		want bool
	}{
		{"200", result{status: 200}, false},
		{"404", result{status: 404}, false},
		{"429", result{status: 429}, true},
		{"500", result{status: 500}, true},
		{"501", result{status: 501}, false},
		{"502", result{status: 502}, true},
		{"503", result{status: 503}, true},
		{"504", result{status: 504}, true},
		{"refused", result{err: urlError(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED})}, true},
		{"reset", result{err: urlError(syscall.ECONNRESET)}, true},
		{"client timeout", result{err: urlError(context.DeadlineExceeded)}, true},
		{"body cut short", result{status: 200, err: fmt.Errorf("reading the body: %w", errors.New("unexpected EOF"))}, true},
		{"no such host", result{err: urlError(&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "nowhere.invalid", IsNotFound: true}})}, false},
		{"robots.txt unreachable", result{err: urlError(&polite.WaitError{Domain: "a.test", RetryAt: time.Now(), Err: fmt.Errorf("x: %w", polite.ErrRobotsUnreachable)})}, true},
		{"disallowed", result{err: urlError(fmt.Errorf("%w: GET http://a.test/", polite.ErrDisallowed))}, false},
		{"wait too long", result{err: urlError(&polite.WaitError{Domain: "a.test", Err: limiter.ErrWaitTooLong})}, false},
		{"stopped", result{err: urlError(context.Canceled)}, false},
		{"disk full", result{status: 200, saving: true, err: errors.New("saving the body: no space left on device")}, false},
	} {
		assert.Equal(t, c.want, comeBack(c.r), c.name)
	}
}
