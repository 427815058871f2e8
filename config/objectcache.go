package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/wpsidecar/wpsidecar/config/wpconfig"
)

// dropinMark is in the header of the Redis Object Cache drop-in
// (rhubarbgroup/redis-cache), whose key names the sidecar writes.
const dropinMark = "Redis Object Cache"

// resolveObjectCache turns object-cache auto into redis or none: none when
// wp-config.php sets WP_REDIS_DISABLED; redis when the site's
// object-cache.php is the drop-in, or when a redis-* setting came from a
// flag or variable (a sidecar that cannot see wp-content); else none.
func (c *Config) resolveObjectCache(wpPath string, wc *wpconfig.Config) {
	if c.ObjectCache != "auto" {
		return
	}
	explicit := false
	for _, s := range settings {
		src := c.sources[s.name].source
		if (strings.HasPrefix(s.name, "redis-") || s.name == "cache-key-salt") && (src == SourceFlag || strings.HasPrefix(src, "WPSIDECAR_")) {
			explicit = true
		}
	}
	mode, why := "none", "auto: no Redis object cache found"
	switch {
	case wc != nil && truthyConst(wc.Constants["WP_REDIS_DISABLED"]):
		why = "auto: WP_REDIS_DISABLED"
	case wc != nil && isDropin(dropinPath(wpPath, wc)):
		mode, why = "redis", "auto: "+dropinPath(wpPath, wc)
	case explicit:
		mode, why = "redis", "auto: redis settings given"
	}
	c.ObjectCache = mode
	c.sources["object-cache"] = resolved{mode, why}
}

// dropinPath is object-cache.php in WP_CONTENT_DIR, else in wp-content
// beside wp-config.php.
func dropinPath(wpPath string, wc *wpconfig.Config) string {
	dir := wc.Constants["WP_CONTENT_DIR"]
	if dir == "" {
		dir = filepath.Join(filepath.Dir(wpPath), "wp-content")
	}
	return filepath.Join(dir, "object-cache.php")
}

func isDropin(path string) bool {
	// Not blocking on a pipe or device put in its place: start-up would
	// hang, deaf to SIGTERM.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	head := make([]byte, 4096)
	n, _ := f.Read(head)
	return strings.Contains(string(head[:n]), dropinMark)
}

func truthyConst(v string) bool { b, err := parseBool(v); return err == nil && b }
