#!/usr/bin/env bash
# fuzz.sh: run every Go fuzz target (func FuzzX in a _test.go) for
# FUZZTIME each (default 60s), one after another: Go's fuzzer runs one
# target of one package per invocation. Prints each target's executions,
# new corpus entries and time, then a total; exits 1 when any target
# failed, after running the others, with the failing input's path
# (testdata/fuzz/FuzzX/..., which `go test` then runs as a regular test:
# commit it with the fix).
#
#   FUZZTIME=10s scripts/fuzz.sh            # make fuzz-ci
#   scripts/fuzz.sh ./internal/spool/       # only these packages
#   FUZZ=FuzzOpen scripts/fuzz.sh           # only targets matching
#
# FUZZMINIMIZETIME (default 5s) bounds the minimisation of each new
# corpus entry, which the fuzzer's default (60s) lets eat a short budget.
set -uo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-60s}
minimize=${FUZZMINIMIZETIME:-5s}
filter=${FUZZ:-.}
GO=${GO:-go}

# The packages with a fuzz target; `go test -list` then names their
# targets (only these packages' test binaries are built to list them).
if [ $# -gt 0 ]; then
	pkgs=("$@")
else
	mapfile -t pkgs < <(git ls-files '*_test.go' | xargs grep -l '^func Fuzz[A-Za-z0-9_]*(f \*testing.F)' | xargs -n1 dirname | sort -u | sed 's|^|./|')
fi
[ ${#pkgs[@]} -gt 0 ] || { echo "fuzz.sh: no fuzz targets"; exit 1; }

targets=()
list=$($GO test -list '^Fuzz' "${pkgs[@]}" 2>&1) || { echo "$list"; echo "fuzz.sh: listing the targets failed"; exit 1; }
# go test -list prints each package's targets, then "ok  PKG  TIME".
pending=()
while read -r line; do
	case "$line" in
	Fuzz*) pending+=("$line") ;;
	ok*)
		pkg=$(awk '{print $2}' <<<"$line")
		for t in "${pending[@]}"; do
			[[ $t =~ $filter ]] && targets+=("$pkg $t")
		done
		pending=()
		;;
	esac
done <<<"$list"
[ ${#targets[@]} -gt 0 ] || { echo "fuzz.sh: no target matches FUZZ=$filter"; exit 1; }

echo "fuzz.sh: ${#targets[@]} targets, $fuzztime each"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=()
total=0
start=$SECONDS
for pt in "${targets[@]}"; do
	read -r pkg target <<<"$pt"
	t0=$SECONDS
	$GO test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "$pkg" >"$log" 2>&1
	rc=$?
	# The fuzzer's last progress line holds the run's executions.
	execs=$(grep -oE 'execs: [0-9]+' "$log" | tail -1 | awk '{print $2}')
	found=$(grep -oE 'new interesting: [0-9]+' "$log" | tail -1 | awk '{print $3}')
	total=$((total + ${execs:-0}))
	if [ $rc -eq 0 ]; then
		status=ok
	else
		status=FAIL
		failed+=("$pkg $target")
	fi
	printf '%-4s %-45s %-24s %10s execs %5s new %4ss\n' "$status" "$pkg" "$target" "${execs:-0}" "${found:-0}" $((SECONDS - t0))
	if [ $rc -ne 0 ]; then
		echo "--- $target failed; the fuzzer said:"
		grep -vE '^fuzz: elapsed:' "$log" | tail -40
		echo "---"
	fi
done
echo "fuzz.sh: $total executions in $((SECONDS - start))s over ${#targets[@]} targets"
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz.sh: FAILED: ${failed[*]}"
	echo "fuzz.sh: the failing inputs are under each package's testdata/fuzz/; fix the bug and commit them"
	exit 1
fi
