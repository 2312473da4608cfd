package limiter

// handoffFreeLock is a mutex whose Unlock never gives the caller's
// processor to the goroutine it wakes, as sync.Mutex's does once it
// starves: the departure gate notes a request's departure under a key's
// lock, and the request must leave right after the Unlock, not behind
// every goroutine that is ready to run. Waiters queue in order.
type handoffFreeLock struct{ ch chan struct{} }

func newHandoffFreeLock() handoffFreeLock { return handoffFreeLock{ch: make(chan struct{}, 1)} }

// Lock takes the lock, waiting for it.
func (l handoffFreeLock) Lock() { l.ch <- struct{}{} }

// Unlock gives the lock back.
func (l handoffFreeLock) Unlock() { <-l.ch }
