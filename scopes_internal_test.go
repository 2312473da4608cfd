package polite

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestServerScopesStayBounded: past WithMaxDomains servers, the least
// recently used that no request holds are forgotten; one a request holds
// is kept.
func TestServerScopesStayBounded(t *testing.T) {
	sc := newScopes(&options{maxDomains: 3})
	held := sc.acquireServer("192.0.2.1")
	for i := range 10 {
		s := sc.acquireServer(fmt.Sprintf("198.51.100.%d", i))
		s.held.Add(-1)
	}
	assert.LessOrEqual(t, sc.servers.Len(), 3+1)
	assert.Same(t, held, sc.acquireServer("192.0.2.1"), "the server a request holds is kept")
}
