package changes

import (
	"testing"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

func TestFlavorOf(t *testing.T) {
	for _, c := range []struct{ version, want string }{
		{"10.11.6-MariaDB-0+deb12u1-log", gomysql.MariaDBFlavor},
		{"11.4.2-MariaDB", gomysql.MariaDBFlavor},
		{"5.5.5-10.6.12-mariadb", gomysql.MariaDBFlavor},
		{"8.0.36", gomysql.MySQLFlavor},
		{"8.4.0-log", gomysql.MySQLFlavor},
		{"5.7.44-percona-48", gomysql.MySQLFlavor},
	} {
		if got := flavorOf(c.version); got != c.want {
			t.Errorf("flavorOf(%q) = %s, want %s", c.version, got, c.want)
		}
	}
}

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
