#!/usr/bin/env bash
# test-failures.sh LOG: after a failed `go test` (with or without -v), print
# which tests failed and the last lines each of them logged, and, when a
# test binary timed out, which tests were still running and where the test
# code was waiting. The make targets filter their output or print much of
# it, a failed subtest's "--- FAIL" line is indented and its error far above
# the end, and a timeout's list of running tests comes before thousands of
# lines of goroutine stacks: a CI log that keeps only its tail would
# otherwise say "FAIL pkg 1800s" and not which test hung or why.
set -uo pipefail
log=${1:?usage: test-failures.sh LOG}
[ -f "$log" ] || { echo "test-failures.sh: no $log"; exit 0; }
echo "=== failed tests (from $log) ==="
grep -E '^[[:space:]]*--- FAIL: ' "$log" || echo "(no --- FAIL line: the test binary died or timed out)"
# Lines belong to the test named by the last "=== RUN|CONT|NAME" marker
# (go test -v names the test again whenever output switches to it);
# without -v, a failed test's lines follow its own "--- FAIL" line.
awk -v keep=25 '
	/^=== (RUN|CONT|NAME|PAUSE)/ { verbose = 1; cur = $3; next }
	/^[ \t]*--- (FAIL|PASS|SKIP): / {
		if ($2 == "FAIL:") { failed[$3] = 1; if (!verbose) cur = $3 }
		next
	}
	/^(FAIL|ok|PASS)([ \t]|$)/ || /^panic: / { cur = ""; next }
	{ if (cur != "") { n[cur]++; buf[cur, n[cur] % keep] = $0 } }
	END {
		for (t in failed) {
			if (!(t in n)) continue
			printf "--- output of %s (last %d lines) ---\n", t, (n[t] < keep ? n[t] : keep)
			start = (n[t] > keep ? n[t] - keep + 1 : 1)
			for (i = start; i <= n[t]; i++) print buf[t, i % keep]
		}
	}' "$log"
if grep -q '^panic: test timed out' "$log"; then
	# The timeout's own list of the tests still running, then every
	# goroutine whose stack passes through test code (the test function
	# and what it started), each cut to its first lines: where they wait.
	echo "=== timed out ==="
	awk '/^panic: test timed out/ { on = 1 } on && /^$/ { exit } on' "$log"
	awk -v maxg=12 -v maxl=24 '
		/^goroutine [0-9]+ \[/ { flush(); g = $0; nl = 0; hit = 0; next }
		g != "" && (/^$/ || /^(exit status |FAIL|ok )/) { flush(); next }
		g != "" { if (nl < maxl) lines[++nl] = $0; if ($0 ~ /_test\.go:[0-9]+/) hit = 1 }
		function flush() {
			if (g != "" && hit && shown < maxg) {
				shown++
				print g
				for (i = 1; i <= nl; i++) print lines[i]
				print ""
			}
			g = ""
		}
		END { flush() }' "$log"
elif ! grep -qE '^[[:space:]]*--- FAIL: ' "$log"; then
	tail -n 40 "$log"
fi
