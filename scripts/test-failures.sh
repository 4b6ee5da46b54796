#!/usr/bin/env bash
# test-failures.sh LOG: after a failed `go test -v`, print which tests failed
# and the last lines each of them logged. The make targets filter their
# output to a few kinds of line, and a failed subtest's "--- FAIL" line is
# indented (so it was filtered out) and its error far above the end: a CI
# log that keeps only its tail then says "TestCluster failed" and not why.
set -uo pipefail
log=${1:?usage: test-failures.sh LOG}
[ -f "$log" ] || { echo "test-failures.sh: no $log"; exit 0; }
echo "=== failed tests (from $log) ==="
grep -E '^[[:space:]]*--- FAIL: ' "$log" || echo "(no --- FAIL line: the test binary died or timed out; its last lines:)"
# Lines belong to the test named by the last "=== RUN|CONT|NAME" marker
# (go test -v names the test again whenever output switches to it).
awk -v keep=25 '
	/^=== (RUN|CONT|NAME|PAUSE)/ { cur = $3; next }
	/^[ \t]*--- (FAIL|PASS|SKIP): / { if ($2 == "FAIL:") failed[$3] = 1; next }
	/^(FAIL|ok|PASS)([ \t]|$)/ { cur = ""; next }
	{ if (cur != "") { n[cur]++; buf[cur, n[cur] % keep] = $0 } }
	END {
		for (t in failed) {
			if (!(t in n)) continue
			printf "--- output of %s (last %d lines) ---\n", t, (n[t] < keep ? n[t] : keep)
			start = (n[t] > keep ? n[t] - keep + 1 : 1)
			for (i = start; i <= n[t]; i++) print buf[t, i % keep]
		}
	}' "$log"
if ! grep -qE '^[[:space:]]*--- FAIL: ' "$log"; then tail -n 40 "$log"; fi
