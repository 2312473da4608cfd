package ticket

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTicketCallsDoneOnce(t *testing.T) {
	calls := 0
	tk := New(func() { calls++ })
	ctx := With(context.Background(), tk)
	From(ctx).Done()
	From(ctx).Done()
	assert.Equal(t, 1, calls)
	assert.Nil(t, From(context.Background()))
	From(context.Background()).Done() // a nil Ticket does nothing
}
