package frontier

// Option configures a Frontier; New applies them.
type Option func(*Frontier)

// WithRetries lets Done put a request whose answer asks to come back (see
// Retryable) back in line up to n times; by default, 0, every answer is
// final.
func WithRetries(n int) Option {
	return func(f *Frontier) { f.retries = max(n, 0) }
}

// KeepDuplicates makes Push take every request, even one whose URL was
// pushed before. By default a GET or HEAD request whose URL, normalised
// (see normalURL), was pushed before is dropped: Push returns
// ErrDuplicate and Duplicates counts it.
func KeepDuplicates() Option {
	return func(f *Frontier) { f.keepDuplicates = true }
}
