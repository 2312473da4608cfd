package main

import (
	"errors"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/polite-go/polite/limiter/redislimiter"
)

// sharedLimiter returns a Redis limiter for the Redis at rawURL; closing
// it closes its client too.
func sharedLimiter(rawURL string, logger *slog.Logger) (*redisLimiter, error) {
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	client := redis.NewClient(opt)
	lim, err := redislimiter.New(client, redislimiter.WithLogger(logger))
	if err != nil {
		client.Close()
		return nil, err
	}
	return &redisLimiter{Limiter: lim, client: client}, nil
}

// redisLimiter is a redislimiter.Limiter with the client it owns.
type redisLimiter struct {
	*redislimiter.Limiter
	client *redis.Client
}

func (l *redisLimiter) Close() error {
	return errors.Join(l.Limiter.Close(), l.client.Close())
}
