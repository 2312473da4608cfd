package limiter

import "time"

// window is a quota's sliding window: the latest starts, oldest first, at
// most limit of them. It holds only the starts that can still matter, so
// it costs 8 bytes per start made in the last window, not per start the
// quota allows.
type window struct {
	limit  int
	span   time.Duration
	starts []int64 // starts[head:] are the window's starts
	head   int
	// What the latest push changed, for undo.
	evicted    int64
	wasFull    bool
	pushedLast bool
}

func (w *window) live() []int64 { return w.starts[w.head:] }

func (w *window) full() bool { return len(w.starts)-w.head >= w.limit }

func (w *window) oldest() int64 { return w.starts[w.head] }

// push adds start t, the latest, claimed at now. The starts no later
// than now minus span can no longer matter, even after an undo, and are
// dropped.
func (w *window) push(t, now int64, span time.Duration) {
	for w.head < len(w.starts) && after(w.starts[w.head], span) <= now {
		w.head++
	}
	w.pushedLast = true
	w.wasFull = w.full()
	if w.wasFull {
		w.evicted = w.starts[w.head]
		w.head++
	}
	if w.head > 0 && w.head >= len(w.starts)/2 {
		n := copy(w.starts, w.starts[w.head:])
		w.starts, w.head = w.starts[:n], 0
	}
	w.starts = append(w.starts, t)
}

// pop undoes the latest push, also after removes: the latest start is
// still the newest, and the one it evicted goes back before the oldest.
func (w *window) pop() {
	if !w.pushedLast {
		return
	}
	w.pushedLast = false
	w.starts = w.starts[:len(w.starts)-1]
	if w.wasFull {
		w.insertOldest(w.evicted)
	}
}

func (w *window) insertOldest(t int64) {
	if w.head > 0 {
		w.head--
		w.starts[w.head] = t
		return
	}
	w.starts = append(w.starts, 0)
	copy(w.starts[1:], w.starts)
	w.starts[0] = t
}

// remove deletes one start equal to t, keeping the others in order.
func (w *window) remove(t int64) {
	live := w.live()
	for j := len(live) - 1; j >= 0; j-- {
		if live[j] == t {
			copy(live[j:], live[j+1:])
			w.starts = w.starts[:len(w.starts)-1]
			return
		}
	}
}

// move turns one start at at into a later one at to, keeping the starts
// in order.
func (w *window) move(at, to int64) {
	live := w.live()
	j := len(live) - 1
	for j >= 0 && live[j] != at {
		j--
	}
	if j < 0 {
		return
	}
	for j+1 < len(live) && live[j+1] < to {
		live[j] = live[j+1]
		j++
	}
	live[j] = to
}
