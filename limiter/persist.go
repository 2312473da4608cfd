package limiter

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/polite-go/polite/internal/feedback"
)

// persistInterval is how often a Memory that Persist made keeps its
// state in its file: a crash loses at most this much of what it promised.
const persistInterval = 5 * time.Second

// The state file's format and the version this build writes and reads.
const (
	stateFormat  = "polite limiter.Memory state"
	stateVersion = 1
)

type savedState struct {
	Format  string              `json:"format"`
	Version int                 `json:"version"`
	SavedAt time.Time           `json:"saved_at"`
	Keys    map[string]savedKey `json:"keys"`
}

// savedKey is a keyState with its times in Unix nanoseconds, 0 for none.
type savedKey struct {
	Bucket      savedBucket    `json:"bucket,omitzero"`
	Last        int64          `json:"last,omitempty"`
	PausedUntil int64          `json:"paused_until,omitempty"`
	PauseWhy    Reason         `json:"pause_reason,omitempty"`
	Starts      []int64        `json:"starts,omitempty"`
	SentBucket  savedBucket    `json:"sent_bucket,omitzero"`
	Sent        int64          `json:"sent,omitempty"`
	QuietAt     int64          `json:"quiet_at"`
	Feedback    feedback.Saved `json:"feedback,omitzero"`
}

type savedBucket struct {
	Tokens float64 `json:"tokens"`
	At     int64   `json:"at"`
}

// WriteTo writes the state of every key that has not fully recovered to
// w, in wall-clock time, so that ReadFrom restores it in another process
// to mean the same: every key's next turn, bucket, gaps, quota windows,
// pauses and what its server taught. It implements io.WriterTo.
func (m *Memory) WriteTo(w io.Writer) (int64, error) {
	now := time.Now()
	n := m.nanos(now)
	out := savedState{Format: stateFormat, Version: stateVersion, SavedAt: now.UTC(), Keys: map[string]savedKey{}}
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		for e := range sh.keys.All {
			if e.Value.quietAt > n {
				out.Keys[e.Key] = m.save(&e.Value)
			}
		}
		sh.mu.Unlock()
	}
	cw := &countingWriter{w: w}
	err := json.NewEncoder(cw).Encode(&out)
	return cw.n, err
}

// ReadFrom restores the keys that r, written by WriteTo, holds, replacing
// what m knows of them. A state written by another format or version, or
// damaged, is an error, and restores nothing. It implements io.ReaderFrom.
func (m *Memory) ReadFrom(r io.Reader) (int64, error) {
	cr := &countingReader{r: r}
	var in savedState
	dec := json.NewDecoder(bufio.NewReader(cr))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return cr.n, fmt.Errorf("limiter: reading state: %w", err)
	}
	switch {
	case in.Format != stateFormat:
		return cr.n, fmt.Errorf("limiter: reading state: not a limiter state (format %q)", in.Format)
	case in.Version != stateVersion:
		return cr.n, fmt.Errorf("limiter: reading state: version %d, and this build reads version %d", in.Version, stateVersion)
	}
	for key, saved := range in.Keys {
		st, err := m.restore(saved)
		if err != nil {
			return cr.n, fmt.Errorf("limiter: reading state of %q: %w", key, err)
		}
		m.replace(key, st)
	}
	return cr.n, nil
}

// replace makes st key's state. The turns handed out before are not st's:
// they give nothing back to it.
func (m *Memory) replace(key string, st *keyState) {
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e := sh.keys.Peek(key); e != nil {
		e.Value.dropped = true
		sh.keys.Remove(e)
	}
	sh.keys.Add(strings.Clone(key)).Value = *st
}

func (m *Memory) wall(n int64) int64 {
	if n == math.MinInt64 || n == math.MaxInt64 {
		return 0
	}
	return m.epoch.UnixNano() + n
}

func (m *Memory) local(wall int64) int64 {
	if wall == 0 {
		return math.MinInt64
	}
	return wall - m.epoch.UnixNano()
}

func (m *Memory) save(s *keyState) savedKey {
	k := savedKey{PauseWhy: s.pauseWhy, QuietAt: m.wall(s.quietAt), Last: m.wall(s.plan.last),
		Sent: m.wall(s.sent.last), PausedUntil: m.wall(s.pausedUntil),
		Bucket: m.saveBucket(s.plan.bucket), SentBucket: m.saveBucket(s.sent.bucket)}
	if s.fb != nil {
		k.Feedback = s.fb.Save()
	}
	for _, t := range s.starts {
		k.Starts = append(k.Starts, m.wall(t))
	}
	return k
}

func (m *Memory) saveBucket(b bucket) savedBucket {
	if b.at == none {
		return savedBucket{}
	}
	return savedBucket{b.tokens, m.wall(b.at)}
}

func (m *Memory) restoreBucket(b savedBucket) bucket {
	return bucket{tokens: b.Tokens, at: m.local(b.At)}
}

// restore makes the keyState that k holds, as it was saved: the rule the
// key is next used under fits it (see keyState.fit).
func (m *Memory) restore(k savedKey) (*keyState, error) {
	s := newKeyState()
	s.restored = true
	s.pauseWhy, s.quietAt = k.PauseWhy, m.local(k.QuietAt)
	if k.Feedback != (feedback.Saved{}) {
		s.taught().Restore(k.Feedback)
	}
	s.plan = schedule{bucket: m.restoreBucket(k.Bucket), last: m.local(k.Last)}
	s.sent = schedule{bucket: m.restoreBucket(k.SentBucket), last: m.local(k.Sent)}
	s.pausedUntil = m.local(k.PausedUntil)
	for _, t := range k.Starts {
		s.starts = append(s.starts, m.local(t))
	}
	slices.Sort(s.starts)
	if math.IsNaN(s.plan.bucket.tokens) || math.IsNaN(s.sent.bucket.tokens) {
		return nil, errors.New("a bucket holds no number of tokens")
	}
	return s, nil
}

// Persist keeps m's state in the file at path, so that a restarted
// process keeps every promise the last one made to servers. It first
// restores what the file holds, if it exists; a file it cannot read
// (damaged, or written by an incompatible build) is an error naming it,
// never a silent fresh start: remove the file to start afresh. It then
// writes the state every 5 seconds, atomically (a new file renamed over
// the old), and once more on Close; a crash loses at most those 5 seconds.
// Call it once, before m is used.
func (m *Memory) Persist(path string) error {
	if f, err := os.Open(path); err == nil {
		_, err = m.ReadFrom(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("limiter: state file %s: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("limiter: state file: %w", err)
	}
	if err := m.writeFile(path); err != nil {
		return err
	}
	p := &persister{path: path, stop: make(chan struct{})}
	m.persist = p
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		ticker := time.NewTicker(persistInterval)
		defer ticker.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-ticker.C:
				p.record(m.writeFile(path))
			}
		}
	}()
	return nil
}

// Close stops keeping m's state in its file, after writing it once more.
// It returns the first error writing the file met, if any. A Memory that
// Persist did not set up has nothing to close.
func (m *Memory) Close() error {
	p := m.persist
	if p == nil {
		return nil
	}
	p.once.Do(func() {
		close(p.stop)
		p.wg.Wait()
		p.record(m.writeFile(p.path))
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// persister is what Persist runs.
type persister struct {
	path string
	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
	mu   sync.Mutex
	err  error // the first write that failed
}

func (p *persister) record(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
}

// writeFile writes m's state to path atomically.
func (m *Memory) writeFile(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("limiter: state file: %w", err)
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriter(tmp)
	_, err = m.WriteTo(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("limiter: state file %s: %w", path, err)
	}
	return nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
