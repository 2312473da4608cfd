package status

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClass(t *testing.T) {
	for class, want := range []string{"other", "1xx", "2xx", "3xx", "4xx", "5xx", "other"} {
		assert.Equal(t, want, Class(class))
	}
	assert.Equal(t, "other", Class(-1))
}
