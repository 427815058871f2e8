package site

import (
	"context"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar/config"
	"github.com/wpsidecar/wpsidecar/objcache"
)

// OpenObjectCache connects to the site's Redis object cache. A cache that
// does not answer yet is reported, not fatal: writes go on, and each one
// tries it again.
func OpenObjectCache(ctx context.Context, cfg *config.Config, logger zerolog.Logger) (*objcache.Redis, error) {
	log := logger.With().Str("component", "objcache").Logger()
	redis.SetLogger(redisLog{log})
	r := cfg.Redis
	oc, err := objcache.New(objcache.Options{
		Scheme: r.Scheme, Host: r.Host, Port: r.Port, Path: r.Path, Username: r.Username, Password: r.Password,
		Database: r.Database, Timeout: r.Timeout, Salt: r.Salt(), TablePrefix: cfg.TablePrefix, Multisite: cfg.Multisite,
		Logger: log,
	})
	if err != nil {
		return nil, err
	}
	ev := log.Info().Str("scheme", r.Scheme).Str("host", r.Host).Int("port", r.Port).Str("path", r.Path).
		Int("database", r.Database).Str("example_key", oc.Key("options", "alloptions", false)).Str("why", cfg.Source("object-cache"))
	pctx, cancel := context.WithTimeout(ctx, r.Timeout)
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
