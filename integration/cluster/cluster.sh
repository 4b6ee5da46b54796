#!/usr/bin/env bash
# A cluster of N hosts on one machine, reached by Ansible over SSH exactly
# as real hosts are.
#
#   cluster.sh up [N]          bring up N hosts (default 4)
#   cluster.sh down            take everything down; safe to repeat
#   cluster.sh status          list the hosts and whether they answer
#   cluster.sh exec HOST CMD   run CMD inside HOST (all its namespaces)
#
# Each host hN is:
#   - a network namespace ycsbctl-hN whose eth0 (10.77.0.(10+N)/24) is one
#     end of a veth pair enslaved to the bridge ycsbctl-br0 (10.77.0.1/24 in
#     the machine's namespace, so the coordinator reaches the agents from
#     outside). 10.77.0.0/24 exists only on that bridge: nothing is routed.
#   - its own PID, mount, UTS, IPC and cgroup namespaces, with systemd as
#     PID 1 booted on a root of its own: an overlay whose lower layer is the
#     machine's / (read only to the overlay) and whose upper layer is a
#     per-host directory on a tmpfs of the cluster's, mounted only inside the
#     host's mount namespace. Every write a host makes (/etc, /usr/local,
#     /var, /tmp, deletions by systemd's boot-time cleanup) lands in its upper
#     layer; /proc/sys and /sys are read only; units that act on the real
#     machine (clock, kernel modules, sysctl, fstrim, binfmt) are masked and
#     systemd runs without CAP_SYS_TIME, CAP_SYS_MODULE and CAP_SYS_RAWIO.
#   - an sshd from the machine's openssh-server, listening only on the
#     host's address with its own host key, root login by the cluster's key.
#   - the checkout this script is in and $YCSBCTL_SERVERS_DIR (the node
#     scripts and database jars the hosts run), plus the directories in
#     $YCSBCTL_CLUSTER_SHOW (colon separated), at their own paths, read only:
#     bind mounts when the overlay's lower layer does not show them (under
#     /tmp, /run or /dev, which each host has of its own, or on another file
#     system than /), so the test runs from a checkout anywhere.
#   - /srv/ycsbctl-shared: one directory that every host sees (a bind mount
#     of $WORK/state/shared, on the same tmpfs as the upper layers, made in
#     the host's mount namespace before it pivots into its root), as hosts
#     share a network file system: HBase's root directory lives there.
#   - /srv/ycsbctl-disk: a directory of the host's own on the machine's disk
#     ($WORK/disk/hN, not tmpfs), as a host has a local disk: a database
#     keeping its data there writes through the page cache to a block
#     device, which per-process write accounting (/proc/PID/io) counts.
#
# Files for Ansible go to $WORK: inventory.ini, ssh_config, id_ed25519.
# A failed `up` takes down what it brought up.
#
# There is one cluster per machine (its bridge, addresses and host names are
# fixed), so `up` and `down` hold the machine's cluster lock ($LOCK, flock;
# the holder's PID inside) and refuse while another process holds it. The
# cluster test holds it for its whole life and hands it to the cluster.sh it
# runs as the file descriptor $YCSBCTL_CLUSTER_LOCK_FD. `down` takes down
# any cluster on the machine, whoever brought it up and wherever its
# $YCSBCTL_CLUSTER_DIR was.
set -euo pipefail

WORK="${YCSBCTL_CLUSTER_DIR:-/var/tmp/ycsbctl-cluster}"
LOCK="${YCSBCTL_CLUSTER_LOCK:-/run/lock/ycsbctl-cluster.lock}"
# The source name of the cluster's tmpfs: how `down` finds it wherever it is
# mounted.
TMPFS=ycsbctl-cluster
BRIDGE=ycsbctl-br0
NET=10.77.0
CGROOT=/sys/fs/cgroup/unified

die() { echo "cluster.sh: $*" >&2; exit 1; }
say() { echo "cluster.sh: $*" >&2; }

