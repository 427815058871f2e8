package config

import (
	"os"
	"path/filepath"
	"strings"
)

// dropinMark is in the header of the Redis Object Cache drop-in
// (rhubarbgroup/redis-cache), whose key names the sidecar writes.
const dropinMark = "Redis Object Cache"

// resolveObjectCache turns object-cache auto into redis or none: none when
// wp-config.php sets WP_REDIS_DISABLED; redis when the site's
// object-cache.php is the drop-in, or when a redis-* setting came from a
// flag or variable (a sidecar that cannot see wp-content); else none.
func (c *Config) resolveObjectCache(wpPath string, wc *WPConfig) {
	if c.ObjectCache != "auto" {
		return
	}
	mode, why := "none", "auto: no Redis object cache found"
	explicit := false
	for _, s := range settings {
		if strings.HasPrefix(s.name, "redis-") || s.name == "cache-key-salt" {
			switch src := c.sources[s.name].source; src {
			case "", SourceDefault, SourceWPConfig:
			default:
				explicit = explicit || strings.HasPrefix(src, "WPSIDECAR_") || src == SourceFlag
			}
		}
	}
	switch {
	case wc != nil && truthyConst(wc.Constants["WP_REDIS_DISABLED"]):
		why = "auto: WP_REDIS_DISABLED"
	case wc != nil && dropinAt(contentDir(wpPath, wc)):
		mode, why = "redis", "auto: "+filepath.Join(contentDir(wpPath, wc), "object-cache.php")
	case explicit:
		mode, why = "redis", "auto: redis settings given"
	}
	c.ObjectCache = mode
	c.sources["object-cache"] = resolved{mode, why}
}

// contentDir is WP_CONTENT_DIR, else wp-content beside wp-config.php.
func contentDir(wpPath string, wc *WPConfig) string {
	if d := wc.Constants["WP_CONTENT_DIR"]; d != "" {
		return d
	}
	return filepath.Join(filepath.Dir(wpPath), "wp-content")
}

func dropinAt(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "object-cache.php"))
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := f.Read(head)
	return strings.Contains(string(head[:n]), dropinMark)
}

func truthyConst(v string) bool { b, err := parseBool(v); return err == nil && b }
