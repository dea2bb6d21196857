package server

import "crypto/tls"

// aeadSuites are the TLS 1.2 suites a server offers: ECDHE key exchange
// (forward secrecy) with an AEAD cipher. TLS 1.3's suites are all AEAD and
// not configurable.
var aeadSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// TLSConfig returns the TLS configuration of a server with the given
// certificates: TLS 1.2 or later, and in TLS 1.2 only ECDHE suites with an
// AEAD cipher (no CBC, no SHA-1 MAC, no RSA key exchange).
func TLSConfig(certs ...tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: certs, MinVersion: tls.VersionTLS12, CipherSuites: aeadSuites}
}
