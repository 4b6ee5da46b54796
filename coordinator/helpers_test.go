package coordinator

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	crand "crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/agent"
	"github.com/ycsbctl/ycsbctl/internal/bundle"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/testutil/bridge"
	"github.com/ycsbctl/ycsbctl/internal/wire"
	pb "github.com/ycsbctl/ycsbctl/proto/ycsbctlpb"

	_ "github.com/ycsbctl/ycsbctl/adapters/basic"
	_ "github.com/ycsbctl/ycsbctl/adapters/embedded"
)

type pbRecord = pb.IntervalRecord

func mustRecord(tb testing.TB, a int, iv *measurement.Interval) *pb.IntervalRecord {
	rec, err := wire.RecordFromInterval(int32(a), iv)
	if err != nil {
		tb.Fatal(err)
	}
	return rec
}

// sixOpInterval is a plausible agent interval: n operations over six
// series (five ops and one failure series), log-normal service times
// around a few hundred µs with a long tail.
func sixOpInterval(r *rand.Rand, seq int64, n int) *measurement.Interval {
	iv := measurement.NewInterval(seq, seq*10e9, (seq+1)*10e9)
	series := []measurement.Series{
		measurement.SeriesOf(measurement.Read, measurement.Service, false),
		measurement.SeriesOf(measurement.Update, measurement.Service, false),
		measurement.SeriesOf(measurement.Insert, measurement.Service, false),
		measurement.SeriesOf(measurement.Scan, measurement.Service, false),
		measurement.SeriesOf(measurement.ReadModifyWrite, measurement.Service, false),
		measurement.SeriesOf(measurement.Read, measurement.Service, true),
	}
	for _, s := range series {
		iv.Hist[s] = measurement.NewHistogram()
	}
	for i := 0; i < n; i++ {
		k := r.IntN(100)
		var s measurement.Series
		switch {
		case k < 45:
			s = series[0]
		case k < 80:
			s = series[1]
		case k < 90:
			s = series[2]
		case k < 95:
			s = series[3]
		case k < 99:
			s = series[4]
		default:
			s = series[5]
		}
		v := int64(300e3*mathExp(r.NormFloat64()*0.6)) + 1
		if r.IntN(1000) == 0 {
			v *= 50 // tail
		}
		_ = iv.Hist[s].RecordValue(v)
		st := adapters.OK
		if s.Failed() {
			st = adapters.Error
		}
		iv.Returns[s.Op()][st]++
		iv.Ops++
	}
	return iv
}

// testAgent runs agent.Serve in-process on 127.0.0.1:0.
func testAgent(t testing.TB, cfg agent.Config) string {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	ready := make(chan string, 1)
	cfg.Ready = func(a string) { ready <- a }
	var logMu sync.Mutex
	var logs bytes.Buffer
	cfg.Logf = func(f string, a ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		logs.WriteString(time.Now().Format("15:04:05.000 "))
		logs.WriteString(sprintf(f, a...))
		logs.WriteByte('\n')
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- agent.Serve(ctx, cfg) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("agent: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("agent did not start")
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("agent %s after cancel: %v", addr, err)
		}
		if t.Failed() {
			logMu.Lock()
			t.Logf("agent %s log:\n%s", addr, logs.String())
			logMu.Unlock()
		}
	})
	return addr
}

func baseProps(extra map[string]string) map[string]string {
	p := map[string]string{
		"basicdb.verbose": "false",
		"recordcount":     "3000",
		"operationcount":  "3000",
		"threadcount":     "2",
		"status.interval": "0.2",
	}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

// readReport reads run.json back through package bundle, the reader
// ycsbctl report and compare use.
func readReport(t testing.TB, dir string) *bundle.Run {
	t.Helper()
	b, err := bundle.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	return b.Run
}

// readPlan reads the plan section of run.json.
func readPlan(t testing.TB, dir string) *Plan {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, FileRunJSON))
	if err != nil {
		t.Fatal(err)
	}
	var r struct{ Plan *Plan }
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r.Plan
}

// certs is a throwaway PKI for TLS tests.
type certs struct {
	dir                string
	ca, otherCA        string
	server, serverKey  string
	client, clientKey  string
	rogue, rogueKey    string // client cert signed by otherCA
	rogueSrv, rogueSrK string // server cert signed by otherCA
}

func newCerts(t testing.TB) *certs {
	t.Helper()
	dir := t.TempDir()
	c := &certs{dir: dir}
	caCert, caKey := makeCA(t, "ycsbctl test CA")
	otherCert, otherKey := makeCA(t, "someone else's CA")
	c.ca = writePEM(t, dir, "ca.pem", "CERTIFICATE", caCert.Raw)
	c.otherCA = writePEM(t, dir, "other-ca.pem", "CERTIFICATE", otherCert.Raw)
	c.server, c.serverKey = makeLeaf(t, dir, "server", caCert, caKey, true)
	c.client, c.clientKey = makeLeaf(t, dir, "client", caCert, caKey, false)
	c.rogue, c.rogueKey = makeLeaf(t, dir, "rogue", otherCert, otherKey, false)
	c.rogueSrv, c.rogueSrK = makeLeaf(t, dir, "rogue-server", otherCert, otherKey, true)
	return c
}

func makeCA(t testing.TB, cn string) (*x509.Certificate, *ecdsa.PrivateKey) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(crand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert, key
}

func makeLeaf(t testing.TB, dir, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, server bool) (string, string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature,
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		tmpl.DNSNames = []string{"localhost"}
	} else {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	der, err := x509.CreateCertificate(crand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return writePEM(t, dir, name+".pem", "CERTIFICATE", der), writePEM(t, dir, name+"-key.pem", "EC PRIVATE KEY", kb)
}

func writePEM(t testing.TB, dir, name, typ string, der []byte) string {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func mathExp(x float64) float64 { return math.Exp(x) }

func sprintf(f string, a ...any) string { return fmt.Sprintf(f, a...) }

// closeConn, closeBridge and closeFile close a test's fixtures and report a
// failure to do so; they are deferred, so they report with t.Errorf.
func closeConn(t testing.TB, cc *grpc.ClientConn) {
	t.Helper()
	if err := cc.Close(); err != nil {
		t.Errorf("closing the client connection: %v", err)
	}
}

func closeBridge(t testing.TB, b *bridge.Bridge) {
	t.Helper()
	if err := b.Close(); err != nil {
		t.Errorf("closing the bridge: %v", err)
	}
}

func closeFile(t testing.TB, f *os.File) {
	t.Helper()
	if err := f.Close(); err != nil {
		t.Errorf("closing %s: %v", f.Name(), err)
	}
}

// syncBuffer is a bytes.Buffer that a test may read while the code under
// test writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
