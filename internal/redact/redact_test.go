package redact

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestSecretName(t *testing.T) {
	secret := []string{
		"password", "cassandra.password", "mongodb.Password", "db.passwd", "tlsCertificateKeyFilePassword",
		"sslClientCertificateKeyPassword", "hbase.auth.token", "--token", "token-file", "AWS_SESSION_TOKEN",
		"aws.secret", "some.secretkey", "s3.accessKey", "aws_access_key_id", "api-key", "apikey", "gcp.privateKey",
		"authMechanismProperties", "credentials", "sasl.jaas.config", "ssl.key", "--tls-key", "key", "db.pass",
		"redis.pw", "x.pwd", "Authorization", "tls.passphrase",
	}
	for _, n := range secret {
		if !SecretName(n) {
			t.Errorf("%q not treated as a secret", n)
		}
	}
	plain := []string{
		"keyprefix", "cassandra.keyspace", "ycsbctl.keyspace.operationcount", "insertorder", "zeropadding",
		"hbase.presplit.keys", "dynamodb.primaryKey", "keylength", "keychooser", "fieldnameprefix", "recordcount",
		"mongodb.url", "cassandra.username", "tlsCertificateKeyFile", "authSource", "authMechanism", "keytab",
		"hbase.zookeeper.quorum", "--tls-cert", "--tls-ca", "-P", "p", "requestdistribution", "bypass", "compass",
	}
	for _, n := range plain {
		if SecretName(n) {
			t.Errorf("ordinary name %q treated as a secret", n)
		}
	}
}

// TestOrdinaryPropertiesStayVisible reads every property name the project
// reads (string literals passed to the typed getters, Prop constants,
// adapter property names, built-in workload files) and checks that none
// but the genuinely secret ones would be hidden.
func TestOrdinaryPropertiesStayVisible(t *testing.T) {
	root := filepath.Join("..", "..")
	getter := regexp.MustCompile(`\.(?:String|Int64|NonNegInt64|PositiveInt64|Float64|Proportion|Bool|OneOf|Lookup|Has|Duration)\("([^"]+)"|Prop[A-Za-z0-9]*\s*=\s*"([^"]+)"|"((?:mongodb|cassandra|hbase|embedded|basicdb)\.[A-Za-z0-9_.]+)"`)
	workloadKey := regexp.MustCompile(`(?m)^([a-z][A-Za-z0-9_.]*)\s*=`)
	names := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		switch {
		case strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go"):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range getter.FindAllStringSubmatch(string(b), -1) {
				for _, g := range m[1:] {
					if g != "" {
						names[g] = true
					}
				}
			}
		case filepath.Base(filepath.Dir(path)) == "workloads" && !strings.Contains(d.Name(), "."):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range workloadKey.FindAllStringSubmatch(string(b), -1) {
				names[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 80 {
		t.Fatalf("found only %d property names; the scan is broken", len(names))
	}
	// cassandra.ssl.key names a private key's file: the path is no
	// secret, but hiding it (like --tls-key's) costs nothing, and the
	// rule that catches "key" as a word is what protects real keys.
	secrets := map[string]bool{"cassandra.password": true, "cassandra.ssl.key": true}
	for n := range names {
		if SecretName(n) != secrets[n] {
			t.Errorf("property %q: SecretName=%v", n, SecretName(n))
		}
	}
	for n := range secrets {
		if !names[n] {
			t.Errorf("%q no longer found by the scan", n)
		}
	}
}

func TestText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"mongodb://ycsb:hunter2@db1:27017,db2:27017/ycsb?w=1", "mongodb://ycsb:REDACTED@db1:27017,db2:27017/ycsb?w=1"},
		{"mongodb://db1:27017/ycsb", "mongodb://db1:27017/ycsb"},
		{"http://user:pa%zz@host", "http://user:REDACTED@host"},
		{"mongodb://u:p/w@h/db", "mongodb://u:REDACTED@h/db"},
		{"mongodb://u:p@ss@h/db", "mongodb://u:REDACTED@h/db"},
		{"mongodb://u:pw@h1:27017,mongodb://v:pw2@h2/db", "mongodb://u:REDACTED@h1:27017,mongodb://v:REDACTED@h2/db"},
		{"mongodb://h/?tlsCertificateKeyFilePassword=x1&w=1", "mongodb://h/?tlsCertificateKeyFilePassword=REDACTED&w=1"},
		{"mongodb://h/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:tok,SERVICE_NAME:s&w=1",
			"mongodb://h/?authMechanism=MONGODB-AWS&authMechanismProperties=REDACTED&w=1"},
		{"AWS_SESSION_TOKEN:tok,SERVICE_NAME:s", "AWS_SESSION_TOKEN:REDACTED,SERVICE_NAME:s"},
		{"jdbc:x://h;user=u;password=pw;db=y", "jdbc:x://h;user=u;password=REDACTED;db=y"},
		{"connect failed: password: hunter2", "connect failed: password: REDACTED"},
		{"password: hunter2", "password: REDACTED"},
		// A name inside a sentence is a word, not a label: only values
		// are hidden, never the words around them.
		{"agent 0 (h:7420): rejected the token: wrong token (--token)", "agent 0 (h:7420): rejected the token: wrong token (--token)"},
		{"flag --token-file: open /etc/t: no such file or directory", "flag --token-file: open /etc/t: no such file or directory"},
		{"the token:hunter2 was refused", "the token:REDACTED was refused"},
		{"mongodb://h/?tlsCertificateKeyFile=/etc/k.pem&keyprefix=user", "mongodb://h/?tlsCertificateKeyFile=/etc/k.pem&keyprefix=user"},
		{"value@x", "value@x"},
		{"https://h/api?key=k1&pw=p1", "https://h/api?key=REDACTED&pw=REDACTED"},
		{`flag -p "x": expected key=value`, `flag -p "x": expected key=value`},
		{"auth failed: api_key=k1", "auth failed: api_key=REDACTED"},
		{"zipfian", "zipfian"},
		{"0.95", "0.95"},
		{"12:30", "12:30"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
		if got := Text(Text(tc.in)); got != tc.want {
			t.Errorf("Text is not idempotent on %q: %q", tc.in, got)
		}
	}
}

