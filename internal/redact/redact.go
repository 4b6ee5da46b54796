// Package redact hides secrets wherever a property value or a command line
// is shown or stored (the echoed command line, run.json, report.html,
// error messages). It works by rule rather than by a list of known
// property names, because adapters and connection strings bring names of
// their own (tlsCertificateKeyFilePassword, authMechanismProperties, ...).
//
// The rule, applied to a property name, a flag name or a query parameter
// name, case-insensitively and ignoring the separators . _ - and spaces:
//
//   - the name contains password, passwd, passphrase, secret, token,
//     credential, authorization, jaasconfig or authmechanismproperties;
//   - or it contains a qualified key: apikey, accesskey, privatekey,
//     secretkey, signingkey, encryptionkey, masterkey, sessionkey,
//     accountkey, sharedkey;
//   - or one of its words (split at the separators) is exactly key, pass,
//     pw or pwd.
//
// The bare substring "key" is deliberately not enough: ordinary workload
// properties such as keyprefix, cassandra.keyspace, insertorder's
// zeropadding or dynamodb.primaryKey name keys of the data, not secrets,
// and hiding them would make results unreadable.
//
// Inside any value, two more rules apply: the password of a URL's
// user:password@ part, and the value of every name=value or NAME:value
// pair whose name is secret by the rule above (query parameters such as
// ?tlsCertificateKeyFilePassword=x or AWS_SESSION_TOKEN:y). In running
// text, outside a query string (after ? & or ;), the whole-word rule is
// left out, so that "expected key=value" stays readable, and a secret name
// that follows a word and ends with ": " is part of a sentence ("rejected
// the token: wrong token"), not a label: redaction hides values, never the
// words around them.
package redact

import (
	"regexp"
	"strings"
)

// Marker replaces every hidden value.
const Marker = "REDACTED"

// secretParts mark a secret wherever they appear in a normalised name.
var secretParts = []string{
	"password", "passwd", "passphrase", "secret", "token", "credential",
	"authorization", "jaasconfig", "authmechanismproperties",
	"apikey", "accesskey", "privatekey", "secretkey", "signingkey",
	"encryptionkey", "masterkey", "sessionkey", "accountkey", "sharedkey",
}

// secretWords mark a secret only as a whole word of the name.
var secretWords = map[string]bool{"key": true, "pass": true, "pw": true, "pwd": true}

func isSeparator(r rune) bool {
	return r == '.' || r == '_' || r == '-' || r == ' '
}

// SecretName reports whether a property, flag or parameter of this name
// holds a secret.
func SecretName(name string) bool {
	return secretName(name, true)
}

// secretName applies the rule; words=false leaves out the whole-word rule
// (key, pass, pw, pwd), which is too eager for free text ("expected
// key=value").
func secretName(name string, words bool) bool {
	lower := strings.ToLower(strings.TrimLeft(name, "-"))
	if lower == "" {
		return false
	}
	var norm strings.Builder
	for _, r := range lower {
		if !isSeparator(r) {
			norm.WriteRune(r)
		}
	}
	n := norm.String()
	for _, p := range secretParts {
		if strings.Contains(n, p) {
			return true
		}
	}
	if !words {
		return false
	}
	for _, w := range strings.FieldsFunc(lower, isSeparator) {
		if secretWords[w] {
			return true
		}
	}
	return false
}

// Value returns what may be shown of the value of property name: the
// marker for a secret name (an empty value stays empty, so that "not set"
// remains visible), else the value with embedded secrets hidden (Text).
func Value(name, value string) string {
	if SecretName(name) {
		if value == "" {
			return ""
		}
		return Marker
	}
	return Text(value)
}

// Properties returns a copy of props with every value passed through
// Value.
func Properties(props map[string]string) map[string]string {
	if props == nil {
		return nil
	}
	out := make(map[string]string, len(props))
	for k, v := range props {
		out[k] = Value(k, v)
	}
	return out
}

