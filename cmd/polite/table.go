package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/polite-go/polite/stats"
)

// domainRow is what the table and the JSON output say of one domain: the
// Transport's stats, and what the crawl saw.
type domainRow struct {
	stats.Snapshot
	// Rate is the pace its requests went at, per second; 0 with fewer than
	// two requests.
	Rate float64
	// QueueWait is the time its URLs waited in the frontier, for their
	// turns or for a free worker, summed over the URLs, as the Transport
	// counted it (Snapshot.QueuedTime); its own wait is
	// Snapshot.TotalWaitTime.
	QueueWait time.Duration
	// PausedInRun is the part of Snapshot.PausedTime within the run: a
	// pause that lasts past the end counts until the end.
	PausedInRun time.Duration
	// Retries counts the URLs put back to come again.
	Retries int
}

// domainRows joins the Transport's stats and the crawl's figures, for a
// run of run ending at end, in domain order (see compareDomains).
func domainRows(all map[string]stats.Snapshot, figs *figures, run time.Duration, end time.Time) []domainRow {
	rows := make([]domainRow, 0, len(all))
	for domain, s := range all {
		f := figs.get(domain)
		paused := s.PausedTime
		if s.PauseReason != "crawl-delay" && s.PauseReason != "adaptive" && s.PausedUntil.After(end) {
			paused -= s.PausedUntil.Sub(end) // the part still to come
		}
		rows = append(rows, domainRow{Snapshot: s, Rate: f.rate(), QueueWait: s.QueuedTime,
			PausedInRun: min(max(paused, 0), run), Retries: f.retries})
	}
	slices.SortFunc(rows, func(a, b domainRow) int { return compareDomains(a.Domain, b.Domain) })
	return rows
}

// compareDomains orders domain keys: IP addresses first, as addresses
// (127.0.0.2 before 127.0.0.10), then names, as strings. A port, with
// -host, orders after the address.
func compareDomains(a, b string) int {
	addrA, portA, okA := parseAddr(a)
	addrB, portB, okB := parseAddr(b)
	switch {
	case okA && okB:
		if n := addrA.Compare(addrB); n != 0 {
			return n
		}
		return cmp.Compare(portA, portB)
	case okA:
		return -1
	case okB:
		return 1
	}
	return strings.Compare(a, b)
}

// parseAddr parses key as an IP address, with or without a port.
func parseAddr(key string) (netip.Addr, string, bool) {
	if addr, err := netip.ParseAddr(key); err == nil {
		return addr, "", true
	}
	host, port, err := net.SplitHostPort(key)
	if err != nil {
		return netip.Addr{}, "", false
	}
	addr, err := netip.ParseAddr(host)
	return addr, port, err == nil
}

// writeTable writes one row per domain, then a line that says what QUEUED
// sums. REQUESTS counts the requests sent, ROBOTS the robots.txt fetches
// apart; RATE is the pace they went at; QUEUED is the time URLs waited in
// the frontier, summed over the URLs (so that it can exceed the run),
// WAITED the time requests waited in the Transport; PAUSED the time the server
// paused the domain within the run; ERRORS the requests that got no
// response: failed, cancelled or refused (robots.txt, a domain given up).
// RESPONSES ends with "given up" for a domain given up.
func writeTable(w io.Writer, rows []domainRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DOMAIN\tREQUESTS\tRATE\tQUEUED\tWAITED\tPAUSED\tRETRIES\tROBOTS\tERRORS\tRESPONSES")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n",
			r.Domain, r.TotalRequests, formatRate(r.Rate), seconds(r.QueueWait), seconds(r.TotalWaitTime),
			seconds(r.PausedInRun), r.Retries, r.RobotsRequests,
			r.FailedRequests+r.CanceledRequests+r.DisallowedRequests+r.GivenUpRequests, classes(r.Snapshot))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, queuedLegend)
	return err
}

// queuedLegend says, under the table, what QUEUED sums.
const queuedLegend = "QUEUED sums the time each URL waited in line for its domain's turn, over the domain's URLs; WAITED is the time requests waited in the Transport."

func formatRate(perSecond float64) string {
	if perSecond == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f/s", perSecond)
}

func seconds(d time.Duration) string {
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// classes lists the responses by status class, as "2xx:10 4xx:1".
func classes(s stats.Snapshot) string {
	var parts []string
	for class, n := range s.Responses {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s:%d", stats.StatusClass(class), n))
		}
	}
	if s.GivenUp {
		parts = append(parts, "given up")
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// MarshalJSON writes the row as the Snapshot's JSON object with the
// crawl's figures added: rate_per_second, queue_wait_ms,
// paused_in_run_ms and retries.
func (r domainRow) MarshalJSON() ([]byte, error) {
	data, err := json.Marshal(r.Snapshot)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	for name, v := range map[string]any{
		"rate_per_second":  r.Rate,
		"queue_wait_ms":    milliseconds(r.QueueWait),
		"paused_in_run_ms": milliseconds(r.PausedInRun),
		"retries":          r.Retries,
	} {
		if fields[name], err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	return json.Marshal(fields)
}

func milliseconds(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}

// rowsByDomain keys the rows by domain, for the JSON output.
func rowsByDomain(rows []domainRow) map[string]domainRow {
	out := make(map[string]domainRow, len(rows))
	for _, r := range rows {
		out[r.Domain] = r
	}
	return out
}
