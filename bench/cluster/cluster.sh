#!/usr/bin/env bash
# A virtual cluster of N nodes on this machine, one mpirun over it, everything torn down after.
#
#   bench/cluster/cluster.sh [--nodes N] [--slots S] [--rate RATE|none] [--burst B]
#                            [--name PREFIX] [--timeout SECONDS] -- MPIRUN-ARGUMENTS...
#   bench/cluster/cluster.sh --teardown PREFIX     remove what a killed run left behind
#   bench/cluster/cluster.sh --check               only say whether it can run here
#
# Each node is a network namespace PREFIX-nI entered with its own UTS (host name PREFIX-nI),
# mount (private /etc/hosts and /dev/shm) and PID namespace; the nodes hang on a bridge that
# lives in one more namespace, PREFIX-sw (the "switch"), through veth links shaped by tbf to
# RATE in both directions. Nothing is added to the root namespace's links or addresses and
# /etc is not edited. mpirun runs on node 1; it starts orted on the other nodes through a
# launch agent (instead of ssh) that enters a node's namespaces with a clean, ssh-like
# environment -- so pass what the program needs with -x VAR. See bench/cluster/README.md.
#
# Exit status: mpirun's; 77 when this machine cannot run it (not root, no namespaces, no
# bridge/veth/tbf, a tool missing), with the reason on stderr; 124 when --timeout expired;
# 2 for bad usage; 1 for other failures (e.g. PREFIX already in use).
set -euo pipefail

readonly SKIP=77
prog=$(basename "$0")
nodes=2
slots=2
rate=1gbit
burst=256kb
prefix=rcl
timeout_s=600
mode=run

usage() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2
  exit 2
}
die() { echo "$prog: $*" >&2; exit 1; }
bad() { echo "$prog: $*" >&2; exit 2; }
skip() { echo "$prog: SKIP: $*" >&2; exit "$SKIP"; }
say() { echo "$prog: $*" >&2; }

while [ $# -gt 0 ]; do
  case $1 in
    --nodes) nodes=${2:?}; shift 2 ;;
    --slots) slots=${2:?}; shift 2 ;;
    --rate) rate=${2:?}; shift 2 ;;
    --burst) burst=${2:?}; shift 2 ;;
    --name) prefix=${2:?}; shift 2 ;;
    --timeout) timeout_s=${2:?}; shift 2 ;;
    --teardown) mode=teardown; prefix=${2:?}; shift 2 ;;
    --check) mode=check; shift ;;
    -h|--help) usage ;;
    --) shift; break ;;
    *) echo "$prog: unknown option '$1'" >&2; usage ;;
  esac
done

# Interface names are at most 15 characters ("PREFIX-sw", "PREFIX-b4"), hence the length.
[[ $prefix =~ ^[a-z][a-z0-9]{0,9}$ ]] || bad "--name must match [a-z][a-z0-9]{0,9}, got '$prefix'"
[[ $nodes =~ ^[2-4]$ ]] || bad "--nodes must be 2, 3 or 4, got '$nodes'"
[[ $slots =~ ^[1-9][0-9]*$ ]] || bad "--slots must be a positive integer, got '$slots'"
[[ $timeout_s =~ ^[1-9][0-9]*$ ]] || bad "--timeout must be a positive integer, got '$timeout_s'"
[[ $rate == none || $rate =~ ^[0-9]+(\.[0-9]+)?([kmgt]?bit|[kmgt]?bps)$ ]] ||
  bad "--rate must be like 1gbit, 100mbit or none, got '$rate'"
