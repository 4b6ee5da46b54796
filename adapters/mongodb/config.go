package mongodb

import (
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"

	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// Property names. The first group is YCSB's MongoDbClient; the rest are
// ycsbctl additions.
const (
	propURL        = "mongodb.url"
	propUpsert     = "mongodb.upsert"
	propBatchSize  = "batchsize"
	propTable      = "table"
	propWriteConc  = "mongodb.writeConcern"
	propReadPref   = "mongodb.readPreference"
	propMaxConns   = "mongodb.maxconnections"
	propWaitQueue  = "mongodb.threadsAllowedToBlockForConnectionMultiplier"
	propTimeout    = "mongodb.timeout"
	propConnTimout = "mongodb.connecttimeout"
	propInitChunks = "mongodb.shard.initialchunks"
	propBalancer   = "mongodb.shard.balancer"

	// defaultURL is YCSB's default, including its w=1.
	defaultURL      = "mongodb://localhost:27017/ycsb?w=1"
	defaultDatabase = "ycsb"
	defaultTable    = "usertable"

	defaultTimeoutMS        = 10000
	defaultConnectTimeoutMS = 10000 // the Java driver's default connect timeout

	redacted = "REDACTED"
)

// knownProperties declares every property the adapter reads, in the
// order `ycsbctl dbs` lists them.
var knownProperties = []properties.Known{
	{Name: propURL, Default: defaultURL, Help: "connection string; the path names the database (empty or admin: ycsb); w, journal, readPreference, maxPoolSize... are read by the driver. Credentials are never logged."},
	{Name: propBatchSize, Default: "1", Help: "records per unordered InsertMany, in load and (per client thread, as YCSB) in run"},
	{Name: propUpsert, Default: "false", Help: "true: inserts are ReplaceOne/bulk replace with upsert instead of InsertOne/InsertMany"},
	{Name: propTable, Default: defaultTable, Help: "collection"},
	{Name: propWriteConc, Help: "legacy YCSB alias added to the URL unless set there: unacknowledged|errors_ignored|acknowledged|journaled|replica_acknowledged|majority"},
	{Name: propReadPref, Help: "legacy YCSB alias added to the URL unless set there: primary|primary_preferred|secondary|secondary_preferred|nearest"},
	{Name: propMaxConns, Help: "legacy YCSB alias for the URL option maxPoolSize"},
	{Name: propWaitQueue, Help: "accepted for YCSB compatibility and ignored (the Go driver has no wait-queue multiple)"},
	{Name: propTimeout, Default: strconv.Itoa(defaultTimeoutMS), Help: "deadline of every operation in ms; an expired deadline is SERVICE_UNAVAILABLE"},
	{Name: propConnTimout, Default: strconv.Itoa(defaultConnectTimeoutMS), Help: "ms to connect and answer the first ping at start-up; also the driver's connectTimeoutMS unless the URL sets it"},
	{Name: propInitChunks, Default: "0", Schema: true, Help: "init on a mongos: numInitialChunks for shardCollection (0: server default); not applied to a non-empty collection"},
	{Name: propBalancer, Default: "true", Schema: true, Help: "init on a mongos: false stops the balancer (balancerStop), so that chunk migrations do not disturb the run"},
}

// differences are the ways this adapter differs from YCSB's MongoDbClient.
var differences = []string{
	"batchsize in the run phase: YCSB keeps a client thread's unsent batch when the thread ends (those inserts are never written); ycsbctl writes it at the thread's cleanup (measured as CLEANUP).",
	"mongodb.threadsAllowedToBlockForConnectionMultiplier is ignored: the Go driver has no wait queue multiple (requests wait for a pooled connection until the operation deadline).",
	"mongodb.timeout and mongodb.connecttimeout are ycsbctl additions: the Java driver's defaults have no per-operation deadline.",
	"Schema: YCSB's binding creates nothing; ycsbctl init creates the collection and, on a mongos, shards it on hashed _id (initial chunks, balancer stop). These are not verifiable on FerretDB, which has no mongos.",
}

// config is the parsed, validated configuration. url holds credentials and
// must never be printed; use redactedURL and scrub instead.
type config struct {
	url            string
	redactedURL    string
	database       string
	upsert         bool
	batchSize      int64
	table          string
	timeout        time.Duration
	connectTimeout time.Duration
	initialChunks  int32
	stopBalancer   bool
	cs             *connstring.ConnString
	secrets        []string
}

// maxPoolSize bounds the connections per host (mongodb.maxconnections,
// maxPoolSize): the driver allocates its pool at that size up front.
const (
	maxPoolSize = 100_000
	maxPoolText = "at most 100000 connections"
)

func urlError(value, expected string) error {
	return &properties.Error{Property: propURL, Value: value, Expected: expected}
}

// parseConfig reads and checks every property; errors name the property.
func parseConfig(p *properties.Properties) (*config, error) {
	c := &config{}
	raw, set := p.Lookup(propURL)
	raw = strings.TrimSpace(raw)
	defaulted := !set || raw == ""
	if defaulted {
		raw = defaultURL
	}
	// Collect secrets first so that every later error can be scrubbed.
	c.secrets = secretsOf(raw)
	if !strings.HasPrefix(raw, "mongodb://") && !strings.HasPrefix(raw, "mongodb+srv://") {
		return nil, urlError(redactURL(raw), "a connection string starting with mongodb:// or mongodb+srv://")
	}

	var err error
	if raw, err = applyLegacyOptions(raw, p); err != nil {
		return nil, err
	}
	c.url = raw
	c.redactedURL = redactURL(raw)

	// Note: for mongodb+srv this resolves DNS, exactly as connecting would.
	cs, err := connstring.ParseAndValidate(raw)
	if err != nil {
		return nil, urlError(c.redactedURL, "a valid MongoDB connection string ("+c.scrub(err.Error())+")")
	}
	if cs.MaxPoolSize > maxPoolSize {
		// The driver allocates its pool at this size: a huge one panics.
		return nil, urlError(c.redactedURL, "maxPoolSize "+maxPoolText)
	}
	c.cs = cs
	// YCSB: the URL's database unless the URL was defaulted or names admin
	// (the usual auth database), else "ycsb".
	c.database = defaultDatabase
	if !defaulted && cs.Database != "" && cs.Database != "admin" {
		c.database = cs.Database
	}

	if c.upsert, err = p.Bool(propUpsert, false); err != nil {
		return nil, err
	}
	if c.batchSize, err = p.PositiveInt64(propBatchSize, 1); err != nil {
		return nil, err
	}
	if c.table, err = parseTable(p, defaultTable); err != nil {
		return nil, err
	}
	ms, err := p.PositiveInt64(propTimeout, defaultTimeoutMS)
	if err != nil {
		return nil, err
	}
	c.timeout = msDuration(ms)
	if ms, err = p.PositiveInt64(propConnTimout, defaultConnectTimeoutMS); err != nil {
		return nil, err
	}
	c.connectTimeout = msDuration(ms)
	if c.initialChunks, err = parseInitialChunks(p, 0); err != nil {
		return nil, err
	}
	if c.stopBalancer, err = parseStopBalancer(p, false); err != nil {
		return nil, err
	}
	return c, nil
}

func parseTable(p *properties.Properties, def string) (string, error) {
	t := p.String(propTable, def)
	if t == "" || strings.ContainsAny(t, "$\x00") {
		return "", &properties.Error{Property: propTable, Value: t, Expected: "a MongoDB collection name (non-empty, no '$' or NUL)"}
	}
	return t, nil
}

// parseStopBalancer reads mongodb.shard.balancer (true keeps the balancer
// running) and returns whether init should stop it.
func parseStopBalancer(p *properties.Properties, def bool) (bool, error) {
	on, err := p.Bool(propBalancer, !def)
	if err != nil {
		return false, err
	}
	return !on, nil
}

func parseInitialChunks(p *properties.Properties, def int32) (int32, error) {
	n, err := p.NonNegInt64(propInitChunks, int64(def))
	if err != nil {
		return 0, err
	}
	if n > math.MaxInt32 {
		return 0, &properties.Error{Property: propInitChunks, Value: p.String(propInitChunks, ""), Expected: "a non-negative integer up to 2147483647"}
	}
	return int32(n), nil
}

// msDuration converts milliseconds, saturating instead of overflowing.
func msDuration(ms int64) time.Duration {
	if ms > int64(math.MaxInt64/time.Millisecond) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ms) * time.Millisecond
}

