package scopes

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestServerScopesStayBounded: past max servers, the least recently used
// that no request claims are forgotten; one a request claims is kept.
func TestServerScopesStayBounded(t *testing.T) {
	tb := New(nil, 3)
	claimed := tb.acquireServer("192.0.2.1")
	for i := range 10 {
		s := tb.acquireServer(fmt.Sprintf("198.51.100.%d", i))
		s.claimed.Add(-1)
	}
	assert.LessOrEqual(t, tb.servers.Len(), 3+1)
	assert.Same(t, claimed, tb.acquireServer("192.0.2.1"), "the server a request claims is kept")
}