need_tools() {
	[ "$(id -u)" = 0 ] || die "must run as root (network namespaces, mounts)"
	local missing=()
	for t in ip unshare nsenter setpriv ssh ssh-keygen /usr/sbin/sshd /lib/systemd/systemd /usr/bin/python3; do
		command -v "$t" >/dev/null 2>&1 || missing+=("$t")
	done
	[ ${#missing[@]} -eq 0 ] || die "missing: ${missing[*]} (apt-get install iproute2 util-linux openssh-server openssh-client systemd python3)"
	grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || die "the kernel has no overlay file system"
	grep -qw cgroup2 /proc/filesystems || die "the kernel has no cgroup2"
	[ -d "$CGROOT" ] || CGROOT=/sys/fs/cgroup
	[ "$(stat -fc %T "$CGROOT")" = cgroup2fs ] || die "no cgroup2 hierarchy at /sys/fs/cgroup/unified or /sys/fs/cgroup"
}

host_addr() { echo "$NET.$((10 + $1))"; }

# host_binds: the directories the hosts must see that their root does not
# show them, colon separated; dies naming one that does not exist.
host_binds() {
	local p binds="" rootdev
	rootdev="$(stat -c %d /)"
	local IFS=:
	for p in "$(cd "$(dirname "$0")/../.." && pwd)" ${YCSBCTL_SERVERS_DIR:-} ${YCSBCTL_CLUSTER_SHOW:-}; do
		[ -n "$p" ] || continue
		[ -d "$p" ] || die "up: $p must be visible inside the hosts but is not a directory"
		p="$(cd "$p" && pwd -P)"
		case "$p" in
		/tmp | /tmp/* | /run | /run/* | /dev | /dev/*) ;;
		*) [ "$(stat -c %d "$p")" != "$rootdev" ] || continue ;;
		esac
		binds="$binds${binds:+:}$p"
	done
	echo "$binds"
}

# take_lock: hold the machine's cluster lock until this script exits, or
# die naming its holder. A caller that holds it already passes its
# descriptor (YCSBCTL_CLUSTER_LOCK_FD): locking the same open file again
# succeeds.
take_lock() {
	local fd="${YCSBCTL_CLUSTER_LOCK_FD:-}"
	if [ -n "$fd" ]; then
		[[ "$fd" =~ ^[0-9]+$ ]] && flock -n "$fd" || die "YCSBCTL_CLUSTER_LOCK_FD=$fd is not a descriptor holding the cluster lock"
		return 0
	fi
	mkdir -p "$(dirname "$LOCK")"
	exec 9<>"$LOCK"
	if ! flock -n 9; then
		local holder
		holder="$(head -c 32 "$LOCK" | tr -cd 0-9)"
		die "the cluster lock $LOCK is held by PID ${holder:-?} ($(tr '\0' ' ' <"/proc/$holder/cmdline" 2>/dev/null || echo gone)): a cluster test or another cluster.sh is using the cluster"
	fi
	echo $$ >"$LOCK"
}

# cg_pids N: every process in hN's cgroup tree, as the machine sees them.
cg_pids() {
	local cg="$CGROOT/ycsbctl-h$1"
	[ -d "$cg" ] || return 0
	find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null
}

# pid1 N: the host's systemd (PID 1 of the host's PID namespace), as the
# machine sees it.
pid1() {
	local p
	for p in $(cg_pids "$1"); do
		if awk '/^NSpid:/ { if (NF == 3 && $3 == 1) f = 1 } END { exit !f }' "/proc/$p/status" 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# hosts_up: the numbers of the hosts this machine has: those of $WORK,
# and any other cluster's (its cgroups and network namespaces), so that
# `down` also takes down a cluster left by a run that was killed with
# another $YCSBCTL_CLUSTER_DIR.
hosts_up() {
	{
		for d in "$WORK"/h* "$CGROOT"/ycsbctl-h*; do
			[ -d "$d" ] || continue
			echo "${d##*ycsbctl-h}" | sed 's|.*/h||'
		done
		ip netns list | awk '/^ycsbctl-h[0-9]+/{sub("ycsbctl-h", "", $1); print $1}'
	} | grep -E '^[0-9]+$' | sort -nu
}

# cluster_mounts: every mount point of a cluster tmpfs on the machine,
# deepest first (/proc/mounts escapes blanks as octal).
cluster_mounts() {
	awk -v src="$TMPFS" '$1 == src {print $2}' /proc/self/mounts | while IFS= read -r m; do printf '%b\n' "$m"; done | sort -r
}

# prepare_upper N: the files that make hN a host of its own, written into
# its upper layer before boot (they shadow the machine's).
prepare_upper() {
	local n=$1 up="$WORK/state/h$1/upper" addr
	addr="$(host_addr "$n")"
	mkdir -p "$up/etc/ssh/sshd_config.d" "$up/root/.ssh" "$up/etc/systemd/system" "$WORK/state/h$n/work"
	echo "h$n" >"$up/etc/hostname"
	printf '127.0.0.1 localhost\n%s h%s\n' "$addr" "$n" >"$up/etc/hosts"
	for i in $(hosts_or_count); do [ "$i" = "$n" ] || echo "$(host_addr "$i") h$i" >>"$up/etc/hosts"; done
	# No file systems of the machine are mounted by the host's systemd.
	: >"$up/etc/fstab"
	tr -d - </proc/sys/kernel/random/uuid >"$up/etc/machine-id"
	ssh-keygen -q -t ed25519 -N '' -C "h$n" -f "$up/etc/ssh/ssh_host_ed25519_key"
	cat >"$up/etc/ssh/sshd_config.d/ycsbctl-cluster.conf" <<-EOF
		ListenAddress $addr
		HostKey /etc/ssh/ssh_host_ed25519_key
		PermitRootLogin prohibit-password
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		UsePAM no
	EOF
	install -m 0600 "$WORK/id_ed25519.pub" "$up/root/.ssh/authorized_keys"
	chmod 0700 "$up/root/.ssh"
	# Units that would act on the machine rather than the host, or that
	# the machine runs for itself.
	for u in systemd-timesyncd.service systemd-modules-load.service systemd-sysctl.service systemd-binfmt.service \
		proc-sys-fs-binfmt_misc.automount proc-sys-fs-binfmt_misc.mount fstrim.timer fstrim.service e2scrub_all.timer \
		e2scrub_reap.service apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer man-db.timer \
		postgresql.service prometheus.service getty.target console-getty.service systemd-pstore.service \
		systemd-logind.service systemd-networkd.service systemd-resolved.service systemd-hwdb-update.service \
		systemd-udevd.service systemd-udev-trigger.service systemd-remount-fs.service ssh.socket; do
		ln -sf /dev/null "$up/etc/systemd/system/$u"
	done
}

hosts_or_count() { seq 1 "$COUNT"; }

# boot N: start hN's systemd in its namespaces. The inner script runs as
# PID 1 of the new PID namespace, in a private mount namespace, before it
# execs systemd on the overlay root.
boot() {
	local n=$1 addr root="$WORK/h$1/root" cg="$CGROOT/ycsbctl-h$1"
	addr="$(host_addr "$n")"
	mkdir -p "$root" "$WORK/h$n" "$WORK/disk/h$n"
	mkdir "$cg"
	# Everything of this host lives in its own cgroup, which the host sees as
	# its root (cgroup namespace), so systemd manages only its own subtree.
	(
		# The host outlives this script: it must not hold the cluster lock.
		exec 9>&-
		[ -z "${YCSBCTL_CLUSTER_LOCK_FD:-}" ] || eval "exec ${YCSBCTL_CLUSTER_LOCK_FD}>&-"
		echo $BASHPID >"$cg/cgroup.procs"
		exec ip netns exec "ycsbctl-h$n" \
			unshare --pid --mount --uts --ipc --cgroup --fork --propagation private \
			env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin ROOT="$root" UPPER="$WORK/state/h$n/upper" BINDS="$BINDS" \
			SHARED="$WORK/state/shared" DISK="$WORK/disk/h$n" WORKD="$WORK/state/h$n/work" HOSTNAME_="h$n" /bin/bash -c "$(declare -f inner_boot); inner_boot"
	) </dev/null >"$WORK/h$n/boot.log" 2>&1 &
}

inner_boot() {
	set -eu
	hostname "$HOSTNAME_"
	mount -t overlay overlay -o "lowerdir=/,upperdir=$UPPER,workdir=$WORKD" "$ROOT"
	# The directory all hosts share; only this mount namespace sees the
	# bind, so it goes with the host.
	mkdir -p "$ROOT/srv/ycsbctl-shared" "$ROOT/srv/ycsbctl-disk"
	mount --bind "$SHARED" "$ROOT/srv/ycsbctl-shared"
	mount --bind "$DISK" "$ROOT/srv/ycsbctl-disk"
	mount -t proc proc "$ROOT/proc"
	# Read only, as systemd-nspawn does: a write to /proc/sys (kernel.*)
	# would reach the machine.
	mount --bind "$ROOT/proc/sys" "$ROOT/proc/sys"
	mount -o remount,bind,ro "$ROOT/proc/sys"
	mount --bind /dev/null "$ROOT/proc/sysrq-trigger" 2>/dev/null || true
	mount -t sysfs -o ro sysfs "$ROOT/sys"
	mount -t cgroup2 -o nsdelegate cgroup2 "$ROOT/sys/fs/cgroup" 2>/dev/null || mount -t cgroup2 cgroup2 "$ROOT/sys/fs/cgroup"
	mount -t tmpfs -o mode=755,nosuid,size=16m tmpfs "$ROOT/dev"
	for d in null zero full random urandom tty; do
		touch "$ROOT/dev/$d"
		mount --bind "/dev/$d" "$ROOT/dev/$d"
	done
	mkdir -p "$ROOT/dev/pts" "$ROOT/dev/shm"
	mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$ROOT/dev/pts"
	ln -s pts/ptmx "$ROOT/dev/ptmx"
	mount -t tmpfs -o mode=1777,nosuid,nodev,size=64m tmpfs "$ROOT/dev/shm"
	ln -s /proc/self/fd "$ROOT/dev/fd"
	mount -t tmpfs -o mode=755,nosuid,nodev,size=64m tmpfs "$ROOT/run"
	mount -t tmpfs -o mode=1777,nosuid,nodev,size=256m tmpfs "$ROOT/tmp"
	local IFS=: b
	for b in $BINDS; do
		mkdir -p "$ROOT$b" && mount --bind "$b" "$ROOT$b" && mount -o remount,bind,ro "$ROOT$b" ||
			{ echo "cluster.sh: cannot show $b inside $HOSTNAME_ (bind mount)" >&2; exit 1; }
	done
	unset IFS
	cd "$ROOT"
	mkdir -p .oldroot
	pivot_root . .oldroot
	cd /
	umount -l /.oldroot
	rmdir /.oldroot
	exec setpriv --bounding-set -sys_time,-sys_module,-sys_rawio,-wake_alarm \
		env -i container=ycsbctl-cluster PATH=/usr/sbin:/usr/bin:/sbin:/bin /lib/systemd/systemd --unit=multi-user.target
}

up() {
	need_tools
	COUNT="${1:-4}"
	[[ "$COUNT" =~ ^[0-9]+$ ]] && [ "$COUNT" -ge 1 ] && [ "$COUNT" -le 40 ] || die "up: expected a host count 1..40, got '$COUNT'"
	if ip link show "$BRIDGE" >/dev/null 2>&1 || [ -n "$(ip netns list | grep '^ycsbctl-h')" ]; then
		die "a cluster is already up (cluster.sh down first)"
	fi
	trap 'if [ "${UP_DONE:-}" != 1 ]; then say "up failed; taking down what was brought up"; down >&2 || true; fi' EXIT
	BINDS="$(host_binds)"
	[ -z "$BINDS" ] || say "up: the hosts see ${BINDS//:/, } through read-only bind mounts"
	mkdir -p "$WORK"
	# Upper layers on a tmpfs of the cluster's: one umount removes them all,
	# and they can never overlap the lower layer (the machine's /).
	mkdir -p "$WORK/state"
	mount -t tmpfs -o size=4g,mode=700 ycsbctl-cluster "$WORK/state"
	mkdir -m 755 "$WORK/state/shared"
	rm -f "$WORK/id_ed25519" "$WORK/id_ed25519.pub"
	ssh-keygen -q -t ed25519 -N '' -C ycsbctl-cluster -f "$WORK/id_ed25519"
	ip link add "$BRIDGE" type bridge
	ip addr add "$NET.1/24" dev "$BRIDGE"
	ip link set "$BRIDGE" up
	: >"$WORK/known_hosts"
	for n in $(seq 1 "$COUNT"); do
		ip netns add "ycsbctl-h$n"
		ip link add "ycsbctl-v$n" type veth peer name eth0 netns "ycsbctl-h$n"
		ip link set "ycsbctl-v$n" master "$BRIDGE" up
		ip -n "ycsbctl-h$n" addr add "$(host_addr "$n")/24" dev eth0
		ip -n "ycsbctl-h$n" link set lo up
		ip -n "ycsbctl-h$n" link set eth0 up
		prepare_upper "$n"
		echo "$(host_addr "$n") $(cat "$WORK/state/h$n/upper/etc/ssh/ssh_host_ed25519_key.pub" | cut -d' ' -f1,2)" >>"$WORK/known_hosts"
		boot "$n"
	done
	for n in $(seq 1 "$COUNT"); do wait_host "$n"; done
	write_ansible_files
	UP_DONE=1
	say "up: $COUNT hosts; inventory $WORK/inventory.ini, ssh config $WORK/ssh_config"
}

# wait_host N: systemd reached its target and sshd answers over the bridge.
wait_host() {
	local n=$1 addr state=""
	addr="$(host_addr "$n")"
	for _ in $(seq 1 120); do
		if pid1 "$n" >/dev/null; then
			state="$(run_in "$n" systemctl is-system-running 2>/dev/null || true)"
			case "$state" in
			running | degraded)
				if ssh_to "$addr" true 2>/dev/null; then
					[ "$state" = degraded ] && say "h$n: systemd is degraded: $(run_in "$n" systemctl --failed --no-legend --plain | awk '{print $1}' | tr '\n' ' ')"
					return 0
				fi
				;;
			esac
		else
			[ -n "$(cg_pids "$n")" ] && { sleep 0.5; continue; } # still mounting its root
			die "h$n: its systemd exited during boot: $(cat "$WORK/h$n/boot.log" 2>/dev/null)"
		fi
		sleep 0.5
	done
	die "h$n: not up after 60 s (systemd state '$state')"
}

