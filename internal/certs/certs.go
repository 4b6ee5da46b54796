// Package certs writes the files mutual TLS between the coordinator and
// its agents needs: one CA, a server certificate per agent host and a
// client certificate for the coordinator, laid out so that the agent and
// coordinator flags (--tls-cert, --tls-key, --tls-ca) take them as they
// are. Re-running on the same directory adds what is missing and never
// replaces the CA or a certificate already there, so that agents already
// deployed keep trusting the coordinator.
package certs

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/ycsbctl/ycsbctl/internal/outfile"
)

// Lifetimes: the CA outlives every certificate it signs, so that leaf
// certificates can be re-issued without redeploying the CA.
const (
	CALifetime   = 10 * 365 * 24 * time.Hour
	LeafLifetime = 2 * 365 * 24 * time.Hour
	// backdate covers clocks that lag the machine that issued the files.
	backdate = time.Hour
)

// File names inside the directory.
const (
	CACert          = "ca.pem"
	CAKey           = "ca-key.pem"
	AgentCert       = "agent.pem"
	AgentKey        = "agent-key.pem"
	CoordinatorCert = "coordinator.pem"
	CoordinatorKey  = "coordinator-key.pem"
)

// Result lists the files Generate wrote, so the caller can say what
// changed; files already present are not listed.
type Result struct {
	Created []string
}

