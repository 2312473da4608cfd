package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/polite-go/polite/internal/status"
	"github.com/polite-go/polite/stats"
)

// writeTable writes one row of stats per domain, in domain order. ERRORS
// counts the requests that got no response: failed, cancelled or
// disallowed by robots.txt.
func writeTable(w io.Writer, all map[string]stats.Snapshot) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DOMAIN\tREQUESTS\tDELAYED\tAVG WAIT\tTHROTTLED\tPAUSED\tERRORS\tRESPONSES")
	for _, domain := range slices.Sorted(maps.Keys(all)) {
		s := all[domain]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%s\t%d\t%s\n",
			domain, s.TotalRequests, s.DelayedRequests, seconds(s.AverageWaitTime),
			s.ThrottledResponses, seconds(s.PausedTime), s.FailedRequests+s.CanceledRequests+s.DisallowedRequests, classes(s))
	}
	return tw.Flush()
}

func seconds(d time.Duration) string {
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// classes lists the responses by status class, as "2xx:10 4xx:1".
func classes(s stats.Snapshot) string {
	var parts []string
	for class, n := range s.Responses {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s:%d", status.Class(class), n))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}
