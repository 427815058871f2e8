package store_test

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/wpsidecar/wpsidecar/internal/harness/testdb"
	"github.com/wpsidecar/wpsidecar/store"
)

// TestTLS: the store reaches a server that takes only encrypted
// connections (require_secure_transport, its own certificates) in each
// mode as the MySQL client would: refused plain, accepted encrypted,
// refused when the server's certificate is not the CA's (verify-ca) or
// does not name the host (verify-identity), a client certificate given
// where the account requires one.
func TestTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a database server of its own")
	}
	certs := testdb.MakeCerts(t, "db.test", "127.0.0.1")
	srv := testdb.StartServerWith(t, testdb.ServerOptions{Files: certs.Server,
		Args: append(append([]string{}, testdb.TLSArgs...), "--require-secure-transport=ON")})
	admin := srv.Config()
	admin.TLS = &tls.Config{InsecureSkipVerify: true}
	tdb := testdb.NewOn(t, admin)
	for _, q := range []string{
		"CREATE USER 'x509'@'%' IDENTIFIED BY 'x509-pw' REQUIRE X509",
		"GRANT ALL ON " + tdb.Name + ".* TO 'x509'@'%'",
	} {
		if _, err := tdb.SQL.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// MySQL and MariaDB 11 refuse a plain connection with 3159, MariaDB 10
	// as they refuse a wrong password.
	refusedPlain := "Error 3159"
	var version string
	if err := tdb.SQL.QueryRow("SELECT VERSION()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(version, "10.") && strings.Contains(version, "MariaDB") {
		refusedPlain = "Error 1045"
	}
	host := func(name string) string { return strings.Replace(admin.Addr, "127.0.0.1", name, 1) }
	for _, c := range []struct {
		name     string
		tls      store.TLS
		addr     string // default: 127.0.0.1:port
		user     string // default: root
		want     string // "" for a connection that works, else a part of the error
		errClass error
	}{
		{name: "disabled", tls: store.TLS{Mode: store.TLSDisabled}, want: refusedPlain, errClass: store.ErrUnavailable},
		{name: "preferred", tls: store.TLS{Mode: store.TLSPreferred}},
		{name: "required", tls: store.TLS{Mode: store.TLSRequired}},
		{name: "required does not check the CA", tls: store.TLS{Mode: store.TLSRequired, CA: certs.OtherCA}},
		{name: "verify-ca", tls: store.TLS{Mode: store.TLSVerifyCA, CA: certs.CA}},
		{name: "verify-ca by another name", tls: store.TLS{Mode: store.TLSVerifyCA, CA: certs.CA}, addr: host("localhost")},
		{name: "verify-ca, wrong CA", tls: store.TLS{Mode: store.TLSVerifyCA, CA: certs.OtherCA}, want: "certificate signed by unknown authority"},
		{name: "verify-ca, the system's CAs", tls: store.TLS{Mode: store.TLSVerifyCA}, want: "certificate signed by unknown authority"},
		{name: "verify-identity", tls: store.TLS{Mode: store.TLSVerifyIdentity, CA: certs.CA}},
		{name: "verify-identity, another name", tls: store.TLS{Mode: store.TLSVerifyIdentity, CA: certs.CA}, addr: host("localhost"), want: "certificate is valid for db.test, not localhost"},
		{name: "client certificate required, none given", tls: store.TLS{Mode: store.TLSRequired}, user: "x509", want: "1045"},
		{name: "client certificate", tls: store.TLS{Mode: store.TLSVerifyIdentity, CA: certs.CA, Cert: certs.ClientCert, Key: certs.ClientKey}, user: "x509"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := tdb.StoreOptions()
			o.TLS, o.Timeout = c.tls, 5*time.Second
			if c.addr != "" {
				o.Addr = c.addr
			}
			if c.user != "" {
				o.User, o.Password = c.user, c.user+"-pw"
			}
			db, err := store.Open(o)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err = db.Ping(ctx)
			if err == nil {
				_, err = db.RawOption(ctx, "siteurl")
			}
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("error %v, want a connection", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want one with %q", err, c.want)
			case c.errClass != nil && !errors.Is(err, c.errClass):
				t.Fatalf("error %v is not %v", err, c.errClass)
			}
		})
	}
}

// TestTLS_PreferredFallsBack: preferred connects in plain TCP to a server
// that offers no TLS, where required refuses.
func TestTLS_PreferredFallsBack(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a database server of its own")
	}
	srv := testdb.StartServerWith(t, testdb.ServerOptions{Args: noTLSArgs(testdb.ServerFlavor())})
	tdb := testdb.NewOn(t, srv.Config())
	for mode, works := range map[string]bool{store.TLSPreferred: true, store.TLSRequired: false} {
		o := tdb.StoreOptions()
		o.TLS = store.TLS{Mode: mode}
		db, err := store.Open(o)
		if err != nil {
			t.Fatal(err)
		}
		err = db.Ping(context.Background())
		db.Close()
		if (err == nil) != works {
			t.Errorf("%s: %v", mode, err)
		}
	}
}

// noTLSArgs turn off the TLS that newer servers set up by themselves.
func noTLSArgs(flavor string) []string {
	if flavor == "mysql" {
		return []string{"--tls-version=", "--admin-tls-version="}
	}
	return []string{"--skip-ssl"}
}

// TestTLS_Apply: a unix socket stays plain; a bad mode or file is an
// error when the pool is made, not at first connect.
func TestTLS_Apply(t *testing.T) {
	c := mysql.NewConfig()
	c.Net, c.Addr = "unix", "/run/mysqld/mysqld.sock"
	if err := (store.TLS{Mode: store.TLSVerifyIdentity}).Apply(c); err != nil || c.TLS != nil {
		t.Errorf("socket: %v, %v", c.TLS, err)
	}
	for _, bad := range []store.TLS{{Mode: "on"}, {Mode: store.TLSVerifyCA, CA: "/nonexistent/ca.pem"}, {Mode: store.TLSRequired, Cert: "/nonexistent/c.pem", Key: "/nonexistent/k.pem"}} {
		c := mysql.NewConfig()
		c.Net, c.Addr = "tcp", "127.0.0.1:3306"
		if err := bad.Apply(c); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