// nameRe accepts DNS names (IP addresses are checked apart); anything
// else (a slash, a space, "..", a colon) would escape DIR or give a
// certificate nobody can match.
var nameRe = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$`)

// ValidateHosts checks the --hosts list: not empty, no duplicates, each a
// DNS name or an IP address. An address with a port is refused: a
// certificate names a host, and "DNS:127.0.0.1:7420" can never match.
func ValidateHosts(hosts []string) error {
	if len(hosts) == 0 {
		return errors.New("expected at least one host name or address")
	}
	seen := map[string]bool{}
	for _, h := range hosts {
		if host, _, err := net.SplitHostPort(h); err == nil {
			return fmt.Errorf("%q: expected a host name or IP address without a port (a certificate names the host; the port is the agent's --listen): use %s", h, host)
		}
		if net.ParseIP(h) == nil && (!nameRe.MatchString(h) || strings.Contains(h, "..") || len(h) > 253) {
			return fmt.Errorf("%q: expected a DNS name or an IP address", h)
		}
		if seen[h] {
			return fmt.Errorf("%q: listed twice", h)
		}
		seen[h] = true
	}
	return nil
}

// Generate makes dir/ca.pem and dir/ca-key.pem (unless present), then
// dir/<host>/agent.pem and agent-key.pem for each host and
// dir/coordinator.pem and coordinator-key.pem, skipping the ones present.
// now is the issue time (injected for tests).
func Generate(dir string, hosts []string, now time.Time) (Result, error) {
	var res Result
	if err := ValidateHosts(hosts); err != nil {
		return res, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	ca, caKey, created, err := loadOrCreateCA(dir, now)
	if err != nil {
		return res, err
	}
	if created {
		res.Created = append(res.Created, filepath.Join(dir, CACert), filepath.Join(dir, CAKey))
	}
	for _, h := range hosts {
		hdir := filepath.Join(dir, h)
		if err := os.MkdirAll(hdir, 0o755); err != nil {
			return res, err
		}
		made, err := ensureLeaf(hdir, AgentCert, AgentKey, ca, caKey, leafTemplate(h, x509.ExtKeyUsageServerAuth, now), now)
		if err != nil {
			return res, fmt.Errorf("agent certificate for %s: %w", h, err)
		}
		res.Created = append(res.Created, made...)
	}
	made, err := ensureLeaf(dir, CoordinatorCert, CoordinatorKey, ca, caKey, leafTemplate("ycsbctl coordinator", x509.ExtKeyUsageClientAuth, now), now)
	if err != nil {
		return res, fmt.Errorf("coordinator certificate: %w", err)
	}
	res.Created = append(res.Created, made...)
	return res, nil
}

func loadOrCreateCA(dir string, now time.Time) (*x509.Certificate, crypto.Signer, bool, error) {
	certPath, keyPath := filepath.Join(dir, CACert), filepath.Join(dir, CAKey)
	_, errC := os.Stat(certPath)
	_, errK := os.Stat(keyPath)
	switch {
	case errC == nil && errK == nil:
		cert, err := readCert(certPath)
		if err != nil {
			return nil, nil, false, err
		}
		key, err := readKey(keyPath)
		if err != nil {
			return nil, nil, false, err
		}
		if !samePublicKey(cert.PublicKey, key.Public()) {
			return nil, nil, false, fmt.Errorf("%s does not belong to %s: refusing to sign with a key that does not match the CA", keyPath, certPath)
		}
		if !cert.IsCA {
			return nil, nil, false, fmt.Errorf("%s is not a CA certificate", certPath)
		}
		return cert, key, false, nil
	case errC == nil || errK == nil:
		// Half a CA: making a new one would silently orphan every
		// certificate it signed, so the operator must decide.
		return nil, nil, false, fmt.Errorf("%s and %s: only one of them exists; restore the other or remove both", certPath, keyPath)
	}
	if err := writable(certPath, keyPath); err != nil {
		return nil, nil, false, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, false, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "ycsbctl CA", Organization: []string{"ycsbctl"}},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(CALifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, false, err
	}
	// Key first: a crash between the two writes leaves "only the key",
	// which the next run reports instead of guessing.
	if err := writeKey(keyPath, key); err != nil {
		return nil, nil, false, err
	}
	if err := writePEM(certPath, "CERTIFICATE", der, 0o644); err != nil {
		return nil, nil, false, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, true, err
}

func leafTemplate(name string, usage x509.ExtKeyUsage, now time.Time) *x509.Certificate {
	t := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: name, Organization: []string{"ycsbctl"}},
		NotBefore:    now.Add(-backdate),
		NotAfter:     now.Add(LeafLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	if usage == x509.ExtKeyUsageServerAuth {
		// Only the name given: the coordinator dials exactly that.
		if ip := net.ParseIP(name); ip != nil {
			t.IPAddresses = []net.IP{ip}
		} else {
			t.DNSNames = []string{name}
		}
	}
	return t
}

// ensureLeaf writes cert and key under dir unless both exist. An existing
// pair is checked to chain to the CA, so a directory mixed from two CAs
// is reported rather than deployed.
func ensureLeaf(dir, certName, keyName string, ca *x509.Certificate, caKey crypto.Signer, tmpl *x509.Certificate, now time.Time) ([]string, error) {
	certPath, keyPath := filepath.Join(dir, certName), filepath.Join(dir, keyName)
	_, errC := os.Stat(certPath)
	_, errK := os.Stat(keyPath)
	if errC == nil && errK == nil {
		cert, err := readCert(certPath)
		if err != nil {
			return nil, err
		}
		if err := cert.CheckSignatureFrom(ca); err != nil {
			return nil, fmt.Errorf("%s was not signed by this directory's CA: %w", certPath, err)
		}
		return nil, nil
	}
	if err := writable(certPath, keyPath); err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return nil, err
	}
	if err := writeKey(keyPath, key); err != nil {
		return nil, err
	}
	if err := writePEM(certPath, "CERTIFICATE", der, 0o644); err != nil {
		return nil, err
	}
	return []string{certPath, keyPath}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "PRIVATE KEY", der, 0o600)
}

// writePEM writes path through package outfile, as every file ycsbctl
// writes: a temporary file of its own beside it (never a fixed name that
// something else may hold, or a symbolic link planted there), renamed
// over it once complete, and never over a directory, a device, a FIFO or
// a socket. The mode is set on the temporary file before any byte is
// written, exactly: outfile keeps the mode of a file it replaces and
// applies the umask to a new one, and a key must be 0600 whatever was
// there before.
func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	f, err := outfile.Create(path, mode)
	if err != nil {
		return err
	}
	defer f.Discard()
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if err := pem.Encode(f, &pem.Block{Type: typ, Bytes: der}); err != nil {
		return err
	}
	return f.Commit()
}

// writable checks, before a pair is written, that each of its paths is a
// regular file or nothing (outfile.Check names what else is there): a
// refusal of the second write would leave a key without its certificate.
func writable(paths ...string) error {
	for _, p := range paths {
		if err := outfile.Check(p); err != nil {
			return err
		}
	}
	return nil
}

// readPEM reads a certificate or key file, refusing what is not a regular
// file: reading a FIFO would block until something writes to it.
func readPEM(path string) ([]byte, error) {
	if err := outfile.Check(path); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

func readCert(path string) (*x509.Certificate, error) {
	b, err := readPEM(path)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("%s: no PEM certificate", path)
	}
	return x509.ParseCertificate(blk.Bytes)
}

func readKey(path string) (crypto.Signer, error) {
	b, err := readPEM(path)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("%s: no PEM private key", path)
	}
	var k any
	switch blk.Type {
	case "PRIVATE KEY":
		k, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(blk.Bytes)
	default:
		return nil, fmt.Errorf("%s: unexpected PEM block %q", path, blk.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s: key cannot sign", path)
	}
	return s, nil
}

func samePublicKey(a, b crypto.PublicKey) bool {
	da, errA := x509.MarshalPKIXPublicKey(a)
	db, errB := x509.MarshalPKIXPublicKey(b)
	return errA == nil && errB == nil && bytes.Equal(da, db)
}
