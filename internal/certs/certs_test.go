package certs

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var now = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)

func parse(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	blk, _ := pem.Decode(b)
	require.NotNil(t, blk, path)
	c, err := x509.ParseCertificate(blk.Bytes)
	require.NoError(t, err)
	return c
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	return st.Mode().Perm()
}

func TestGenerateLayoutModesAndChains(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	res, err := Generate(dir, []string{"10.77.0.11", "db2.example.internal"}, now)
	require.NoError(t, err)
	require.Len(t, res.Created, 8)

	for _, k := range []string{CAKey, CoordinatorKey, "10.77.0.11/" + AgentKey, "db2.example.internal/" + AgentKey} {
		require.Equal(t, os.FileMode(0o600), mode(t, filepath.Join(dir, k)), k)
	}
	ca := parse(t, filepath.Join(dir, CACert))
	require.True(t, ca.IsCA)
	require.Equal(t, now.Add(CALifetime), ca.NotAfter.UTC())
	pool := x509.NewCertPool()
	pool.AddCert(ca)

	ipCert := parse(t, filepath.Join(dir, "10.77.0.11", AgentCert))
	require.Len(t, ipCert.IPAddresses, 1)
	require.True(t, ipCert.IPAddresses[0].Equal(net.ParseIP("10.77.0.11")))
	require.Empty(t, ipCert.DNSNames, "only the name given goes into the certificate")
	_, err = ipCert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "10.77.0.11", CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	require.NoError(t, err)
	_, err = ipCert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "10.77.0.12", CurrentTime: now})
	require.Error(t, err, "a certificate for one host must not pass for another")
	require.Equal(t, now.Add(LeafLifetime), ipCert.NotAfter.UTC())

	dnsCert := parse(t, filepath.Join(dir, "db2.example.internal", AgentCert))
	require.Equal(t, []string{"db2.example.internal"}, dnsCert.DNSNames)
	require.Empty(t, dnsCert.IPAddresses)
	_, err = dnsCert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "db2.example.internal", CurrentTime: now})
	require.NoError(t, err)

	coord := parse(t, filepath.Join(dir, CoordinatorCert))
	_, err = coord.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	require.NoError(t, err)
	_, err = coord.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	require.Error(t, err, "the coordinator's certificate is for client authentication only")
	_, err = coord.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now.Add(LeafLifetime + time.Hour)})
	require.Error(t, err, "expired certificates must not verify")
}

func TestRerunAddsHostsAndKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	_, err := Generate(dir, []string{"h1"}, now)
	require.NoError(t, err)
	before := map[string][]byte{}
	for _, f := range []string{CACert, CAKey, CoordinatorCert, CoordinatorKey, "h1/" + AgentCert, "h1/" + AgentKey} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		before[f] = b
	}
	res, err := Generate(dir, []string{"h1", "h2"}, now.Add(time.Hour))
	require.NoError(t, err)
	require.ElementsMatch(t, []string{filepath.Join(dir, "h2", AgentCert), filepath.Join(dir, "h2", AgentKey)}, res.Created)
	for f, b := range before {
		after, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		require.Equal(t, b, after, "%s was replaced", f)
	}
	ca := parse(t, filepath.Join(dir, CACert))
	require.NoError(t, parse(t, filepath.Join(dir, "h2", AgentCert)).CheckSignatureFrom(ca))

	res, err = Generate(dir, []string{"h1", "h2"}, now)
	require.NoError(t, err)
	require.Empty(t, res.Created)
}

func TestRefusesForeignOrHalfCA(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	_, err := Generate(a, []string{"h1"}, now)
	require.NoError(t, err)
	_, err = Generate(b, []string{"h1"}, now)
	require.NoError(t, err)

	// A CA key that is not the CA certificate's.
	key, err := os.ReadFile(filepath.Join(b, CAKey))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(a, CAKey), key, 0o600))
	_, err = Generate(a, []string{"h1", "h2"}, now)
	require.ErrorContains(t, err, "does not belong to")
	require.NoFileExists(t, filepath.Join(a, "h2", AgentCert))

	// An agent certificate from another CA in the directory.
	c := t.TempDir()
	_, err = Generate(c, []string{"h1"}, now)
	require.NoError(t, err)
	for _, f := range []string{AgentCert, AgentKey} {
		x, err := os.ReadFile(filepath.Join(b, "h1", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(c, "h1", f), x, 0o600))
	}
	_, err = Generate(c, []string{"h1"}, now)
	require.ErrorContains(t, err, "not signed by this directory's CA")

	// Only the key left: a new CA would orphan every certificate.
	d := t.TempDir()
	_, err = Generate(d, []string{"h1"}, now)
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(d, CACert)))
	_, err = Generate(d, []string{"h1"}, now)
	require.ErrorContains(t, err, "only one of them exists")
}

func TestValidateHosts(t *testing.T) {
	require.NoError(t, ValidateHosts([]string{"10.77.0.11", "db-1.example", "::1"}))
	for _, bad := range [][]string{nil, {"../etc"}, {"a b"}, {"h1", "h1"}, {"/abs"}, {"x..y"}} {
		require.Error(t, ValidateHosts(bad), "%q", bad)
	}
}
