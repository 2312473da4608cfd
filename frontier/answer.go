package frontier

import (
	"context"
	"errors"
	"net"
	"net/http"

	"github.com/polite-go/polite"
)

// Retryable reports whether an answer asks the client to come back later:
// status is the response's status (0 without one) and err the error
// without a response. It does for a 429 Too Many Requests and the 5xx
// answers of a struggling server (500, 502, 503, 504, and Cloudflare's
// 522 and 524, as Scrapy's RETRY_HTTP_CODES), a robots.txt that could not
// be fetched (polite.ErrRobotsUnreachable), and a transport failure: a
// refused or reset connection, a timeout, a body cut short. polite's own
// refusals (a wait cancelled or too long, a path robots.txt disallows, a
// domain given up), a cancelled request and a host name that does not
// resolve are final.
func Retryable(status int, err error) bool {
	switch {
	case err == nil:
		return retryStatus(status)
	case errors.Is(err, polite.ErrRobotsUnreachable):
		return true
	case errors.Is(err, polite.ErrDisallowed), errors.Is(err, polite.ErrGivenUp), errors.Is(err, context.Canceled):
		return false
	}
	var we *polite.WaitError
	var dns *net.DNSError
	return !errors.As(err, &we) && !(errors.As(err, &dns) && dns.IsNotFound)
}

// retryStatus reports whether a response's status asks the client to come
// back later (see Retryable).
func retryStatus(status int) bool {
	switch status {
	case http.StatusTooManyRequests,
		http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout,
		522, 524:
		return true
	}
	return false
}
