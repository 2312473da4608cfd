// Package heaptest measures what the heap holds, for tests.
package heaptest

import (
	"runtime"
	"time"
)

// Held returns how many more bytes the heap holds after f than before it,
// each measured by Live.
func Held(f func()) int64 {
	before := Live()
	f()
	return int64(Live()) - int64(before)
}

// Live returns the bytes in use on the heap once a collection frees no
// more. What an earlier test left to a finalizer goes only at the
// collection after the finalizer ran: measured after a single collection,
// it could go while f runs and hide what f keeps.
func Live() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	for {
		last := ms.HeapAlloc
		time.Sleep(time.Millisecond) // for the finalizers to run
		runtime.GC()
		runtime.ReadMemStats(&ms)
		if ms.HeapAlloc >= last {
			return ms.HeapAlloc
		}
	}
}
