package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a certificate for 127.0.0.1 and its key as PEM files.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ns serve test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	must(os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))
	return certFile, keyFile
}

// ns serve with --tls-cert/--tls-key serves https; the https:// driver
// trusts it through ca_file.
func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	p := startServe(t, buildNS(t), "mem://tls", "--insecure-no-auth", "--tls-cert", cert, "--tls-key", key)
	if !strings.HasPrefix(p.URL, "https://") {
		t.Fatalf("ns serve with TLS printed %s", p.URL)
	}
	c := &cli{t: t, url: p.URL + "?ca_file=" + url.QueryEscape(cert)}
	c.want(exitOK, "init", "secure")
	if out := c.want(exitOK, "lookup", "secure", "--json"); !strings.Contains(out, `"id":"secure:main"`) {
		t.Fatalf("lookup over https = %s", out)
	}
	plain := &cli{t: t, url: strings.Replace(p.URL, "https://", "http://", 1)}
	if code, _, _ := plain.run("lookup", "secure"); code == exitOK {
		t.Fatal("plain http to the TLS listener succeeded")
	}
	stopServe(t, p)
}

// Over TLS 1.2, ns serve offers only ECDHE suites with an AEAD cipher: a
// client offering only CBC or RSA-key-exchange suites cannot connect.
func TestServeTLS12AEADOnly(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	p := startServe(t, buildNS(t), "mem://tls", "--insecure-no-auth", "--tls-cert", cert, "--tls-key", key)
	addr := strings.TrimPrefix(p.URL, "https://")
	handshake := func(suite uint16) error {
		c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{suite}})
		if err == nil {
			c.Close()
		}
		return err
	}
	for _, suite := range []uint16{
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	} {
		if err := handshake(suite); err != nil {
			t.Errorf("%s refused: %v", tls.CipherSuiteName(suite), err)
		}
	}
	for _, suite := range []uint16{
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, tls.TLS_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_RSA_WITH_AES_128_CBC_SHA,
	} {
		if err := handshake(suite); err == nil {
			t.Errorf("%s accepted over TLS 1.2", tls.CipherSuiteName(suite))
		}
	}
	// TLS 1.3 (all AEAD) is served.
	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13})
	if err != nil {
		t.Fatalf("TLS 1.3: %v", err)
	}
	c.Close()
	stopServe(t, p)
}
