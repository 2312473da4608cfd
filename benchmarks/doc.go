// Package benchmarks measures polite against a bare transport, a naive design over x/time/rate, and redis_rate.
package benchmarks
