package testdb

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Certs are PEM files for TLS between a test's server and its clients: a
// CA, a server certificate it signed for the names given (Server: the
// files for ServerOptions.Files, which TLSArgs name), a client certificate
// it signed, and a CA that signed none of them (for "wrong CA" tests).
// The client's files are paths on the test's side.
type Certs struct {
	CA, ClientCert, ClientKey, OtherCA string
	Server                             map[string][]byte
}

// TLSArgs are the server options that use Certs.Server's files.
var TLSArgs = []string{"--ssl-ca=" + DirVar + "/ca.pem", "--ssl-cert=" + DirVar + "/server-cert.pem", "--ssl-key=" + DirVar + "/server-key.pem"}

// MakeCerts makes Certs for a server known by names (those that parse as
// IP addresses go in as such).
func MakeCerts(t testing.TB, names ...string) Certs {
	t.Helper()
	dir := t.TempDir()
	c := Certs{CA: filepath.Join(dir, "ca.pem"), ClientCert: filepath.Join(dir, "client-cert.pem"),
		ClientKey: filepath.Join(dir, "client-key.pem"), OtherCA: filepath.Join(dir, "other-ca.pem")}
	ca, caKey := makeCert(t, nil, nil, "wpsidecar test CA", true, nil)
	other, _ := makeCert(t, nil, nil, "wpsidecar unrelated CA", true, nil)
	srv, srvKey := makeCert(t, ca, caKey, "wpsidecar test server", false, names)
	cli, cliKey := makeCert(t, ca, caKey, "wpsidecar test client", false, nil)
	c.Server = map[string][]byte{"ca.pem": certPEM(ca), "server-cert.pem": certPEM(srv), "server-key.pem": keyPEM(t, srvKey)}
	for path, b := range map[string][]byte{c.CA: certPEM(ca), c.OtherCA: certPEM(other), c.ClientCert: certPEM(cli), c.ClientKey: keyPEM(t, cliKey)} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func makeCert(t testing.TB, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, cn string, isCA bool, names []string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if isCA {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		tmpl.ExtKeyUsage = nil
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	signer, signKey := tmpl, key
	if parent != nil {
		signer, signKey = parent, parentKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func certPEM(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

func keyPEM(t testing.TB, key *ecdsa.PrivateKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}
