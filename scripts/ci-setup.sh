#!/usr/bin/env bash
# Installs everything the test suite needs on a Debian 12 machine (run as
# root), and fails when it cannot: CI sets YCSBCTL_REQUIRE_TOOLS=1, under
# which a test whose tool is missing fails instead of skipping, so a tool
# this script leaves out would fail the run later with a less clear message.
#
#   Debian packages: OpenJDK 17 and Maven (Cassandra, HBase, Java YCSB),
#     tmux (live view), Chromium and a font for its screenshots (HTML
#     report), promtool (package prometheus: dashboard and exposition
#     checks), python3-venv.
#   .venv/ in the checkout: the pinned Python packages of
#     scripts/requirements-test.txt (hdrh, openpyxl, ansible-core,
#     ansible-lint). Debian's python3 is "externally managed" (PEP 668), so
#     nothing goes into the system Python.
#   .tools/bin/golangci-lint: a pinned golangci-lint v2 built with our Go.
#
# Idempotent: what is already there is only checked; apt-get update runs
# once, and only when a package must be installed. Ends with one line per
# tool and its version.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

GOLANGCI_LINT_VERSION=v2.15.0
REQUIREMENTS=scripts/requirements-test.txt
VENV="$root/.venv"
TOOLS_BIN="$root/.tools/bin"

die() { echo "ci-setup: FAILED: $*" >&2; exit 1; }
say() { echo "ci-setup: $*"; }

[ "$(id -u)" = 0 ] || die "must run as root (it installs Debian packages)"
command -v apt-get >/dev/null && command -v dpkg >/dev/null || die "apt-get/dpkg not found: this script supports Debian 12"
arch="$(dpkg --print-architecture)"
java17="/usr/lib/jvm/java-17-openjdk-$arch"

# Go is the project's toolchain and no Debian 12 package is new enough, so
# it must already be there; say so plainly instead of failing in a build.
command -v go >/dev/null || die "go not found on PATH (Go $(sed -n 's/^go //p' go.mod) or newer is required)"

# --- Debian packages ---------------------------------------------------
# Each entry: package|the check that proves it is usable.
apt_wants=(
	"openjdk-17-jdk-headless|test -x $java17/bin/javac"
	"maven|command -v mvn"
	"tmux|command -v tmux"
	"chromium|command -v chromium"
	"libreoffice-calc-nogui|command -v soffice"
	"fonts-liberation|test -d /usr/share/fonts/truetype/liberation"
	"prometheus|command -v promtool"
	"python3|test -x /usr/bin/python3"
	"python3-venv|/usr/bin/python3 -c 'import ensurepip, venv'"
	# The one-machine cluster (make cluster-test): hosts are network
	# namespaces reached over SSH. policy-rc.d keeps sshd from starting on
	# the machine itself.
	"openssh-server|test -x /usr/sbin/sshd"
	"iproute2|command -v ip"
	# scripts/bench-dbs.sh, run on its basic rows by an integration test:
	# GNU time for each run's CPU, strace and perf for its system calls
	# (perf must be able to count the raw_syscalls tracepoint, which needs
	# tracefs; see the mount below).
	"time|test -x /usr/bin/time"
	"strace|command -v strace"
	"linux-perf|command -v perf"
)
missing_pkgs=()
for w in "${apt_wants[@]}"; do
	pkg="${w%%|*}" check="${w#*|}"
	eval "$check" >/dev/null 2>&1 || missing_pkgs+=("$pkg")
done

# PIDs of processes named prometheus, from /proc (a fresh machine may lack
# procps' pgrep).
prometheus_pids() {
	local p
	for p in /proc/[0-9]*; do
		if [ "$(cat "$p/comm" 2>/dev/null)" = prometheus ]; then echo "${p#/proc/}"; fi
	done | sort
}

