package changes

import "testing"

func TestSplitHostPort(t *testing.T) {
	for _, c := range []struct {
		addr string
		host string
		port uint16
	}{
		{"127.0.0.1:3307", "127.0.0.1", 3307},
		{"[::1]:3308", "::1", 3308},
		{"db", "db", 3306},
		{"db:notaport", "db", 3306},
	} {
		if h, p := splitHostPort(c.addr); h != c.host || p != c.port {
			t.Errorf("splitHostPort(%q) = %s %d, want %s %d", c.addr, h, p, c.host, c.port)
		}
	}
}