if [ "$mode" = run ] && [ $# -eq 0 ]; then
  echo "$prog: no mpirun arguments after --" >&2
  usage
fi

# A /24 in 169.254/16 derived from the prefix, away from 169.254.0/24, .169/24 (cloud
# metadata) and .255/24. The subnet only exists inside this cluster's namespaces, so even two
# prefixes with the same /24 could not clash; distinct ones make traces easier to read.
octet=$(( $(printf '%s' "$prefix" | cksum | cut -d' ' -f1) % 200 + 20 ))
[ "$octet" -ne 169 ] || octet=170
subnet=169.254.$octet.0/24
switch=$prefix-sw
workdir=/tmp/redist-cluster.$prefix
node_name() { echo "$prefix-n$1"; }

# --- what can run here ---------------------------------------------------------------------
preflight() {
  [ "$(id -u)" -eq 0 ] || skip "not root (namespaces, veth links and tc need root)"
  local t
  for t in ip unshare tc mpirun timeout cksum mount; do
    command -v "$t" >/dev/null 2>&1 || skip "'$t' not found"
  done
  ip netns list >/dev/null 2>&1 || skip "'ip netns' does not work here"
  # Everything the cluster needs, tried once inside a throwaway network namespace: the
  # namespaces of a node (net, UTS, mount, PID), a bridge, a veth pair and a tbf qdisc.
  local why
  if ! why=$(unshare --net --uts --mount --pid --fork -- sh -c '
      set -e
      hostname probe-node
      mount -t tmpfs tmpfs /dev/shm
      ip link add pbr type bridge
      ip link add pa type veth peer name pb
      ip link set pa master pbr
      tc qdisc add dev pa root tbf rate 1gbit burst 256kb latency 20ms
    ' 2>&1); then
    skip "no network namespaces, bridge, veth or tbf here: ${why:-unshare failed}"
  fi
}

# --- teardown (idempotent; also the --teardown mode) ---------------------------------------
our_namespaces() {
  ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${prefix}-(n[0-9]+|sw)\$" || true
}

teardown() {
  local ns pids round
  # Processes first (orted, ranks, a node's init): TERM, then KILL whatever is left.
  for round in TERM KILL; do
    pids=""
    for ns in $(our_namespaces); do
      pids+=" $(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')"
    done
    if [ -n "${pids// /}" ]; then
      # shellcheck disable=SC2086
      kill -s "$round" $pids 2>/dev/null || true
      [ "$round" = KILL ] || sleep 1
    fi
  done
  # Deleting the switch namespace deletes the bridge and the switch ends of the veth pairs;
  # deleting a node deletes its end.
  for ns in $(our_namespaces); do
    ip netns del "$ns" 2>/dev/null || say "could not delete namespace $ns"
  done
  # Links a half-finished setup may have left in the root namespace.
  local link
  for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 |
                grep -E "^${prefix}-(sw|b[0-9]+|v[0-9]+)\$" || true); do
    ip link del "$link" 2>/dev/null || true
  done
  case $workdir in /tmp/redist-cluster.?*) rm -rf -- "$workdir" ;; esac
}

if [ "$mode" = teardown ]; then
  [ "$(id -u)" -eq 0 ] || die "--teardown needs root"
  teardown
  left=$(our_namespaces)
  [ -z "$left" ] || die "namespaces left: $left"
  say "nothing of cluster '$prefix' is left"
  exit 0
fi

preflight
if [ "$mode" = check ]; then
  say "this machine can run a virtual cluster"
  exit 0
fi

# Refuse (before installing the trap, so that another run's cluster is never torn down).
[ -z "$(our_namespaces)" ] ||
  die "namespaces of cluster '$prefix' exist ($(our_namespaces | tr '\n' ' ')): another run," \
      "or a killed one (then: $prog --teardown $prefix); or choose another --name"
mkdir -m 700 "$workdir" 2>/dev/null ||
  die "$workdir exists: cluster '$prefix' is in use, or left by a killed run" \
      "(then: $prog --teardown $prefix)"

head_pid=""
# shellcheck disable=SC2317 # called by the traps
on_exit() {
  local status=$?
  trap - EXIT INT TERM HUP
  if [ -n "$head_pid" ] && kill -0 "$head_pid" 2>/dev/null; then
    kill -TERM "$head_pid" 2>/dev/null || true # timeout(1) passes it on to mpirun
    local i
    for i in 1 2 3 4 5; do kill -0 "$head_pid" 2>/dev/null || break; sleep 1; done
  fi
  teardown
  exit "$status"
}
trap on_exit EXIT
trap 'say "interrupted"; exit 130' INT
trap 'say "terminated"; exit 143' TERM
trap 'say "hung up"; exit 129' HUP

# --- build the cluster -----------------------------------------------------------------------
shape() { # shape NETNS DEV
  [ "$rate" = none ] ||
    ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "$rate" burst "$burst" latency 20ms
}

{
  echo "127.0.0.1 localhost"
  for i in $(seq 1 "$nodes"); do echo "169.254.$octet.$i $(node_name "$i")"; done
} >"$workdir/hosts"