// Args returns a copy of a command line with secrets hidden: "-p k=v" and
// bare "k=v" arguments by Value, "--flag value" and "--flag=value" when
// the flag's name is secret (--token, --tls-key, ...), and URLs and
// secret parameters inside any other argument.
func Args(args []string) []string {
	out := make([]string, len(args))
	hideNext := false
	for i, a := range args {
		if hideNext {
			hideNext = false
			if !strings.HasPrefix(a, "-") {
				out[i] = Marker
				continue
			}
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			name, v, hasValue := strings.Cut(a, "=")
			switch {
			case !hasValue:
				out[i] = a
				hideNext = SecretName(name)
			case SecretName(name):
				out[i] = name + "=" + Marker
			case strings.TrimLeft(name, "-") == "p" && strings.Contains(v, "="):
				k, pv, _ := strings.Cut(v, "=")
				out[i] = name + "=" + k + "=" + Value(k, pv)
			default:
				out[i] = name + "=" + Text(v)
			}
			continue
		}
		if k, v, ok := strings.Cut(a, "="); ok && k != "" && !strings.Contains(k, "://") {
			out[i] = k + "=" + Value(k, v)
			continue
		}
		out[i] = Text(a)
	}
	return out
}

// scheme finds the start of a URL.
var scheme = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://`)

// param finds name=value and NAME:value pairs: a name after the start of
// the text or a delimiter, then = or :.
var param = regexp.MustCompile(`(?:^|[?&;,=\s])([A-Za-z0-9_.\-]+)([=:])`)

// Text hides the secrets embedded in a free-form value: URL passwords and
// the values of secret-named parameters.
func Text(s string) string {
	if s == "" {
		return s
	}
	return params(userinfo(s))
}

// userinfo replaces the password of every scheme://user:password@host in
// s. The user:password part ends at the last '@' before the URL's query or
// fragment, as Go's url.Parse and the MongoDB driver read it; this also
// catches passwords that are not validly escaped (containing '/' or '@'),
// which url.Parse would reject.
func userinfo(s string) string {
	locs := scheme.FindAllStringIndex(s, -1)
	if locs == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for i, loc := range locs {
		start := loc[1]
		end := len(s)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		if ws := strings.IndexAny(s[start:end], " \t\r\n"); ws >= 0 {
			end = start + ws
		}
		region := s[start:end]
		pre := region
		if q := strings.IndexAny(pre, "?#"); q >= 0 {
			pre = pre[:q]
		}
		at := strings.LastIndexByte(pre, '@')
		if at < 0 {
			continue
		}
		colon := strings.IndexByte(pre[:at], ':')
		if colon < 0 || colon+1 == at {
			continue
		}
		b.WriteString(s[last : start+colon+1])
		b.WriteString(Marker)
		last = start + at
	}
	b.WriteString(s[last:])
	return b.String()
}

// afterWord reports whether the name starting at i follows a word of
// running text (only spaces between them).
func afterWord(s string, i int) bool {
	j := i - 1
	for j >= 0 && (s[j] == ' ' || s[j] == '\t') {
		j--
	}
	if j < 0 || j == i-1 {
		return false
	}
	c := s[j]
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// params replaces the values of secret-named parameters. A value after '='
// runs to the next & ; or white space (commas belong to it:
// authMechanismProperties=AWS_SESSION_TOKEN:x,SERVICE_NAME:y); after ':'
// it also stops at a comma.
func params(s string) string {
	if !strings.ContainsAny(s, "=:") {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range param.FindAllStringSubmatchIndex(s, -1) {
		if m[0] < last {
			continue // inside a value already hidden
		}
		name := s[m[2]:m[3]]
		// The whole-word rule (key, pass, ...) applies to query
		// parameters (after ? & or ;), not to names in running text.
		inQuery := m[0] < m[2] && strings.IndexByte("?&;", s[m[0]]) >= 0
		if !secretName(name, inQuery) {
			continue
		}
		vstart := m[1]
		for vstart < len(s) && (s[vstart] == ' ' || s[vstart] == '\t') {
			vstart++ // "password: hunter2"
		}
		if vstart > m[1] && s[m[4]:m[5]] == ":" && !inQuery && afterWord(s, m[2]) {
			// "rejected the token: wrong token": a name inside a
			// sentence, then a colon and a space, introduces words,
			// not a value; only a label that starts the text or
			// follows punctuation ("failed: password: x") does.
			continue
		}
		stops := "&; \t\r\n"
		if s[m[4]:m[5]] == ":" {
			stops += ","
		}
		vend := len(s)
		if j := strings.IndexAny(s[vstart:], stops); j >= 0 {
			vend = vstart + j
		}
		if vend == vstart || s[vstart:vend] == Marker {
			continue
		}
		b.WriteString(s[last:vstart])
		b.WriteString(Marker)
		last = vend
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