ssh_to() {
	local addr=$1
	shift
	ssh -F /dev/null -o BatchMode=yes -o ConnectTimeout=5 -o UserKnownHostsFile="$WORK/known_hosts" \
		-o StrictHostKeyChecking=yes -i "$WORK/id_ed25519" "root@$addr" "$@"
}

write_ansible_files() {
	cat >"$WORK/ssh_config" <<-EOF
		Host 10.77.0.*
		  User root
		  IdentityFile $WORK/id_ed25519
		  IdentitiesOnly yes
		  UserKnownHostsFile $WORK/known_hosts
		  StrictHostKeyChecking yes
		  BatchMode yes
		  ConnectTimeout 5
	EOF
	{
		echo "# Written by integration/cluster/cluster.sh up; hosts are network namespaces on $BRIDGE."
		echo "[agents]"
		for n in $(seq 1 "$COUNT"); do echo "h$n ansible_host=$(host_addr "$n")"; done
		echo
		echo "[agents:vars]"
		echo "ansible_user=root"
		echo "ansible_python_interpreter=/usr/bin/python3"
		echo "ansible_ssh_common_args=-F $WORK/ssh_config"
		# Root logs in over SSH, so become (sudo, absent here) is not needed.
		echo "ansible_become=false"
		echo "ansible_pipelining=true"
		# Agents listen on their bridge address, the name their certificate
		# is issued for and the coordinator dials.
		echo "ycsbctl_listen_host={{ ansible_host }}"
	} >"$WORK/inventory.ini"
}