if [ ${#missing_pkgs[@]} -gt 0 ]; then
	say "installing Debian packages: ${missing_pkgs[*]}"
	# The prometheus package starts its server from the maintainer
	# scripts; policy-rc.d answering 101 ("action forbidden") keeps
	# invoke-rc.d/deb-systemd-invoke from starting any service. An
	# existing policy-rc.d is put back afterwards.
	policy=/usr/sbin/policy-rc.d
	saved_policy=""
	if [ -e "$policy" ]; then
		saved_policy="$(mktemp)"
		cp -p "$policy" "$saved_policy"
	fi
	restore_policy() {
		if [ -n "$saved_policy" ]; then mv -f "$saved_policy" "$policy"; else rm -f "$policy"; fi
	}
	trap restore_policy EXIT
	printf '#!/bin/sh\n# written by ycsbctl scripts/ci-setup.sh during apt-get install\nexit 101\n' >"$policy"
	chmod 755 "$policy"
	before="$(prometheus_pids)"

	export DEBIAN_FRONTEND=noninteractive
	# Another process may hold the dpkg lock (unattended upgrades,
	# another setup); wait for it rather than fail at once.
	apt_opts=(-o DPkg::Lock::Timeout=600 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
	# apt's progress goes to a log that is shown only when it fails.
	apt_log="$(mktemp)"
	timeout 900 apt-get "${apt_opts[@]}" update -qq >"$apt_log" 2>&1 \
		|| { tail -n 40 "$apt_log" >&2; die "apt-get update failed"; }
	timeout 1800 apt-get "${apt_opts[@]}" install -y -qq --no-install-recommends "${missing_pkgs[@]}" >>"$apt_log" 2>&1 \
		|| { tail -n 40 "$apt_log" >&2; die "apt-get install ${missing_pkgs[*]} failed"; }
	rm -f "$apt_log"

	restore_policy
	trap - EXIT
	# Belt and braces: a prometheus server started by the install (not
	# one that ran before it) is stopped by its PID.
	after="$(prometheus_pids)"
	for pid in $(comm -13 <(echo "$before") <(echo "$after")); do
		say "stopping the prometheus server (pid $pid) the package install started"
		kill "$pid" 2>/dev/null || true
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
		kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
	done
	left="$(comm -13 <(echo "$before") <(prometheus_pids))"
	[ -z "$left" ] || die "a prometheus server is still running after the install (pids: $left)"
fi

still_missing=()
for w in "${apt_wants[@]}"; do
	pkg="${w%%|*}" check="${w#*|}"
	eval "$check" >/dev/null 2>&1 || still_missing+=("$pkg (check: $check)")
done
[ ${#still_missing[@]} -eq 0 ] || die "still missing after apt-get install: ${still_missing[*]}"
# perf counts the raw_syscalls:sys_enter tracepoint through tracefs; a
# machine that has not mounted it gets it mounted here, and one where
# counting is refused anyway stops the setup, naming perf's reason.
perf_counts() { perf stat -e raw_syscalls:sys_enter -x, -o /dev/null -- true 2>&1; }
if ! perf_err="$(perf_counts)"; then
	if [ ! -e /sys/kernel/tracing/events/raw_syscalls ]; then
		say "mounting tracefs on /sys/kernel/tracing for perf's raw_syscalls counts"
		mount -t tracefs nodev /sys/kernel/tracing || die "cannot mount tracefs on /sys/kernel/tracing (perf needs it to count system calls)"
	fi
	perf_err="$(perf_counts)" || die "perf cannot count raw_syscalls:sys_enter here (scripts/bench-dbs.sh needs it): $perf_err"
fi

# --- Python virtual environment ----------------------------------------
# The stamp records the requirements file it was built from, so an edit
# to the pins rebuilds the packages and an unchanged file costs nothing.
req_sum="$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)"
stamp="$VENV/.ycsbctl-requirements.sha256"
venv_ok() {
	[ -x "$VENV/bin/python3" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$req_sum" ] &&
		"$VENV/bin/python3" -c 'import hdrh, openpyxl, ansible' >/dev/null 2>&1 &&
		[ -x "$VENV/bin/ansible-playbook" ] && [ -x "$VENV/bin/ansible-lint" ]
}
if ! venv_ok; then
	if [ ! -x "$VENV/bin/python3" ] || ! "$VENV/bin/python3" -c 'import sys' >/dev/null 2>&1; then
		say "creating $VENV"
		rm -rf "$VENV"
		/usr/bin/python3 -m venv "$VENV" || die "python3 -m venv $VENV failed"
	fi
	say "installing $REQUIREMENTS into $VENV"
	timeout 900 "$VENV/bin/python3" -m pip install -q --disable-pip-version-check -r "$REQUIREMENTS" \
		|| die "pip install -r $REQUIREMENTS into $VENV failed"
	echo "$req_sum" >"$stamp"
	venv_ok || die "$VENV lacks hdrh, openpyxl, ansible-playbook or ansible-lint after pip install"
fi

# --- golangci-lint -----------------------------------------------------
gcl="$TOOLS_BIN/golangci-lint"
gcl_ok() { [ -x "$gcl" ] && "$gcl" version 2>/dev/null | grep -q "version ${GOLANGCI_LINT_VERSION#v} "; }
if ! gcl_ok; then
	say "building golangci-lint $GOLANGCI_LINT_VERSION into $TOOLS_BIN"
	mkdir -p "$TOOLS_BIN"
	GOBIN="$TOOLS_BIN" timeout 1200 go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION" \
		|| die "go install golangci-lint@$GOLANGCI_LINT_VERSION failed"
	gcl_ok || die "$gcl does not report version $GOLANGCI_LINT_VERSION"
fi

# --- summary -----------------------------------------------------------
first() { head -n1 | tr -s ' \t' ' '; }
say "go            $(go version | first)"
say "java 17       $("$java17/bin/java" -version 2>&1 | first)"
say "maven         $(mvn -v 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g' | first)"
say "tmux          $(tmux -V | first)"
say "chromium      $(chromium --version 2>/dev/null | first)"
say "promtool      $(promtool --version 2>&1 | first)"
say "strace        $(strace -V 2>&1 | first)"
say "perf          $(perf --version 2>&1 | first) (counts raw_syscalls:sys_enter)"
say "python venv   $("$VENV/bin/python3" --version 2>&1 | first) at $VENV"
say "hdrh          $("$VENV/bin/python3" -m pip show hdrhistogram 2>/dev/null | sed -n 's/^Version: //p')"
say "openpyxl      $("$VENV/bin/python3" -c 'import openpyxl; print(openpyxl.__version__)')"
say "ansible       $("$VENV/bin/ansible-playbook" --version 2>&1 | first)"
# ansible-lint warns unless its own bin directory is on PATH.
say "ansible-lint  $(PATH="$VENV/bin:$PATH" "$VENV/bin/ansible-lint" --nocolor --version 2>&1 | grep -m1 '^ansible-lint' | first)"
say "golangci-lint $("$gcl" version 2>&1 | grep -o 'version [^ ]* built with [^ ]*' | first)"