func TestProperties(t *testing.T) {
	in := map[string]string{
		"cassandra.password": "hunter2",
		"hbase.token":        "",
		"recordcount":        "1000",
		"keyprefix":          "user",
		"cassandra.keyspace": "ycsb",
		"mongodb.url":        "mongodb://u:hunter2@h/?tlsCertificateKeyFilePassword=hunter3",
	}
	out := Properties(in)
	want := map[string]string{
		"cassandra.password": Marker,
		"hbase.token":        "",
		"recordcount":        "1000",
		"keyprefix":          "user",
		"cassandra.keyspace": "ycsb",
		"mongodb.url":        "mongodb://u:REDACTED@h/?tlsCertificateKeyFilePassword=REDACTED",
	}
	for k, v := range want {
		if out[k] != v {
			t.Errorf("%s = %q, want %q", k, out[k], v)
		}
	}
	if in["cassandra.password"] != "hunter2" {
		t.Error("the input was modified")
	}
}

func TestArgs(t *testing.T) {
	in := []string{"run", "cassandra", "-p", "cassandra.password=hunter2", "-p", "mongodb.url=mongodb://u:hunter2@h1,h2/ycsb",
		"--token", "hunter2", "--token=hunter2", "-p", "recordcount=10", "--tls-cert", "a.pem", "--tls-key", "k.pem",
		"-p=aws.secret=hunter2", "-p", "keyprefix=user", "--insecure-listen", "-P", "workloada", "--results", "out",
		"mongodb://v:hunter2@h3", "x.password=hunter2"}
	out := Args(in)
	joined := strings.Join(out, " ")
	if strings.Contains(joined, "hunter2") {
		t.Fatalf("leaked: %s", joined)
	}
	for _, keep := range []string{"run cassandra", "recordcount=10", "--tls-cert a.pem", "--tls-key REDACTED", "cassandra.password=REDACTED",
		"mongodb://u:REDACTED@h1,h2/ycsb", "--token REDACTED", "--token=REDACTED", "-p=aws.secret=REDACTED", "keyprefix=user",
		"--insecure-listen -P workloada --results out", "mongodb://v:REDACTED@h3", "x.password=REDACTED"} {
		if !strings.Contains(joined, keep) {
			t.Errorf("lost %q: %s", keep, joined)
		}
	}
	if len(out) != len(in) {
		t.Fatalf("length changed: %v", out)
	}
}
