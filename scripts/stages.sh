#!/usr/bin/env bash
# stages.sh STAGE...: runs `make STAGE` for each stage in turn (make
# test-all), stopping at the first that fails, as make's prerequisites did.
# Each stage ends with a line giving its duration, and the whole ends, also
# after a failure or an interrupt, with a table of every stage: its status
# and duration. A CI log that keeps only its tail thus says where the time
# went and which stage failed.
#
#   bg:NAME    starts `make NAME` in the background (its output goes to
#              .NAME.log) beside the stages that follow: work that waits
#              on the network, such as fetching the database jars, while
#              the stages after it keep the CPU busy
#   wait:NAME  waits for the background NAME; its failure is a stage's
#              (the end of its log is shown). One not waited for is
#              waited for at the end; one still running when a stage
#              fails is stopped.
#
#   MAKE   the make to run (default make; the Makefile passes $(MAKE))
set -uo pipefail
[ $# -gt 0 ] || { echo "usage: stages.sh STAGE|bg:STAGE|wait:STAGE..." >&2; exit 2; }
MAKE="${MAKE:-make}"

# names: every stage in order, each once; a background one is marked in
# kind. status and took fill in as they run.
names=()
declare -A kind status took bgpid bgstart
for a in "$@"; do
	case "$a" in
	wait:*) continue ;;
	bg:*) n=${a#bg:}; kind[$n]=background ;;
	*) n=$a; kind[$n]=stage ;;
	esac
	names+=("$n")
	status[$n]="not run"
	took[$n]=""
done
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
	local n label
	for n in "${names[@]}"; do
		label=$n
		[ "${kind[$n]}" = background ] && label="bg:$n"
		printf '%-14s %-10s %s\n' "$label" "${took[$n]:--}" "${status[$n]}"
	done
	printf '%-14s %-10s %s\n' total "$(hms $((SECONDS - t_all)))" "$1"
}

# finished records how stage n ended after t0, with make's exit code.
finished() {
	local n=$1 t0=$2 rc=$3 what=stage
	[ "${kind[$n]}" = background ] && what="background stage"
	took[$n]="$(hms $((SECONDS - t0)))"
	if [ "$rc" = 0 ]; then
		status[$n]="ok"
		echo "=== $what $n: ok after ${took[$n]} ==="
	else
		status[$n]="FAILED (exit $rc)"
		echo "=== $what $n: FAILED (exit $rc) after ${took[$n]} ==="
	fi
}

# wait_bg waits for background stage n and shows the end of its log if it
# failed.
wait_bg() {
	local n=$1 rc=0
	[ -n "${bgpid[$n]:-}" ] || return 0
	wait "${bgpid[$n]}" || rc=$?
	unset "bgpid[$n]"
	finished "$n" "${bgstart[$n]}" "$rc"
	if [ "$rc" != 0 ]; then
		echo "--- end of .$n.log ---"
		tail -n 30 ".$n.log"
	fi
	return "$rc"
}

# stop_bg stops the background stages still running (only the makes this
# script started, by PID), marking them with why.
stop_bg() {
	local n
	for n in "${!bgpid[@]}"; do
		kill "${bgpid[$n]}" 2>/dev/null
		wait "${bgpid[$n]}" 2>/dev/null
		status[$n]="$1"
		took[$n]="$(hms $((SECONDS - bgstart[$n])))"
		unset "bgpid[$n]"
	done
}

current=""
# An interrupt ends the stage's make (same process group) and then this
# script, which still prints the table.
interrupted() {
	trap - INT TERM
	if [ -n "$current" ]; then
		status[$current]="interrupted"
		took[$current]="$(hms $((SECONDS - t0)))"
	fi
	stop_bg "interrupted"
	table "interrupted"
	exit 130
}
trap interrupted INT TERM

rc=0
for a in "$@"; do
	case "$a" in
	wait:*)
		wait_bg "${a#wait:}" || rc=$?
		;;
	bg:*)
		n=${a#bg:}
		bgstart[$n]=$SECONDS
		status[$n]="running"
		echo "=== background stage $n: started (output in .$n.log) ==="
		"$MAKE" --no-print-directory "$n" >".$n.log" 2>&1 &
		bgpid[$n]=$!
		;;
	*)
		current=$a
		t0=$SECONDS
		"$MAKE" --no-print-directory "$a"
		stage_rc=$?
		current=""
		finished "$a" "$t0" "$stage_rc"
		rc=$stage_rc
		;;
	esac
	[ "$rc" = 0 ] || break
done

if [ "$rc" = 0 ]; then
	for n in "${!bgpid[@]}"; do wait_bg "$n" || rc=$?; done
else
	stop_bg "stopped (a stage failed)"
fi
if [ "$rc" = 0 ]; then table "ok"; else table "FAILED"; fi
exit "$rc"