ip netns add "$switch"
ip -n "$switch" link set lo up
ip -n "$switch" link add br0 type bridge
ip -n "$switch" link set br0 up
hostlist=""
for i in $(seq 1 "$nodes"); do
  n=$(node_name "$i")
  ip netns add "$n"
  # The pair is made in the root namespace under names of this cluster, then each end moves.
  ip link add "$prefix-b$i" type veth peer name "$prefix-v$i"
  ip link set "$prefix-b$i" netns "$switch"
  ip link set "$prefix-v$i" netns "$n"
  ip -n "$switch" link set "$prefix-b$i" master br0 up
  ip -n "$n" link set "$prefix-v$i" name eth0
  ip -n "$n" link set lo up
  ip -n "$n" addr add "169.254.$octet.$i/24" dev eth0
  ip -n "$n" link set eth0 up
  shape "$n" eth0 # node -> switch
  shape "$switch" "$prefix-b$i" # switch -> node
  hostlist+="${hostlist:+,}$n:$slots"
done

# enter NODE COMMAND: runs COMMAND (a shell command line) on NODE: its network namespace, a
# new UTS namespace with the node's host name, a new mount namespace (ip netns exec makes it,
# slave to the root one, so nothing leaks back) with the cluster's hosts file on /etc/hosts
# and a private /dev/shm, and a new PID namespace whose init is killed with the entering
# process (--kill-child), taking the node's processes with it.
cat >"$workdir/enter" <<EOF
#!/bin/bash
set -euo pipefail
node=\$1 cmd=\$2
[[ \$node =~ ^${prefix}-n[0-9]+\$ ]] || { echo "enter: '\$node' is no node of cluster $prefix" >&2; exit 255; }
exec ip netns exec "\$node" unshare --uts --pid --fork --kill-child --mount-proc -- \\
  bash -c 'hostname "\$1" && mount --bind "\$2" /etc/hosts &&
           mount -t tmpfs -o mode=1777 shm /dev/shm && eval "\$3"' \\
  enter "\$node" "$workdir/hosts" "\$cmd"
EOF
# agent HOST WORDS...: what mpirun calls instead of ssh. Like ssh, it joins the words into one
# command line for the node's shell and passes a clean environment (PATH and LD_LIBRARY_PATH
# stand for a shared .bashrc; the OMPI_ALLOW_RUN_AS_ROOT pair lets orted run as root).
cat >"$workdir/agent" <<EOF
#!/bin/bash
host=\$1; shift
exec env -i HOME=/root PATH="\$PATH" \${LD_LIBRARY_PATH:+LD_LIBRARY_PATH="\$LD_LIBRARY_PATH"} \\
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \\
  "$workdir/enter" "\$host" "\$*"
EOF
chmod 755 "$workdir/enter" "$workdir/agent"

say "cluster '$prefix': $nodes nodes ($hostlist) on $subnet, links $( [ "$rate" = none ] &&
  echo "not shaped" || echo "shaped to $rate each way")"

# --- run -------------------------------------------------------------------------------------
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# shellcheck disable=SC2054 # the commas belong to --host
cmd=(mpirun --host "$hostlist" --oversubscribe
     --mca plm_rsh_agent "$workdir/agent" # (no plm_rsh_no_tree_spawn: with it, orted would
     # --daemonize, leave its node's init and die with it)
     --mca btl tcp,vader,self
     --mca btl_tcp_if_include "$subnet" --mca oob_tcp_if_include "$subnet"
     --mca mpi_yield_when_idle 1
     --bind-to none # every node's daemon binds its first rank to core 0: the nodes share the
     # machine's cores, and bound so, one rank per node would put every rank on one core
     "$@")
printf -v line '%q ' "${cmd[@]}"
# mpirun runs on node 1 (the head), in the background so that the traps run at once on a
# signal; timeout(1) ends it, its agents and whatever they started if it takes too long.
timeout --kill-after=10 "$timeout_s" "$workdir/enter" "$(node_name 1)" "$line" &
head_pid=$!
set +e
wait "$head_pid"
status=$?
set -e
head_pid=""
[ "$status" -ne 124 ] || say "mpirun did not finish within $timeout_s s (--timeout)"
exit "$status"
