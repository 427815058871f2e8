package store

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/go-sql-driver/mysql"
)

// TLS modes of the connection to the database, named and meant as the
// MySQL client's --ssl-mode: disabled (plain), preferred (TLS when the
// server offers it, unverified, else plain), required (TLS, unverified),
// verify-ca (TLS, the server's certificate signed by the CA) and
// verify-identity (verify-ca, and the certificate names the host).
const (
	TLSDisabled       = "disabled"
	TLSPreferred      = "preferred"
	TLSRequired       = "required"
	TLSVerifyCA       = "verify-ca"
	TLSVerifyIdentity = "verify-identity"
)

// TLSModes lists the modes, weakest first.
var TLSModes = []string{TLSDisabled, TLSPreferred, TLSRequired, TLSVerifyCA, TLSVerifyIdentity}

// TLS is how the sidecar's connections to the database (the primary, the
// replicas, the binlog feed's) are encrypted: a mode, the CA to verify the
// server with (empty: the system's roots), and a client certificate and
// key when the server asks for one.
type TLS struct {
	Mode, CA, Cert, Key string
}

// Apply sets c up to connect as t says: c.TLS, and whether the driver may
// fall back to plain TCP (preferred). A unix socket is left plain, as
// the servers treat it as secure already. The files are read now, so a
// missing or unreadable one is an error at start, not at first connect.
func (t TLS) Apply(c *mysql.Config) error {
	if t.Mode == "" || t.Mode == TLSDisabled || c.Net == "unix" {
		c.TLS, c.AllowFallbackToPlaintext = nil, false
		return nil
	}
	host, _, err := net.SplitHostPort(c.Addr)
	if err != nil {
		host = c.Addr
	}
	tc, err := t.Config(host)
	if err != nil {
		return err
	}
	c.TLS, c.AllowFallbackToPlaintext = tc, t.Mode == TLSPreferred
	return nil
}

// Config is the tls.Config of the mode for a server named host (nil when
// disabled).
func (t TLS) Config(host string) (*tls.Config, error) {
	switch t.Mode {
	case "", TLSDisabled:
		return nil, nil
	case TLSPreferred, TLSRequired, TLSVerifyCA, TLSVerifyIdentity:
	default:
		return nil, fmt.Errorf("store: TLS mode %q is not one of %v", t.Mode, TLSModes)
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
	if t.Cert != "" || t.Key != "" {
		cert, err := tls.LoadX509KeyPair(t.Cert, t.Key)
		if err != nil {
			return nil, fmt.Errorf("store: database client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	var roots *x509.CertPool
	if t.CA != "" {
		pem, err := os.ReadFile(t.CA)
		if err != nil {
			return nil, fmt.Errorf("store: database CA: %w", err)
		}
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("store: database CA %s: no PEM certificate in it", t.CA)
		}
		c.RootCAs = roots
	}
	switch t.Mode {
	case TLSPreferred, TLSRequired:
		// Encrypted, not authenticated: what the MySQL client's modes of
		// these names do (a CA given with them is not checked either).
		c.InsecureSkipVerify = true
	case TLSVerifyCA:
		// The chain is checked against the CA, the name is not: Go checks
		// both or neither, so the chain is checked here.
		c.InsecureSkipVerify = true
		c.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the database server sent no certificate")
			}
			inter := x509.NewCertPool()
			for _, ic := range cs.PeerCertificates[1:] {
				inter.AddCert(ic)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
			return err
		}
	}
	return c, nil
}