run_in() {
	local n=$1 p
	shift
	p="$(pid1 "$n")" || die "h$n is not running"
	nsenter -t "$p" -a -r -w env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

down() {
	local n p
	# Ask each systemd to power off (SIGRTMIN+4), then kill what is left:
	# killing PID 1 of a PID namespace kills every process in it.
	for n in $(hosts_up); do
		if p="$(pid1 "$n")"; then kill -s SIGRTMIN+4 "$p" 2>/dev/null || true; fi
	done
	for n in $(hosts_up); do
		for _ in $(seq 1 40); do pid1 "$n" >/dev/null || break; sleep 0.25; done
		if p="$(pid1 "$n")"; then kill -9 "$p" 2>/dev/null || true; fi
		# Whatever is left in the host's cgroup (the unshare parent, a
		# process that escaped systemd's stop) goes too.
		for _ in $(seq 1 40); do
			[ -n "$(cg_pids "$n")" ] || break
			kill -9 $(cg_pids "$n") 2>/dev/null || true
			sleep 0.25
		done
	done
	for cg in "$CGROOT"/ycsbctl-h*; do
		[ -d "$cg" ] || continue
		# Sub-cgroups first (systemd's own), deepest first.
		for _ in $(seq 1 40); do
			find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null || true
			[ -d "$cg" ] || break
			sleep 0.25
		done
		[ ! -d "$cg" ] || say "could not remove $cg: $(cat "$cg/cgroup.procs" 2>/dev/null | tr '\n' ' ')"
	done
	for ns in $(ip netns list | awk '/^ycsbctl-h[0-9]+/{print $1}'); do ip netns del "$ns"; done
	for l in $(ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | grep '^ycsbctl-' || true); do ip link del "$l" 2>/dev/null || true; done
	local m
	cluster_mounts | while IFS= read -r m; do
		say "down: unmounting the cluster tmpfs at $m"
		umount "$m" 2>/dev/null || umount -l "$m"
	done
	rm -rf "$WORK"
	local left
	left="$(ip netns list | grep '^ycsbctl-' || true)$(ip -o link show | grep -o 'ycsbctl-[a-z0-9]*' || true)$(awk -v src="$TMPFS" '$1 == src || $2 ~ "^/run/netns/ycsbctl-"' /proc/self/mounts)"
	[ -z "$left" ] || die "down left: $left"
}

status() {
	local any=0
	for n in $(hosts_up); do
		any=1
		if p="$(pid1 "$n")"; then
			# Bounded: a host powering off stops (SIGSTOP) every process in
			# its PID namespace, this probe's child too; nsenter then stops
			# itself to match and never reaps the child, and the namespace
			# can never end (its init waits for that child). The kill ends
			# nsenter, the child is reaped, and the host goes down.
			echo "h$n $(host_addr "$n") systemd pid $p: $(timeout -s KILL 30 nsenter -t "$p" -a -r -w env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin systemctl is-system-running 2>/dev/null || true)"
		else
			echo "h$n $(host_addr "$n") down"
		fi
	done
	[ "$any" = 1 ] || echo "no cluster"
}

cmd="${1:-}"
shift || true
case "$cmd" in
up) take_lock; up "$@" ;;
down) need_tools; take_lock; down ;;
status) status ;;
exec)
	[ $# -ge 2 ] || die "exec: expected HOST CMD..."
	h="${1#h}"
	shift
	[[ "$h" =~ ^[0-9]+$ ]] || die "exec: expected a host name hN"
	run_in "$h" "$@"
	;;
*) die "usage: cluster.sh up [N] | down | status | exec HOST CMD..." ;;
esac
