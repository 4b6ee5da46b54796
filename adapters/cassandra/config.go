package cassandra

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// config is the properties read and checked: what open connects with
// (and the telemetry opens its own session with).
type config struct {
	hosts          []string
	port           int
	keyspace       string
	table          string
	username       string
	password       string
	readCL         gocql.Consistency
	writeCL        gocql.Consistency
	numConns       int
	connectTimeout time.Duration
	readTimeout    time.Duration
	batchPar       int
	writeCoalesce  time.Duration
	tracing        bool
	tls            *tls.Config
}

func parseConsistency(p *properties.Properties, key string) (gocql.Consistency, error) {
	v := p.String(key, defaultConsistency)
	c, err := gocql.ParseConsistencyWrapper(v)
	if err != nil {
		return 0, &properties.Error{Property: key, Value: v,
			Expected: "one of ANY, ONE, TWO, THREE, QUORUM, ALL, LOCAL_QUORUM, EACH_QUORUM, LOCAL_ONE, SERIAL, LOCAL_SERIAL"}
	}
	return c, nil
}

// parseConfig reads and checks every property, the TLS files included.
func parseConfig(p *properties.Properties) (*config, error) {
	c, err := parseSettings(p)
	if err != nil {
		return nil, err
	}
	if c.tls, err = tlsConfig(p); err != nil {
		return nil, err
	}
	return c, nil
}

// check checks the properties as open, init and drop do, without
// connecting or reading the TLS files, which need only exist where the
// database is opened (adapters.Info.Check).
func check(p *properties.Properties) error {
	c, err := parseSettings(p)
	if err != nil {
		return err
	}
	if _, err := tlsSettings(p); err != nil {
		return err
	}
	if _, err := (&DB{keyspace: c.keyspace, table: c.table}).schemaFrom(p); err != nil {
		return err
	}
	_, err = p.OneOf(propDrop, "table", "table", "keyspace")
	return err
}

// parseSettings reads and checks every property but TLS's.
func parseSettings(p *properties.Properties) (*config, error) {
	c := &config{}
	for _, h := range strings.Split(p.String(propHosts, ""), ",") {
		if h = strings.TrimSpace(h); h != "" {
			c.hosts = append(c.hosts, h)
		}
	}
	if len(c.hosts) == 0 {
		return nil, &properties.Error{Property: propHosts, Expected: "a comma-separated list of Cassandra hosts (required), e.g. -p hosts=127.0.0.1"}
	}
	port, err := p.PositiveInt64(propPort, 9042)
	if err != nil {
		return nil, err
	}
	if port > 65535 {
		return nil, &properties.Error{Property: propPort, Value: strconv.FormatInt(port, 10), Expected: "a TCP port (1-65535)"}
	}
	c.port = int(port)
	c.keyspace = p.String(propKeyspace, "ycsb")
	if !identRE.MatchString(c.keyspace) {
		return nil, &properties.Error{Property: propKeyspace, Value: c.keyspace, Expected: "an unquoted CQL identifier (letter, then letters, digits or _)"}
	}
	c.table = p.String(propTable, "usertable")
	if !identRE.MatchString(c.table) {
		return nil, &properties.Error{Property: propTable, Value: c.table, Expected: "an unquoted CQL identifier (letter, then letters, digits or _)"}
	}
	c.username = p.String(propUsername, "")
	c.password = p.String(propPassword, "")
	if (c.username == "") != (c.password == "") {
		return nil, &properties.Error{Property: propUsername, Expected: "cassandra.username and cassandra.password to be set together"}
	}
	if c.readCL, err = parseConsistency(p, propReadCL); err != nil {
		return nil, err
	}
	if c.writeCL, err = parseConsistency(p, propWriteCL); err != nil {
		return nil, err
	}
	// The DataStax driver distinguishes core and max connections per host;
	// gocql keeps a fixed pool, so the larger of the two is the pool size.
	// Neither set: one connection per host, the DataStax 3.x driver's
	// default with protocol v3 and later (which Java YCSB's binding runs
	// with), rather than gocql's two. One connection also halves the
	// system calls per operation: batchConn then merges the requests of
	// every worker into one write and the responses into one read, where
	// two connections split them. Against one Cassandra 5.0.9 at 16
	// threads: 1.37 -> 0.93 system calls per operation (strace -f -c),
	// client CPU per operation 13.6 -> 12.9 and 14.4 -> 13.3 us.
	var core, maxc int64 = 0, 0
	if p.Has(propCoreConns) {
		if core, err = p.PositiveInt64(propCoreConns, 1); err != nil {
			return nil, err
		}
	}
	if p.Has(propMaxConns) {
		if maxc, err = p.PositiveInt64(propMaxConns, 1); err != nil {
			return nil, err
		}
	}
	c.numConns = int(max(core, maxc))
	if c.numConns == 0 {
		c.numConns = defaultConns
	}
	ct, err := p.PositiveInt64(propConnectTimeout, defaultConnectTimeout)
	if err != nil {
		return nil, err
	}
	c.connectTimeout = time.Duration(ct) * time.Millisecond
	rt, err := p.PositiveInt64(propReadTimeout, defaultReadTimeout)
	if err != nil {
		return nil, err
	}
	c.readTimeout = time.Duration(rt) * time.Millisecond
	if c.tracing, err = p.Bool(propTracing, false); err != nil {
		return nil, err
	}
	bp, err := p.PositiveInt64(propBatchParallel, defaultBatchParallel)
	if err != nil {
		return nil, err
	}
	c.batchPar = int(bp)
	wc, err := p.NonNegInt64(propWriteCoalesce, 0)
	if err != nil {
		return nil, err
	}
	if wc > 1_000_000 {
		return nil, &properties.Error{Property: propWriteCoalesce, Value: strconv.FormatInt(wc, 10), Expected: "at most 1000000 (one second)"}
	}
	c.writeCoalesce = time.Duration(wc) * time.Microsecond
	return c, nil
}