// applyLegacyOptions maps YCSB's pre-URL properties onto URL options, each
// only when the URL does not already carry that option (as YCSB does).
// Unlike YCSB, an unknown value is an error rather than a warning: a typo
// must not silently change what is measured.
func applyLegacyOptions(u string, p *properties.Properties) (string, error) {
	if p.Has(propMaxConns) {
		n, err := p.PositiveInt64(propMaxConns, 0)
		if err != nil {
			return "", err
		}
		if n > maxPoolSize {
			return "", &properties.Error{Property: propMaxConns, Value: strconv.FormatInt(n, 10), Expected: maxPoolText}
		}
		u = addURLOption(u, "maxPoolSize", strconv.FormatInt(n, 10))
	}
	if v, ok := p.Lookup(propWriteConc); ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "errors_ignored", "unacknowledged":
			u = addURLOption(u, "w", "0")
		case "acknowledged":
			u = addURLOption(u, "w", "1")
		case "journaled":
			u = addURLOption(u, "journal", "true")
		case "replica_acknowledged":
			u = addURLOption(u, "w", "2")
		case "majority":
			u = addURLOption(u, "w", "majority")
		default:
			return "", &properties.Error{Property: propWriteConc, Value: v,
				Expected: "one of unacknowledged, errors_ignored, acknowledged, journaled, replica_acknowledged, majority"}
		}
	}
	if v, ok := p.Lookup(propReadPref); ok {
		modes := map[string]string{
			"primary": "primary", "primary_preferred": "primaryPreferred",
			"secondary": "secondary", "secondary_preferred": "secondaryPreferred", "nearest": "nearest",
		}
		m, ok := modes[strings.ToLower(strings.TrimSpace(v))]
		if !ok {
			return "", &properties.Error{Property: propReadPref, Value: v,
				Expected: "one of primary, primary_preferred, secondary, secondary_preferred, nearest"}
		}
		u = addURLOption(u, "readPreference", m)
	}
	return u, nil
}

