package polite

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// withUserAgent returns req, or if it carries no User-Agent header and
// the Transport has one to send (WithUserAgent), a clone of req that
// carries it: the caller's request is never modified.
func (t *Transport) withUserAgent(req *http.Request) *http.Request {
	if t.userAgent == "" {
		return req
	}
	if _, ok := req.Header["User-Agent"]; ok {
		return req
	}
	req = req.Clone(req.Context())
	if req.Header == nil {
		req.Header = make(http.Header)
	}
	req.Header.Set("User-Agent", t.userAgent)
	return req
}

// checkUserAgent reports whether ua, given to WithUserAgent, can be sent.
func checkUserAgent(ua string) error {
	if !httpguts.ValidHeaderFieldValue(ua) {
		return fmt.Errorf("polite: WithUserAgent: %q is not a valid header value", ua)
	}
	return nil
}

// robotsAgent returns the product token that WithRobots's agent stands for:
// its part before the first '/' or space, or without an agent that of
// userAgent (WithUserAgent's string). It must be a non-empty HTTP token.
func robotsAgent(agent, userAgent string) (string, error) {
	from := strings.TrimSpace(agent)
	if from == "" {
		from = strings.TrimSpace(userAgent)
		if from == "" {
			return "", errors.New("polite: WithRobots: no agent, and no WithUserAgent to take its product token from")
		}
	}
	token := from
	if i := strings.IndexAny(token, "/ \t"); i >= 0 {
		token = token[:i]
	}
	if token == "" || strings.IndexFunc(token, func(r rune) bool { return !httpguts.IsTokenRune(r) }) >= 0 {
		return "", fmt.Errorf("polite: WithRobots: no product token in %q: want a name such as ExampleBot, or ExampleBot/2.1", from)
	}
	return token, nil
}
