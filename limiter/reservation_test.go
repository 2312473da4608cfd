package limiter

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// TestReservationCopiesInWholeVectors checks the layout that keeps
// returning a Reservation cheap on 64-bit machines: a size that is a
// multiple of 16 bytes, so that copying it never reads a 16-byte piece
// across two earlier stores.
func TestReservationCopiesInWholeVectors(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the layout is tuned for 64-bit machines")
	}
	size := unsafe.Sizeof(Reservation{})
	assert.Zero(t, size%16, "a Reservation is %d bytes", size)
}
