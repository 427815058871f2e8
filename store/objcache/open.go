package objcache

import (
	"context"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// Open builds the client and says so in o.Logger's log (why: where the
// setting came from), with go-redis's own messages sent there too. A
// cache that does not answer yet is reported, not fatal: writes go on,
// and each one tries it again.
func Open(ctx context.Context, o Options, why string) (*Redis, error) {
	log := o.Logger
	redis.SetLogger(redisLog{log})
	oc, err := New(o)
	if err != nil {
		return nil, err
	}
	ev := log.Info().Str("scheme", o.Scheme).Str("host", o.Host).Int("port", o.Port).Str("path", o.Path).
		Int("database", o.Database).Str("example_key", oc.Key("options", "alloptions", false)).Str("why", why)
	pctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	if err := oc.Ping(pctx); err != nil {
		log.Warn().Err(err).Msg("Redis object cache does not answer; each write will try again")
	}
	ev.Msg("Redis object cache: stale keys deleted after each write")
	return oc, nil
}

// redisLog sends go-redis's own messages to the sidecar's log.
type redisLog struct{ l zerolog.Logger }

func (r redisLog) Printf(_ context.Context, format string, v ...any) { r.l.Warn().Msgf(format, v...) }
