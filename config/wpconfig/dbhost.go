package wpconfig

import (
	"regexp"
	"strconv"
	"strings"
)

// DBHost is DB_HOST taken apart as WordPress's wpdb::parse_db_host does.
type DBHost struct {
	Host   string
	Port   int // 0 when none was given
	Socket string
	IPv6   bool
}

var (
	dbHostIPv6 = regexp.MustCompile(`^\[?([0-9a-fA-F:]+)(?:\]:(\d+))?`)
	dbHostIPv4 = regexp.MustCompile(`^([^:/]*)(?::(\d+))?`)
)

// ParseDBHost reads the forms WordPress accepts: "host", "host:port",
// "host:/path/to.sock", "host:port:/path/to.sock", "[::1]:3306", "::1".
// A port that is not all digits is ignored, as WordPress ignores it.
func ParseDBHost(s string) DBHost {
	var h DBHost
	if i := strings.Index(s, ":/"); i >= 0 {
		h.Socket, s = s[i+1:], s[:i]
	}
	re := dbHostIPv4
	if strings.Count(s, ":") > 1 {
		re, h.IPv6 = dbHostIPv6, true
	}
	m := re.FindStringSubmatch(s)
	if m == nil {
		return h
	}
	h.Host = m[1]
	if m[2] != "" {
		if p, err := strconv.Atoi(m[2]); err == nil && p > 0 {
			h.Port = p
		}
	}
	return h
}