// tlsProps are the TLS properties, checked but for their files.
type tlsProps struct {
	use, verify   bool
	ca, cert, key string
}

// tlsSettings reads and checks the TLS properties without reading the
// files they name.
func tlsSettings(p *properties.Properties) (tlsProps, error) {
	var t tlsProps
	var err error
	if t.use, err = p.Bool(propUseSSL, false); err != nil {
		return t, err
	}
	t.ca, t.cert, t.key = p.String(propSSLCA, ""), p.String(propSSLCert, ""), p.String(propSSLKey, "")
	if t.verify, err = p.Bool(propSSLVerifyHost, true); err != nil {
		return t, err
	}
	if !t.use {
		for _, k := range []string{propSSLCA, propSSLCert, propSSLKey} {
			if p.String(k, "") != "" {
				return t, &properties.Error{Property: k, Expected: "cassandra.useSSL=true as well (TLS is off)"}
			}
		}
	}
	if (t.cert == "") != (t.key == "") {
		return t, &properties.Error{Property: propSSLCert, Expected: "cassandra.ssl.cert and cassandra.ssl.key to be set together"}
	}
	return t, nil
}

// tlsConfig builds the client TLS settings of cassandra.useSSL, reading
// the PEM files now so that a wrong path is a configuration error naming
// its property rather than a connection failure.
func tlsConfig(p *properties.Properties) (*tls.Config, error) {
	t, err := tlsSettings(p)
	if err != nil || !t.use {
		return nil, err
	}
	ca, cert, key := t.ca, t.cert, t.key
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if !t.verify {
		// Go's only switch to skip the host-name check also skips the
		// chain check, so the chain is verified here instead.
		cfg.InsecureSkipVerify = true //nolint:gosec // chain checked in VerifyConnection
		cfg.VerifyConnection = func(cs tls.ConnectionState) error { return verifyChain(cs, cfg.RootCAs) }
	}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, &properties.Error{Property: propSSLCA, Value: ca, Expected: "a readable PEM file of CA certificates (" + err.Error() + ")"}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &properties.Error{Property: propSSLCA, Value: ca, Expected: "a PEM file with at least one CA certificate"}
		}
		cfg.RootCAs = pool
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, &properties.Error{Property: propSSLCert, Value: cert, Expected: "a PEM certificate matching the PEM key in cassandra.ssl.key (" + err.Error() + ")"}
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// verifyChain checks the server's certificate chain against roots (the
// system pool when nil) without checking the host name.
func verifyChain(cs tls.ConnectionState, roots *x509.CertPool) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("cassandra: server sent no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
	return err
}
