package stats_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/polite-go/polite/stats"
)

func TestStatusClass(t *testing.T) {
	for class, want := range []string{"other", "1xx", "2xx", "3xx", "4xx", "5xx", "other"} {
		assert.Equal(t, want, stats.StatusClass(class))
	}
	assert.Equal(t, "other", stats.StatusClass(-1))
}
