#!/usr/bin/env bash
# stages.sh STAGE...: runs `make STAGE` for each stage in turn (make
# test-all: setup lint unit race integration cluster-test), stopping at the
# first that fails as make's prerequisites did. Each stage ends with a line
# giving its duration, and the whole ends, also after a failure or an
# interrupt, with a table of every stage: its status and duration. A CI
# log that keeps only its tail thus says where the time went and which
# stage failed.
#
#   MAKE  the make to run (default make; the Makefile passes $(MAKE))
set -uo pipefail
[ $# -gt 0 ] || { echo "usage: stages.sh STAGE..." >&2; exit 2; }
MAKE="${MAKE:-make}"

stages=("$@")
declare -A status took
for s in "${stages[@]}"; do status[$s]="not run"; took[$s]=""; done
t_all=$SECONDS

# hms prints N seconds as 1h02m03s, 2m03s or 3s.
hms() {
	local s=$1
	if ((s >= 3600)); then
		printf '%dh%02dm%02ds' $((s / 3600)) $((s % 3600 / 60)) $((s % 60))
	elif ((s >= 60)); then
		printf '%dm%02ds' $((s / 60)) $((s % 60))
	else
		printf '%ds' "$s"
	fi
}

table() {
	echo "=== stages: duration and status ==="
	printf '%-14s %-10s %s\n' stage time status
	local s
	for s in "${stages[@]}"; do
		printf '%-14s %-10s %s\n' "$s" "${took[$s]:--}" "${status[$s]}"
	done
	printf '%-14s %-10s %s\n' total "$(hms $((SECONDS - t_all)))" "$1"
}

current=""
rc=0
# An interrupt ends the stage's make (same process group) and then this
# script, which still prints the table.
interrupted() {
	trap - INT TERM
	if [ -n "$current" ]; then
		status[$current]="interrupted"
		took[$current]="$(hms $((SECONDS - t0)))"
	fi
	table "interrupted"
	exit 130
}
trap interrupted INT TERM

for s in "${stages[@]}"; do
	current=$s
	t0=$SECONDS
	"$MAKE" --no-print-directory "$s"
	rc=$?
	took[$s]="$(hms $((SECONDS - t0)))"
	current=""
	if [ $rc = 0 ]; then
		status[$s]="ok"
		echo "=== stage $s: ok after ${took[$s]} ==="
	else
		status[$s]="FAILED (exit $rc)"
		echo "=== stage $s: FAILED (exit $rc) after ${took[$s]} ==="
		break
	fi
done

if [ $rc = 0 ]; then table "ok"; else table "FAILED"; fi
exit $rc
