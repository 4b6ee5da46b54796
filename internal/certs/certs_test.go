package certs

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"syscall"
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

// Files are written through package outfile: a temporary file of its own
// beside the target, never a fixed NAME.tmp. A symbolic link planted at
// the old fixed name (it used to be opened with O_TRUNC, following the
// link) leaves what it points at untouched, and nothing temporary is
// left behind.
func TestWritesNeverFollowAPlantedTemporaryName(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("precious\n"), 0o644))
	planted := []string{CACert, CAKey, CoordinatorCert, CoordinatorKey}
	for _, f := range planted {
		require.NoError(t, os.Symlink(victim, filepath.Join(dir, f+".tmp")))
	}
	_, err := Generate(dir, []string{"h1"}, now)
	require.NoError(t, err)
	b, err := os.ReadFile(victim)
	require.NoError(t, err)
	require.Equal(t, "precious\n", string(b), "a file outside DIR was overwritten through a link at a temporary name")
	for _, f := range planted {
		st, err := os.Lstat(filepath.Join(dir, f))
		require.NoError(t, err)
		require.True(t, st.Mode().IsRegular(), "%s is %s, not a regular file", f, st.Mode())
	}
	require.Equal(t, os.FileMode(0o600), mode(t, filepath.Join(dir, CAKey)))
	for _, d := range []string{dir, filepath.Join(dir, "h1")} {
		entries, err := os.ReadDir(d)
		require.NoError(t, err)
		for _, e := range entries {
			require.NotContains(t, e.Name(), ".tmp-", "a temporary file was left in %s", d)
		}
	}
}

// A certificate or key path holding something other than a file (a
// FIFO, a directory) is refused, naming it, before anything is written:
// it is neither replaced nor read (opening a FIFO to read it blocks
// until a writer comes).
func TestRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, CoordinatorCert)
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	_, err := Generate(dir, []string{"h1"}, now)
	require.ErrorContains(t, err, fifo)
	require.ErrorContains(t, err, "FIFO")
	st, err := os.Lstat(fifo)
	require.NoError(t, err)
	require.NotZero(t, st.Mode()&os.ModeNamedPipe, "the FIFO was replaced")
	require.NoFileExists(t, filepath.Join(dir, CoordinatorKey), "a key was written for a certificate that cannot be")

	// With its key present, the FIFO would be read as the certificate.
	require.NoError(t, os.WriteFile(filepath.Join(dir, CoordinatorKey), []byte("x"), 0o600))
	t.Cleanup(func() {
		// Lets a reader blocked on the FIFO go, should there be one.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = w.Close()
		}
	})
	done := make(chan error, 1)
	go func() {
		_, err := Generate(dir, []string{"h1"}, now)
		done <- err
	}()
	select {
	case err := <-done:
		require.ErrorContains(t, err, "FIFO")
	case <-time.After(10 * time.Second):
		t.Fatal("Generate blocked reading a FIFO as a certificate")
	}

	// A directory where a key goes.
	dir = t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "h1", AgentKey), 0o755))
	_, err = Generate(dir, []string{"h1"}, now)
	require.ErrorContains(t, err, filepath.Join(dir, "h1", AgentKey))
	require.ErrorContains(t, err, "a directory")
	require.NoFileExists(t, filepath.Join(dir, "h1", AgentCert))
}

// A key written where a stale file with looser permissions was (its
// certificate missing) is exactly 0600: outfile keeps a replaced file's
// mode, which must not apply to keys.
func TestKeyReplacingALooseFileIs0600(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "h1"), 0o755))
	key := filepath.Join(dir, "h1", AgentKey)
	require.NoError(t, os.WriteFile(key, []byte("stale"), 0o644))
	require.NoError(t, os.Chmod(key, 0o644))
	_, err := Generate(dir, []string{"h1"}, now)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), mode(t, key))
	require.Equal(t, os.FileMode(0o644), mode(t, filepath.Join(dir, "h1", AgentCert)))
}
