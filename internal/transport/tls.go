// Package transport holds what the coordinator and the agent share below
// the protocol: mutual TLS, the token and version checks run as gRPC
// interceptors, gRPC dial/serve options, and the wire codec for interval
// records and their HDR histograms (which must treat everything received
// as untrusted).
package transport

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"google.golang.org/grpc/credentials"
)

// TLSFiles names PEM files for mutual TLS. All three are required: each
// side presents its certificate and accepts only peers signed by CA.
type TLSFiles struct {
	Cert string // --tls-cert
	Key  string // --tls-key
	CA   string // --tls-ca
}

// Enabled reports whether any TLS file was given.
func (f *TLSFiles) Enabled() bool {
	return f != nil && (f.Cert != "" || f.Key != "" || f.CA != "")
}

func (f *TLSFiles) load() (tls.Certificate, *x509.CertPool, error) {
	if f.Cert == "" || f.Key == "" || f.CA == "" {
		return tls.Certificate{}, nil, errors.New("--tls-cert, --tls-key and --tls-ca must be given together (mutual TLS)")
	}
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	pem, err := os.ReadFile(f.CA)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("--tls-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return tls.Certificate{}, nil, fmt.Errorf("--tls-ca %s: no PEM certificate found", f.CA)
	}
	return cert, pool, nil
}

// Validate loads the files once so that a bad path is reported as a
// configuration error before anything connects.
func (f *TLSFiles) Validate() error {
	if !f.Enabled() {
		return nil
	}
	_, _, err := f.load()
	return err
}

// KeyWarning says, when the private key's file can be read by anyone but
// its owner (its group or everyone: mode bits 0077), what that exposes
// and how to fix it; empty otherwise. Whoever reads the key can pose as
// this side of the mutual TLS.
func (f *TLSFiles) KeyWarning() string {
	if !f.Enabled() || f.Key == "" {
		return ""
	}
	st, err := os.Stat(f.Key)
	if err != nil || st.Mode().Perm()&0o077 == 0 {
		return ""
	}
	return fmt.Sprintf("WARNING: --tls-key %s can be read by users other than its owner (mode %04o): whoever reads it can pose as this host in mutual TLS; run `chmod 600 %s`",
		f.Key, st.Mode().Perm(), f.Key)
}

// ServerCredentials returns credentials for the agent: it presents Cert
// and requires a client certificate signed by CA.
func ServerCredentials(f *TLSFiles) (credentials.TransportCredentials, error) {
	cert, pool, err := f.load()
	if err != nil {
		return nil, err
	}
	return credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS13,
	}), nil
}

// ClientCredentials returns credentials for the coordinator: it verifies
// the agent against CA (host name or IP from the dialed address) and
// presents Cert.
func ClientCredentials(f *TLSFiles) (credentials.TransportCredentials, error) {
	cert, pool, err := f.load()
	if err != nil {
		return nil, err
	}
	return credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
		MinVersion:   tls.VersionTLS13,
	}), nil
}