// addURLOption appends name=value unless the URL already has that option
// (case-insensitively, as URI option names are).
func addURLOption(u, name, value string) string {
	base, query, hasQuery := strings.Cut(u, "?")
	if hasQuery {
		for _, kv := range strings.Split(query, "&") {
			k, _, _ := strings.Cut(kv, "=")
			if strings.EqualFold(k, name) {
				return u
			}
		}
	}
	if !hasQuery {
		// mongodb://host?w=1 is valid, but the spec form has the slash.
		if !strings.Contains(base[strings.Index(base, "://")+3:], "/") {
			base += "/"
		}
		return base + "?" + name + "=" + value
	}
	if query == "" || strings.HasSuffix(query, "&") {
		return u + name + "=" + value
	}
	return u + "&" + name + "=" + value
}

// sensitiveOptions are URL options whose values are secrets (lower case).
var sensitiveOptions = map[string]bool{
	"authmechanismproperties":         true, // may hold AWS_SESSION_TOKEN
	"tlscertificatekeyfilepassword":   true,
	"sslclientcertificatekeypassword": true,
}

// splitUserinfo finds the user:pass part of a connection string. It takes
// the last '@' before the query so that an unescaped '@' or '/' in a
// password is still covered (over-redacting is harmless; leaking is not).
func splitUserinfo(u string) (head, userinfo, tail string, ok bool) {
	i := strings.Index(u, "://")
	if i < 0 {
		return "", "", "", false
	}
	rest := u[i+3:]
	pre := rest
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		pre = rest[:q]
	}
	at := strings.LastIndexByte(pre, '@')
	if at < 0 {
		return "", "", "", false
	}
	return u[:i+3], rest[:at], rest[at:], true
}

// redactURL replaces credentials and secret options with REDACTED, keeping
// hosts, database and the other options for diagnostics.
func redactURL(u string) string {
	if head, ui, tail, ok := splitUserinfo(u); ok {
		r := redacted
		if strings.Contains(ui, ":") {
			r = redacted + ":" + redacted
		}
		u = head + r + tail
	}
	base, query, ok := strings.Cut(u, "?")
	if !ok {
		return u
	}
	parts := strings.Split(query, "&")
	for i, kv := range parts {
		if k, _, hasV := strings.Cut(kv, "="); hasV && sensitiveOptions[strings.ToLower(k)] {
			parts[i] = k + "=" + redacted
		}
	}
	return base + "?" + strings.Join(parts, "&")
}

// secretsOf lists every secret string of a connection string, raw and
// percent-decoded, longest first, for scrub.
func secretsOf(u string) []string {
	var s []string
	add := func(v string) {
		if v == "" {
			return
		}
		s = append(s, v)
		if d, err := url.PathUnescape(v); err == nil && d != v {
			s = append(s, d)
		}
		if d, err := url.QueryUnescape(v); err == nil && d != v {
			s = append(s, d)
		}
	}
	if _, ui, _, ok := splitUserinfo(u); ok {
		add(ui)
		user, pass, hasPass := strings.Cut(ui, ":")
		// A very short user name would mangle every message it happens to
		// occur in; user names are not secret enough to justify that.
		if len(user) >= 3 {
			add(user)
		}
		if hasPass {
			add(pass)
		}
	}
	if _, query, ok := strings.Cut(u, "?"); ok {
		for _, kv := range strings.Split(query, "&") {
			if k, v, hasV := strings.Cut(kv, "="); hasV && sensitiveOptions[strings.ToLower(k)] {
				add(v)
			}
		}
	}
	sort.Slice(s, func(i, j int) bool { return len(s[i]) > len(s[j]) })
	return s
}

// scrub removes every secret of the configured URL from a message (driver
// errors can echo option values or the connection string).
func (c *config) scrub(msg string) string {
	for _, s := range c.secrets {
		msg = strings.ReplaceAll(msg, s, redacted)
	}
	return msg
}
