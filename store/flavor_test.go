package store_test

import (
	"testing"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/wpsidecar/wpsidecar/store"
)

func TestFlavor(t *testing.T) {
	for _, c := range []struct{ version, want string }{
		{"10.11.6-MariaDB-0+deb12u1-log", gomysql.MariaDBFlavor},
		{"11.4.2-MariaDB", gomysql.MariaDBFlavor},
		{"5.5.5-10.6.12-mariadb", gomysql.MariaDBFlavor},
		{"8.0.36", gomysql.MySQLFlavor},
		{"8.4.0-log", gomysql.MySQLFlavor},
		{"5.7.44-percona-48", gomysql.MySQLFlavor},
	} {
		if got := store.Flavor(c.version); got != c.want {
			t.Errorf("Flavor(%q) = %s, want %s", c.version, got, c.want)
		}
	}
}
