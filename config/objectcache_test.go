package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// site writes a wp-config.php with extra PHP and, when dropin is not
// empty, a wp-content/object-cache.php holding it.
func site(t *testing.T, extra, dropin string) string {
	t.Helper()
	dir := t.TempDir()
	wp := filepath.Join(dir, "wp-config.php")
	if err := os.WriteFile(wp, []byte("<?php\n$table_prefix = 'wp_';\n"+extra+"\nrequire_once ABSPATH . 'wp-settings.php';\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if dropin != "" {
		os.Mkdir(filepath.Join(dir, "wp-content"), 0o755)
		if err := os.WriteFile(filepath.Join(dir, "wp-content", "object-cache.php"), []byte(dropin), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return wp
}

const rhubarbHeader = "<?php\n/**\n * Plugin Name: Redis Object Cache Drop-In\n */\n"

func TestLoad_ObjectCacheAuto(t *testing.T) {
	contentDir := t.TempDir()
	os.WriteFile(filepath.Join(contentDir, "object-cache.php"), []byte(rhubarbHeader), 0o644)
	cases := []struct {
		name     string
		wpConfig string // "" for none
		args     []string
		env      []string
		want     string
		source   string
	}{
		{"nothing", "", nil, nil, "none", "auto: no Redis object cache found"},
		{"no drop-in", site(t, "", ""), nil, nil, "none", "auto: no Redis object cache found"},
		{"another drop-in", site(t, "", "<?php /* Plugin Name: Memcached */"), nil, nil, "none", "auto: no Redis object cache found"},
		{"the drop-in", site(t, "", rhubarbHeader), nil, nil, "redis", "auto: "},
		{"WP_CONTENT_DIR", site(t, "define('WP_CONTENT_DIR', '"+contentDir+"');", ""), nil, nil, "redis", "auto: " + filepath.Join(contentDir, "object-cache.php")},
		{"WP_REDIS_DISABLED", site(t, "define('WP_REDIS_DISABLED', true);", rhubarbHeader), nil, nil, "none", "auto: WP_REDIS_DISABLED"},
		{"constants alone are not enough", site(t, "define('WP_REDIS_HOST', 'redis');", ""), nil, nil, "none", "auto: no Redis object cache found"},
		{"flag", "", []string{"--redis-host", "cache"}, nil, "redis", "auto: redis settings given"},
		{"variable", "", nil, []string{"WPSIDECAR_REDIS_PREFIX=x"}, "redis", "auto: redis settings given"},
		{"explicit none", site(t, "", rhubarbHeader), []string{"--object-cache", "none"}, nil, "none", "flag"},
		{"explicit redis", "", nil, []string{"WPSIDECAR_OBJECT_CACHE=redis"}, "redis", "WPSIDECAR_OBJECT_CACHE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"--upstream=http://php"}, c.args...)
			if c.wpConfig != "" {
				args = append(args, "--wp-config", c.wpConfig)
			}
			cfg := mustLoad(t, args, c.env...)
			if cfg.ObjectCache != c.want || !strings.HasPrefix(cfg.Source("object-cache"), c.source) {
				t.Errorf("object cache %q from %q, want %q from %q…", cfg.ObjectCache, cfg.Source("object-cache"), c.want, c.source)
			}
		})
	}
}

func TestLoad_RedisFromWPConfig(t *testing.T) {
	wp := site(t, `define('WP_REDIS_HOST', 'cache.internal');
define('WP_REDIS_PORT', 6380);
define('WP_REDIS_DATABASE', 3);
define('WP_REDIS_PASSWORD', 'pw');
define('WP_REDIS_TIMEOUT', 0.5);
define('WP_REDIS_PREFIX', 'site-a:');
define('WP_CACHE_KEY_SALT', 'ignored');`, rhubarbHeader)
	cfg := mustLoad(t, []string{"--upstream=http://php", "--wp-config", wp})
	r := cfg.Redis
	if cfg.ObjectCache != "redis" || r.Scheme != "tcp" || r.Host != "cache.internal" || r.Port != 6380 || r.Database != 3 || r.Password != "pw" ||
		r.Timeout != 500*time.Millisecond || r.Salt() != "site-a:" {
		t.Errorf("got %s %+v salt %q", cfg.ObjectCache, r, r.Salt())
	}

	cases := []struct {
		name, extra string
		env         []string
		want        string
	}{
		{"WP_CACHE_KEY_SALT stands in", `define('WP_CACHE_KEY_SALT', 'salty_');`, nil, "salty_"},
		{"an empty WP_REDIS_PREFIX still wins", `define('WP_REDIS_PREFIX', ''); define('WP_CACHE_KEY_SALT', 'salty_');`, nil, ""},
		{"WP_REDIS_PREFIX from the environment", `define('WP_CACHE_KEY_SALT', 'salty_');`, []string{"WP_REDIS_PREFIX=envsalt"}, "envsalt"},
		{"none", ``, nil, ""},
	}
	for _, c := range cases {
		cfg := mustLoad(t, []string{"--upstream=http://php", "--wp-config", site(t, c.extra, "")}, c.env...)
		if got := cfg.Redis.Salt(); got != c.want {
			t.Errorf("%s: salt %q, want %q", c.name, got, c.want)
		}
	}
	cfg = mustLoad(t, []string{"--upstream=http://php", "--redis-timeout", "250ms"})
	if cfg.Redis.Timeout != 250*time.Millisecond || cfg.Redis.Host != "127.0.0.1" || cfg.Redis.Port != 6379 {
		t.Errorf("%+v", cfg.Redis)
	}
}

func TestLoad_RedisProblems(t *testing.T) {
	_, err := load(t, []string{"--upstream=http://php", "--object-cache", "memcached", "--redis-scheme", "udp", "--redis-timeout", "-1", "--redis-port", "0"})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`object-cache: "memcached" from flag: not auto, redis or none`,
		`redis-scheme: "udp" from flag: not tcp, tls or unix`,
		`redis-timeout: "-1" from flag: must be positive and at most 3600 seconds`,
		`redis-port: "0" from flag: must be a whole number of at least 1`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	_, err = load(t, []string{"--upstream=http://php", "--object-cache", "redis", "--redis-scheme", "unix"})
	if err == nil || !strings.Contains(err.Error(), "redis-path: required when redis-scheme is unix") {
		t.Errorf("unix without a path: %v", err)
	}
}

// TestLoad_RedisFromConfigExtra: with the official image, the constants
// come from WORDPRESS_CONFIG_EXTRA, and the drop-in sits in the shared
// docroot beside wp-config.php.
func TestLoad_RedisFromConfigExtra(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("wpconfig/testdata/wp-config-docker.php")
	if err != nil {
		t.Fatal(err)
	}
	wp := filepath.Join(dir, "wp-config.php")
	os.WriteFile(wp, src, 0o644)
	os.Mkdir(filepath.Join(dir, "wp-content"), 0o755)
	os.WriteFile(filepath.Join(dir, "wp-content", "object-cache.php"), []byte(rhubarbHeader), 0o644)
	cfg := mustLoad(t, []string{"--upstream=http://php", "--wp-config", wp},
		"WORDPRESS_CONFIG_EXTRA=define('WP_REDIS_HOST', 'redis'); define('WP_REDIS_PREFIX', 'shop_');")
	if cfg.ObjectCache != "redis" || cfg.Redis.Host != "redis" || cfg.Redis.Salt() != "shop_" {
		t.Errorf("object cache %q host %q salt %q", cfg.ObjectCache, cfg.Redis.Host, cfg.Redis.Salt())
	}
}
