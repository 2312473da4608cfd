package polite

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestDomainUsedKeepsTheTimeToItsGrain checks that a domain notes when it
// was used to within usedGrain, so that a sweep finds the least recently
// used, while a busy domain's requests seldom write the time.
func TestDomainUsedKeepsTheTimeToItsGrain(t *testing.T) {
	var d domain
	t0 := time.Unix(1_700_000_000, 0)
	d.used(t0)
	assert.Equal(t, t0.UnixNano(), d.lastUsed.Load(), "the first use is noted")
	d.used(t0.Add(usedGrain / 2))
	assert.Equal(t, t0.UnixNano(), d.lastUsed.Load(), "a use within the grain is not written")
	d.used(t0.Add(usedGrain))
	assert.Equal(t, t0.Add(usedGrain).UnixNano(), d.lastUsed.Load(), "a use a grain later is")
}
