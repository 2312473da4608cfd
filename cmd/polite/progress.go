package main

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/polite-go/polite"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// display shows a crawl's progress. start is called once, then retry for
// each attempt to be made again and done once per target, from one
// goroutine, then finish.
type display interface {
	// start begins showing a crawl of total targets (-1: not known, as
	// for a list read as the crawl goes); status says the time left and
	// the domains requests wait for.
	start(total int, status func() string)
	// retry shows that r's URL goes again at at.
	retry(r result, at time.Time)
	done(r result)
	finish()
}

// newDisplay returns a live progress bar when w is a terminal, and plain
// log lines, one per URL, otherwise.
func newDisplay(w io.Writer, live bool) display {
	if live && isTerminal(w) {
		return &barDisplay{w: w}
	}
	return &logDisplay{w: w}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// logDisplay writes one line per URL, and one per retry, each with the
// time since the crawl began.
type logDisplay struct {
	w        io.Writer
	total, n int
	width    int // of total, in digits
}

func (d *logDisplay) start(total int, _ func() string) {
	d.total, d.width = total, len(strconv.Itoa(total))
}

func (d *logDisplay) retry(r result, at time.Time) {
	fmt.Fprintf(d.w, "[%s %s] %s\n", d.count(), formatSince(r.at), describeRetry(r, at))
}

func (d *logDisplay) done(r result) {
	d.n++
	fmt.Fprintf(d.w, "[%s %s] %s\n", d.count(), formatSince(r.at), describe(r))
}

// count is how many targets are done, out of how many if that is known.
func (d *logDisplay) count() string {
	if d.total < 0 {
		return strconv.Itoa(d.n)
	}
	return fmt.Sprintf("%*d/%d", d.width, d.n, d.total)
}

func (d *logDisplay) finish() {}

// formatSince writes a time since the crawl began, as 12.345s.
func formatSince(d time.Duration) string {
	return fmt.Sprintf("%.3fs", d.Seconds())
}

// describeRetry says in one line why r's URL goes again, and when.
func describeRetry(r result, at time.Time) string {
	why := fmt.Sprint(r.status)
	if r.err != nil {
		why = cause(r.err)
	}
	return fmt.Sprintf("RETRY %s: %s; attempt %d in %s", r.shown(), why, r.attempt+1, max(time.Until(at), 0).Round(100*time.Millisecond))
}

// describe says in one line what became of r.
func describe(r result) string {
	if r.err != nil {
		if r.url == nil { // a bad URL: the error names it
			return "FAIL " + oneLine(failure(r.target))
		}
		if r.status != 0 {
			return fmt.Sprintf("FAIL %d %s: %v", r.status, r.shown(), cause(r.err))
		}
		return fmt.Sprintf("FAIL %s: %v", r.shown(), cause(r.err))
	}
	s := fmt.Sprintf("%d %s (%s in %s", r.status, r.shown(), formatBytes(r.bytes), (r.elapsed - r.waited).Round(time.Millisecond))
	if r.waited >= 10*time.Millisecond {
		s += fmt.Sprintf(", after %s waiting", r.waited.Round(time.Millisecond))
	}
	s += ")"
	if r.file != "" {
		s += " -> " + r.file
	}
	return s
}

// cause is err on one line without the method and URL an http.Client's
// error starts with (the line names the URL already), and for a robots.txt
// that could not be fetched, without the time the retry line gives.
func cause(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var we *polite.WaitError
	if errors.Is(err, polite.ErrRobotsUnreachable) && errors.As(err, &we) {
		err = we.Err
	}
	return oneLine(err.Error())
}

func formatBytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1000/1000)
}

// barDisplay is a live progress bar: done/total, elapsed time and ETA, and
// the domains requests are waiting for. Failures are printed above it.
type barDisplay struct {
	w         io.Writer
	bar       *progressbar.ProgressBar
	total, n  int
	stop      chan struct{}
	stopped   chan struct{}
	closeOnce sync.Once
}

// refresh is how often the bar shows the waits anew.
const refresh = 200 * time.Millisecond

func (d *barDisplay) start(total int, status func() string) {
	d.total = total
	d.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(d.w),
		progressbar.OptionSetWidth(24),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(false), // it knows nothing of the pace: status says
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionShowDescriptionAtLineEnd(),
		progressbar.OptionSetDescription(status()),
		progressbar.OptionThrottle(refresh/2),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(d.w) }),
	)
	d.bar.RenderBlank()
	d.stop, d.stopped = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(d.stopped)
		tick := time.NewTicker(refresh)
		defer tick.Stop()
		for {
			select {
			case <-d.stop:
				return
			case <-tick.C:
				d.bar.Describe(status())
			}
		}
	}()
}

func (d *barDisplay) retry(r result, at time.Time) {
	progressbar.Bprintln(d.bar, describeRetry(r, at))
}

func (d *barDisplay) done(r result) {
	d.n++
	if r.err != nil {
		progressbar.Bprintln(d.bar, describe(r))
	}
	if d.n == d.total {
		d.stopTicker() // no redraw after the last one
		d.bar.Describe("done")
	}
	d.bar.Add(1)
}

func (d *barDisplay) stopTicker() {
	d.closeOnce.Do(func() {
		close(d.stop)
		<-d.stopped
	})
}

func (d *barDisplay) finish() {
	d.stopTicker()
	if !d.bar.IsFinished() {
		d.bar.Exit()
	}
}

// waitLine says which domains requests are waiting for, longest first.
func waitLine(waits []domainWait) string {
	const shown = 2
	if len(waits) == 0 {
		return "waiting: none"
	}
	var parts []string
	for i, w := range waits[:min(shown, len(waits))] {
		part := fmt.Sprintf("%s %.1fs", w.key, w.wait.Seconds())
		if i == 0 && w.paused != "" {
			part += " (paused: " + w.paused + ")"
		}
		parts = append(parts, part)
	}
	line := "waiting: " + strings.Join(parts, ", ")
	if more := len(waits) - shown; more > 0 {
		line += fmt.Sprintf(" +%d more", more)
	}
	return line
}
