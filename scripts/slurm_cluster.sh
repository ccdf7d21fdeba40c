#!/usr/bin/env bash
# A real Slurm cluster on this host, for integration tests: one node, or N nodes that each run
# their own slurmd inside a UTS namespace of their own.
#
#   scripts/slurm_cluster.sh start [--nodes N] [STATE_DIR]   # default /tmp/linsweep-slurm, N = 1
#   scripts/slurm_cluster.sh status [STATE_DIR]              # daemons, every node and its state
#   scripts/slurm_cluster.sh stop [STATE_DIR]                # jobs, daemons, namespaces, STATE_DIR
#   scripts/slurm_cluster.sh kill-node NODE [STATE_DIR]      # SIGKILL every process of a node
#   scripts/slurm_cluster.sh start-node NODE [STATE_DIR]     # its slurmd again, until it is idle
#
# Needs root (SlurmUser=root, namespaces, apt-get). `start` installs slurm-wlm and munge only if
# they are missing, starts a munged of its own (socket, pid, log and seed in STATE_DIR/munge, the
# host's /etc/munge/munge.key, created when missing), writes STATE_DIR/slurm.conf and starts
# slurmctld and the nodes' slurmd on it, then waits until every node is idle. munged's directory
# and slurmd's spool (they hold unix sockets, whose paths are limited to 107 bytes) move to
# /tmp/linsweep-slurm-<checksum of STATE_DIR> when STATE_DIR is longer than 60 characters or
# lies below a directory that the munge user cannot enter.
# Nothing is written to /etc/slurm: every Slurm command finds the config through SLURM_CONF,
# which the caller must export (start prints the line):
#
#   export SLURM_CONF=/tmp/linsweep-slurm/slurm.conf
#
# Without it the client commands (sbatch, squeue, sinfo, scontrol, ...) fail with
# "fetch_config: DNS SRV lookup failed ... Could not establish a configuration
# source". slurmd sets SLURM_CONF in every job's environment (even with
# --export=NONE), so `scontrol requeue` / `srun` inside a job work too.
#
# Nodes. With N = 1 the node is this host (hostname -s) and slurmd runs in the host's own
# namespaces. With N >= 2 the nodes are n1..nN: node i's slurmd runs in a UTS namespace whose
# hostname is n<i>, so every process it starts (the batch script, srun steps, OpenMPI's orted and
# the ranks) sees that name in gethostname(); the namespace is kept by a bind mount on
# STATE_DIR/nodes/<node>/uts (`unshare --uts=FILE`), so that kill-node and start-node can leave
# and re-enter the same one, and stop finds every process in it by the namespace's inode. All
# nodes share this host's network namespace, CPUs, memory and filesystem (the filesystem plays
# the cluster's shared one); every node declares all CPUs and 90% of the memory. Slurm's traffic
# is on 127.0.0.1; OpenMPI's between nodes on the cluster's own network (below). No mount or
# network namespace: nothing needed one.
#
# What Slurm 22.05 needs for several slurmd on one host (checked by running them):
# - NodeName=n<i> NodeAddr=127.0.0.1 Port=<port i> per node (slurmctld reaches each slurmd on its
#   own port), `slurmd -N n<i>` (else slurmd takes the host's name), and SlurmdSpoolDir,
#   SlurmdPidFile and SlurmdLogFile with %n (the node name), which slurmd expands.
# - `srun -N2 hostname` prints n1 and n2; the batch script of an `sbatch -N2` job runs on n1.
# What OpenMPI 4.1.4 needs for ranks on several of these nodes (mpirun inside the allocation):
# - mpirun starts an orted on every other node through `srun` (its slurm launcher, automatic)
#   and places ranks by slot: ranks 0..T-1 on n1, T..2T-1 on n2 for --ntasks-per-node=T.
# - Loopback is excluded by default from both its out-of-band channel and its TCP transport
#   (btl_tcp_if_exclude=127.0.0.1/8,sppp); without an include list mpirun uses this host's
#   other interfaces. `--mca oob_tcp_if_include IF --mca btl_tcp_if_include IF`, IF being the
#   cluster's network (NET_FILE), keep it there. `lo` worked too with OpenMPI 4.1.4, but OpenMPI
#   5.0.7 (Debian 13; mpirun launches through PRRTE) then ends with status 213, "No network
#   interfaces were found for out-of-band communications"; with the veth both run.
#   Ranks of one node talk through shared memory (vader), ranks of different nodes through TCP.
# - It binds each rank to one core when the job has at most 2 ranks, whatever the node has
#   (`nproc` in a rank: 1 instead of 2 with -N2 --ntasks-per-node=1); `--bind-to none` leaves
#   each rank the node's CPUs. linsweep's batch script passes it (docs/slurm.md).
# - Killing every process of the node that runs mpirun leaves the other nodes' orted without
#   their parent; each kills its ranks and exits (the ranks on n2 were gone before Slurm noticed
#   that n1 was down). Killing another node's processes makes mpirun print "ORTE has lost
#   communication with a remote daemon" and exit 205 within about a second.
# What happens to the job when a node dies is in docs/slurm.md ("A node dies").
#
# Environment: LINSWEEP_SLURM_DIR (default STATE_DIR), LINSWEEP_SLURMCTLD_PORT (6817) and
# LINSWEEP_SLURMD_PORT (6818: node i listens on it + i - 1); start refuses ports that are taken,
# e.g. by a cluster on another STATE_DIR. LINSWEEP_SLURM_CRED_EXPIRE (10; Slurm's default is
# 120) and LINSWEEP_SLURM_SCHED_INTERVAL (5; default 60): together they set how long a requeued
# job waits before it runs again (here ~15 s, with defaults ~2-3 min).
#
# Behaviour of Slurm 22.05.8 (Debian 12) with this config, verified by running jobs
# - sbatch --parsable prints just the job id; a job starts ~1-2 s after submission.
#   squeue -h -j ID -o '%i %T %r' prints "ID PENDING None", then "ID RUNNING None";
#   once the job has finished it prints NOTHING (rc 0) unless `-t all` is given.
# - Finished jobs stay visible to `scontrol show job` / `squeue -t all` for MinJobAge
#   (300 s here, purged ~300-330 s after the end); then both fail with
#   "slurm_load_jobs error: Invalid job id specified", rc 1.
#   Final states: COMPLETED (ExitCode=0:0), FAILED Reason=NonZeroExitCode
#   (ExitCode=3:0), CANCELLED (ExitCode=0:15), TIMEOUT Reason=TimeLimit.
# - No accounting: `sacct` prints "Slurm accounting storage is disabled" on stderr, rc 1.
# - `scancel --signal=USR1 --batch ID` reaches the batch shell only (its trap fires,
#   children keep running); `--full` reaches every process of the batch step; without
#   either, nothing in the batch script gets it (only srun steps).
# - `scontrol requeue $SLURM_JOB_ID` inside a job (Requeue=1 is the default with
#   JobRequeue=1, no `#SBATCH --requeue` needed; with --no-requeue it fails, rc 1,
#   "Requested operation is presently disabled"): the running batch step is killed
#   ("CANCELLED ... DUE TO JOB REQUEUE" in the output), the job goes straight to
#   PENDING Reason=BeginTime, Restarts=1, EligibleTime = now + cred_expire + 1, and
#   runs again at the next scheduling pass with SLURM_RESTART_COUNT=1 (unset in the
#   first run). The output file is appended to with --open-mode=append, truncated
#   otherwise.
# - `--signal=B:USR1@30`: slurmctld checks time limits every 30 s, so USR1 reaches the
#   batch shell between 30 and 60 s before the limit, and the job is killed
#   (SIGTERM, SIGKILL after KillWait) between 0 and ~30 s after it: --time=1:00 gave
#   USR1 at 0:23 and TIMEOUT at 1:23.
# - scancel ID of a running job: COMPLETING, then CANCELLED within ~1 s; all
#   processes of the batch step are killed (setsid'd children too, linuxproc).
# - --dependency=afterok:ID: PENDING Reason=Dependency; if ID fails the job stays
#   PENDING Reason=DependencyNeverSatisfied for good (kill_invalid_depend not set),
#   the caller must scancel it. afterok on an unknown/purged id is accepted and
#   treated as satisfied (the job runs at once).
# - Job arrays: `sbatch --parsable --array=0-4%2` prints the array's id A; tasks are A_0 ..
#   A_4, at most 2 running (the others PENDING Reason=JobArrayTaskLimit). `squeue` shows the
#   pending tasks as one line "A_[2-4%2]" unless `-r` is given (then one line per task);
#   `scontrol show job -o A_3` prints that task alone, pending or not. A running task has a
#   job id of its own in SLURM_JOB_ID (SLURM_ARRAY_JOB_ID=A, SLURM_ARRAY_TASK_ID=3), and
#   --output's %A_%a names it (%a is 4294967294 in a job that is not an array).
#   `--dependency=afterok:A` shows as "afterok:A_*" and waits for every task.
# - sbatch: rejected submission (--partition=nope) -> rc 1, stderr "sbatch: error:
#   Batch job submission failed: Invalid partition name specified"; bad option
#   syntax -> rc 255. slurmctld down -> rc 1 after ~9 s, stderr "sbatch: error:
#   Batch job submission failed: Unable to contact slurm controller (connect
#   failure)" (squeue the same after 9 s, scontrol after 18 s). A job that can
#   never fit (--ntasks=3 on 2 CPUs) is accepted and stays PENDING PartitionConfig.
# - Restarting slurmctld (without -c) keeps all jobs.
# - Inside `sbatch --ntasks=2`, `mpirun hostname` and `mpirun -n 2 ...` (OpenMPI
#   4.1.4) use the allocation with no extra settings (2 slots; -n 3 fails "not
#   enough slots" without --oversubscribe); `srun --mpi=pmix` also works (plugins:
#   pmix (pmix_v4), pmi2, cray_shasta, none).
set -euo pipefail

usage() {
  echo "usage: $0 start [--nodes N] [STATE_DIR] | status|stop [STATE_DIR] | kill-node|start-node NODE [STATE_DIR]" >&2
  exit 2
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
NODES_WANTED=1
NODE_ARG=""
case "$cmd" in
  start)
    if [ "${1:-}" = --nodes ]; then
      [ $# -ge 2 ] || usage
      NODES_WANTED="$2"; shift 2
      [[ "$NODES_WANTED" =~ ^[1-9][0-9]{0,2}$ ]] || { echo "slurm_cluster.sh: --nodes: '$NODES_WANTED' is not a count from 1 to 999" >&2; exit 2; }
    fi ;;
  kill-node|start-node)
    [ $# -ge 1 ] || usage
    NODE_ARG="$1"; shift ;;
  status|stop) ;;
  *) usage ;;
esac
[ $# -le 1 ] || usage
STATE_DIR="${1:-${LINSWEEP_SLURM_DIR:-/tmp/linsweep-slurm}}"
case "$STATE_DIR" in /*) ;; *) STATE_DIR="$(pwd)/$STATE_DIR" ;; esac
CONF="$STATE_DIR/slurm.conf"
export SLURM_CONF="$CONF"
NODE_LIST="$STATE_DIR/nodes.list"   # one node name per line, written by start
# Unix sockets (munged's, and slurmstepd's in the spool directory) take paths of at most 107
# bytes, and munged runs as the munge user, which must reach its directory: under a deep
# STATE_DIR, or one below a directory others cannot enter (a home of mode 0700, Debian 13's
# default), they go to a directory in /tmp named after STATE_DIR (stop removes it).
enterable_by_all() {  # every existing directory on the way to $1 has o+x
  local d="$1"
  while [ "$d" != / ]; do
    [ ! -e "$d" ] || [ -n "$(find "$d" -maxdepth 0 -perm -o+x)" ] || return 1
    d="$(dirname "$d")"
  done
}
SOCKET_DIR="$STATE_DIR"
if [ ${#STATE_DIR} -gt 60 ] || ! enterable_by_all "$STATE_DIR"; then
  SOCKET_DIR="/tmp/linsweep-slurm-$(printf %s "$STATE_DIR" | cksum | cut -d' ' -f1)"
fi
MUNGE_DIR="$SOCKET_DIR/munge"
MUNGE_SOCKET="$MUNGE_DIR/munge.socket"
PARTITION=debug
CTLD_PORT="${LINSWEEP_SLURMCTLD_PORT:-6817}"
SLURMD_PORT="${LINSWEEP_SLURMD_PORT:-6818}"

die() { echo "slurm_cluster.sh: $*" >&2; exit 1; }

# The nodes' network, for N >= 2: OpenMPI's daemons on different nodes talk over TCP, and
# OpenMPI 5's (PRRTE) never take a loopback interface for that, even when told to. start makes
# a veth pair of the cluster's own, lsw<checksum of STATE_DIR> and its peer ...p, both up, with
# 10.213.X.1/24 on the first (X: the first /24 from the checksum on that no address or route of
# this host touches), and writes "INTERFACE CIDR ADDRESS" to NET_FILE; stop deletes the pair.
# The nodes share the host's network namespace, so the address reaches every node through the
# kernel's local routing: nothing leaves the host. Tests name the interface in the launcher's
# arguments (tests/slurm/multinode_test.sh).
NET_FILE="$STATE_DIR/network"
NET_IF="lsw$(printf %s "$STATE_DIR" | cksum | cut -d' ' -f1)"
NET_IF="${NET_IF:0:13}"   # interface names take 15 characters; the peer adds "p"

node_dir() { echo "$STATE_DIR/nodes/$1"; }
node_pin() { echo "$STATE_DIR/nodes/$1/uts"; }   # bind mount that keeps the node's namespace
node_pidfile() { echo "$STATE_DIR/nodes/$1/slurmd.pid"; }

log_tails() {
  local f
  for f in "$STATE_DIR"/slurmctld.log "$STATE_DIR"/nodes/*/slurmd.log \
           "$STATE_DIR"/slurmctld.stderr "$STATE_DIR"/nodes/*/slurmd.stderr \
           "$MUNGE_DIR"/munged.log "$STATE_DIR"/munged.stderr; do
    [ -s "$f" ] || continue
    echo "---- tail $f" >&2
    tail -n 25 "$f" >&2
  done
}

STARTING=0
# Failure: message, daemon log tails; a failed start stops what it started (STATE_DIR and its
# logs stay for inspection; `stop` removes them).
fail() {
  echo "slurm_cluster.sh: $*" >&2
  log_tails
  if [ "$STARTING" = 1 ]; then stop_everything >/dev/null 2>&1 || true; fi
  exit 1
}

pid_alive() {  # pidfile -> 0 if the process in it runs
  local pid
  [ -s "$1" ] || return 1
  pid="$(cat "$1" 2>/dev/null)" || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

munged_running() {
  pid_alive "$MUNGE_DIR/munged.pid" && munge -n -S "$MUNGE_SOCKET" </dev/null >/dev/null 2>&1
}

install_packages() {
  if command -v slurmctld >/dev/null && command -v slurmd >/dev/null &&
     command -v sbatch >/dev/null && command -v munged >/dev/null &&
     command -v munge >/dev/null && command -v unshare >/dev/null && command -v nsenter >/dev/null; then
    return 0
  fi
  [ "$(id -u)" -eq 0 ] || die "slurm-wlm/munge missing and not root to install them"
  echo "slurm_cluster.sh: installing slurm-wlm munge util-linux" >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -q slurm-wlm munge util-linux >/dev/null 2>&1; then
    apt-get update -q >/dev/null 2>&1 || true
    apt-get install -y -q slurm-wlm munge util-linux >/dev/null || die "apt-get install slurm-wlm munge util-linux failed"
  fi
  # The Debian packages do not start anything here (no systemd); we start the daemons below.
}

# A munged of this cluster's own: a cluster on another STATE_DIR, or the host's munged, is
# neither used nor stopped. Slurm's clients and daemons find its socket through AuthInfo.
start_munge() {
  if [ ! -s /etc/munge/munge.key ]; then
    mkdir -p /etc/munge
    if command -v mungekey >/dev/null; then
      mungekey --create --keyfile=/etc/munge/munge.key >/dev/null
    else
      dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
    fi
  fi
  chown munge:munge /etc/munge /etc/munge/munge.key
  chmod 0700 /etc/munge
  chmod 0400 /etc/munge/munge.key
  if munged_running; then return 0; fi
  mkdir -p "$MUNGE_DIR"
  chown munge:munge "$MUNGE_DIR"
  chmod 0755 "$MUNGE_DIR"   # munged requires execute permission for all on the socket's directory
  rm -f "$MUNGE_SOCKET" "$MUNGE_SOCKET.lock"
  runuser -u munge -- /usr/sbin/munged --socket="$MUNGE_SOCKET" --pid-file="$MUNGE_DIR/munged.pid" \
    --log-file="$MUNGE_DIR/munged.log" --seed-file="$MUNGE_DIR/munged.seed" --key-file=/etc/munge/munge.key \
    2>"$STATE_DIR/munged.stderr" || fail "munged failed to start"
  local i
  for i in $(seq 1 50); do munged_running && break; sleep 0.1; done
  munged_running || fail "munged started but 'munge -n -S $MUNGE_SOCKET' does not work"
}

write_conf() {
  local cpus mem_kb mem_mb i name
  cpus="$(nproc)"
  mem_kb="$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)"
  mem_mb=$(( mem_kb / 1024 ))
  # A bit below the real amount: a node reporting less than RealMemory is drained.
  mem_mb=$(( mem_mb * 9 / 10 ))
  cat >"$CONF" <<EOF
# Generated by scripts/slurm_cluster.sh for linsweep integration tests.
ClusterName=linsweep
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=${CTLD_PORT}
SlurmdPort=${SLURMD_PORT}
AuthType=auth/munge
# cred_expire (default 120 s) is also how long a requeued job must wait before it
# may start again (Reason=BeginTime, EligibleTime = requeue + cred_expire + 1).
# socket: this cluster's munged (auth/munge and crypto/munge both read it here).
AuthInfo=cred_expire=${LINSWEEP_SLURM_CRED_EXPIRE:-10},socket=${MUNGE_SOCKET}
CryptoType=crypto/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
SchedulerType=sched/backfill
# The main scheduling loop tests all pending jobs every sched_interval s (default 60);
# a requeued job that became eligible waits for it. 5 s keeps tests short.
SchedulerParameters=sched_interval=${LINSWEEP_SLURM_SCHED_INTERVAL:-5}
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# Requeue is allowed by default (sbatch --requeue not needed, see report).
JobRequeue=1
# A node that was down (kill-node) is idle again once its slurmd registers.
ReturnToService=2
KillWait=5
# Finished jobs stay in slurmctld's memory (scontrol show job) this long.
MinJobAge=300
SlurmctldTimeout=10
# How long a node may not answer before slurmctld sets it DOWN (and fails or requeues its jobs).
SlurmdTimeout=${LINSWEEP_SLURMD_TIMEOUT:-10}
InactiveLimit=0
Waittime=0
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
StateSaveLocation=${STATE_DIR}/state
# %n: the node's name, so that several slurmd on this host keep apart.
SlurmdSpoolDir=${SOCKET_DIR}/spool/%n
SlurmctldPidFile=${STATE_DIR}/slurmctld.pid
SlurmdPidFile=${STATE_DIR}/nodes/%n/slurmd.pid
SlurmctldLogFile=${STATE_DIR}/slurmctld.log
SlurmdLogFile=${STATE_DIR}/nodes/%n/slurmd.log
MailProg=/bin/true
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=${STATE_DIR}/plugstack.conf
EOF
  i=0
  while read -r name; do
    echo "NodeName=${name} NodeAddr=127.0.0.1 Port=$(( SLURMD_PORT + i )) CPUs=${cpus} RealMemory=${mem_mb} State=UNKNOWN" >>"$CONF"
    i=$(( i + 1 ))
  done <"$NODE_LIST"
  echo "PartitionName=${PARTITION} Nodes=$(paste -sd, "$NODE_LIST") Default=YES MaxTime=INFINITE State=UP" >>"$CONF"
  : >"$STATE_DIR/plugstack.conf"
}

port_in_use() {  # something accepts connections on 127.0.0.1:$1
  timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

port_owner() {
  command -v ss >/dev/null && ss -ltnpH "sport = :$1" 2>/dev/null | grep -oE 'users:.*' | head -n 1
}

node_state() { sinfo -h -n "$1" -o %T 2>/dev/null | head -n 1; }

namespaced() { [ -e "$(node_pin "$1")" ]; }

# Every process in the node's UTS namespace (its slurmd and all it started), by the inode of
# the namespace the bind mount keeps alive (so that it cannot be reused by another one).
# One find for all of /proc: a process per pid would take seconds on a loaded host, long enough
# for a job to finish before kill-node strikes.
node_pids() {
  local ino
  namespaced "$1" || return 0
  ino="$(stat -L -c %i "$(node_pin "$1")" 2>/dev/null)" || return 0
  find /proc/[0-9]*/ns/uts -maxdepth 0 -printf '%p %l\n' 2>/dev/null |
    awk -v want="uts:[$ino]" '$2 == want { split($1, part, "/"); print part[3] }'
  return 0
}

# SIGKILL every process of the node until none is left (a dying slurmstepd may still fork).
kill_node_processes() {
  local i pids
  for i in $(seq 1 50); do
    pids="$(node_pids "$1")"
    [ -z "$pids" ] && return 0
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
    sleep 0.1
  done
  [ -z "$(node_pids "$1")" ] || { echo "slurm_cluster.sh: node $1: processes left: $(node_pids "$1" | tr '\n' ' ')" >&2; return 1; }
}

subnet_free() {  # 0 when no address or route of this host lies in 10.213.$1.0/24
  [ -z "$(ip -4 -o addr show to "10.213.$1.0/24")" ] && [ -z "$(ip -4 route show root "10.213.$1.0/24")" ] &&
    [ -z "$(ip -4 route show match "10.213.$1.0/24" | grep -v '^default ')" ]
}

start_network() {
  [ "$NODES_WANTED" -gt 1 ] || return 0
  command -v ip >/dev/null || fail "the nodes' network needs ip (iproute2)"
  local seed x i
  seed="$(printf %s "$STATE_DIR" | cksum | cut -d' ' -f1)"
  for i in $(seq 0 249); do
    x=$(( (seed + i) % 250 + 1 ))
    subnet_free "$x" && break
    x=""
  done
  [ -n "$x" ] || fail "no free /24 in 10.213.0.0/16 for the nodes' network"
  ip link add "$NET_IF" type veth peer name "${NET_IF}p" 2>"$STATE_DIR/network.stderr" ||
    fail "ip link add $NET_IF type veth: $(cat "$STATE_DIR/network.stderr")"
  ip addr add "10.213.$x.1/24" dev "$NET_IF" && ip link set "${NET_IF}p" up && ip link set "$NET_IF" up ||
    fail "cannot bring up $NET_IF with 10.213.$x.1/24"
  echo "$NET_IF 10.213.$x.0/24 10.213.$x.1" >"$NET_FILE"
}

stop_network() {
  if ip link show "$NET_IF" >/dev/null 2>&1; then
    ip link del "$NET_IF" || echo "slurm_cluster.sh: cannot delete $NET_IF" >&2
  fi
  rm -f "$NET_FILE"
}

start_slurmd() {  # node
  local name="$1" dir
  dir="$(node_dir "$name")"
  mkdir -p "$dir" "$SOCKET_DIR/spool/$name"
  if namespaced "$name"; then
    nsenter --uts="$(node_pin "$name")" -- slurmd -f "$CONF" -N "$name" 2>"$dir/slurmd.stderr"
  elif [ "$(wc -l <"$NODE_LIST")" -gt 1 ]; then
    : >"$(node_pin "$name")"
    # The bind mount keeps the namespace (and its inode) until stop unmounts it.
    # shellcheck disable=SC2016  # $1 and $2 are the inner shell's arguments
    unshare --uts="$(node_pin "$name")" -- sh -c 'hostname "$1" && exec slurmd -f "$2" -N "$1"' sh "$name" "$CONF" \
      2>"$dir/slurmd.stderr"
  else
    slurmd -f "$CONF" -N "$name" 2>"$dir/slurmd.stderr"
  fi
}

# node, seconds, states: 0 once the node is in one of the states (a regex; responding: no '*');
# resumes a node left down.
wait_state() {
  local name="$1" i st="" resumed=0
  for i in $(seq 1 $(( $2 * 2 ))); do
    if [ "$i" -gt 4 ]; then
      pid_alive "$STATE_DIR/slurmctld.pid" || fail "slurmctld is not running"
      pid_alive "$(node_pidfile "$name")" || fail "slurmd of node $name is not running"
    fi
    st="$(node_state "$name")"
    [[ "$st" =~ ^($3)$ ]] && return 0
    case "$st" in
      down*|drain*|fail*)
        if [ "$resumed" -eq 0 ] || [ $(( i % 10 )) -eq 0 ]; then
          scontrol update nodename="$name" state=resume >/dev/null 2>&1 || true
          resumed=1
        fi ;;
    esac
    sleep 0.5
  done
  fail "node $name not $3 after $2 s (state '${st:-?}'): $(scontrol show node "$name" 2>&1 | grep -E 'State=|Reason=' | tr -s ' ' | tr '\n' ' ')"
}

cluster_up() {
  local name
  [ -s "$NODE_LIST" ] && pid_alive "$STATE_DIR/slurmctld.pid" && munged_running || return 1
  while read -r name; do
    pid_alive "$(node_pidfile "$name")" || return 1
    case "$(node_state "$name")" in idle*|mixed*|allocated*|completing*) ;; *) return 1 ;; esac
  done <"$NODE_LIST"
}

do_start() {
  [ "$(id -u)" -eq 0 ] || die "must run as root (SlurmUser=root)"
  mkdir -p "$STATE_DIR"
  if [ -s "$CONF" ] && cluster_up && [ "$(wc -l <"$NODE_LIST")" -eq "$NODES_WANTED" ]; then
    echo "slurm cluster already running: nodes $(paste -sd, "$NODE_LIST"), SLURM_CONF=$CONF"
    echo "export SLURM_CONF=$CONF"
    return 0
  fi
  # Whatever an earlier, half-started run on this STATE_DIR left.
  stop_everything
  install_packages
  # Another cluster (another STATE_DIR) on the same ports would answer our clients while our
  # daemons die on bind(): refuse instead.
  local port i
  for port in "$CTLD_PORT" $(seq "$SLURMD_PORT" $(( SLURMD_PORT + NODES_WANTED - 1 ))); do
    if port_in_use "$port"; then
      die "port $port is in use ($(port_owner "$port")); another Slurm cluster runs (stop it: $0 stop OTHER_STATE_DIR) or set LINSWEEP_SLURMCTLD_PORT / LINSWEEP_SLURMD_PORT"
    fi
  done
  STARTING=1
  mkdir -p "$STATE_DIR/state" "$STATE_DIR/nodes"
  if [ "$NODES_WANTED" -eq 1 ]; then
    hostname -s >"$NODE_LIST"
  else
    : >"$NODE_LIST"
    for i in $(seq 1 "$NODES_WANTED"); do echo "n$i" >>"$NODE_LIST"; done
  fi
  start_network
  start_munge
  write_conf
  slurmctld -f "$CONF" -c -i 2>"$STATE_DIR/slurmctld.stderr" || fail "slurmctld failed to start"
  local name
  while read -r name; do
    start_slurmd "$name" || fail "slurmd of node $name failed to start"
  done <"$NODE_LIST"
  while read -r name; do wait_state "$name" 60 idle; done <"$NODE_LIST"
  pid_alive "$STATE_DIR/slurmctld.pid" || fail "slurmctld is not running"
  echo "slurm cluster started: slurmctld pid $(cat "$STATE_DIR/slurmctld.pid"), munged (socket $MUNGE_SOCKET), nodes $(paste -sd, "$NODE_LIST") (CPUs=$(nproc) each, slurmd ports $SLURMD_PORT..$(( SLURMD_PORT + NODES_WANTED - 1 ))$([ -s "$NET_FILE" ] && echo ", network $(cut -d' ' -f1,3 "$NET_FILE")")), partition $PARTITION, $(sinfo --version), state in $STATE_DIR"
  echo "export SLURM_CONF=$CONF"
}

kill_pidfile() {  # pidfile name
  local pf="$1" pid i
  pid_alive "$pf" || { rm -f "$pf"; return 0; }
  pid="$(cat "$pf")"
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "slurm_cluster.sh: $2 (pid $pid) ignored SIGTERM, sending SIGKILL" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pf"
}

# Jobs, every node's processes and namespace, slurmctld, munged. Safe when some or all of them
# are gone already.
stop_everything() {
  local name i
  if [ -s "$CONF" ] && pid_alive "$STATE_DIR/slurmctld.pid"; then
    scancel --quiet --full --partition="$PARTITION" 2>/dev/null || true
    scancel --quiet --state=PENDING 2>/dev/null || true
    for i in $(seq 1 30); do
      [ -z "$(squeue -h -t RUNNING,COMPLETING,SUSPENDED,CONFIGURING -o %i 2>/dev/null)" ] && break
      sleep 0.5
    done
  fi
  local d
  for d in "$STATE_DIR"/nodes/*/; do
    [ -d "$d" ] || continue
    name="$(basename "$d")"
    kill_pidfile "$(node_pidfile "$name")" "slurmd of $name"
    if namespaced "$name"; then
      kill_node_processes "$name" || true
      if findmnt -rn "$(node_pin "$name")" >/dev/null 2>&1; then
        umount "$(node_pin "$name")" || echo "slurm_cluster.sh: cannot unmount $(node_pin "$name")" >&2
      fi
      rm -f "$(node_pin "$name")"
    fi
  done
  kill_pidfile "$STATE_DIR/slurmctld.pid" slurmctld
  kill_pidfile "$MUNGE_DIR/munged.pid" munged
  stop_network
}

do_stop() {
  [ -d "$STATE_DIR" ] || { echo "slurm cluster not running (no $STATE_DIR)"; return 0; }
  stop_everything
  local pin
  for pin in "$STATE_DIR"/nodes/*/uts; do
    [ -e "$pin" ] || continue
    findmnt -rn "$pin" >/dev/null 2>&1 && die "$pin is still mounted; STATE_DIR kept"
  done
  [ "$SOCKET_DIR" = "$STATE_DIR" ] || rm -rf "$SOCKET_DIR"
  rm -rf "$STATE_DIR"
  echo "slurm cluster stopped, $STATE_DIR removed"
}

do_status() {
  local rc=0 name pids
  if pid_alive "$STATE_DIR/slurmctld.pid"; then
    echo "slurmctld: running (pid $(cat "$STATE_DIR/slurmctld.pid"))"
  else
    echo "slurmctld: not running"; rc=1
  fi
  if munged_running; then echo "munged: running (socket $MUNGE_SOCKET)"; else echo "munged: not running"; rc=1; fi
  if [ ! -s "$CONF" ] || [ ! -s "$NODE_LIST" ]; then
    echo "no $CONF"; return 1
  fi
  echo "SLURM_CONF=$CONF"
  if [ -s "$NET_FILE" ]; then
    local net_if net_cidr
    read -r net_if net_cidr _ <"$NET_FILE"
    if ip link show "$net_if" >/dev/null 2>&1; then echo "network: $net_if, $net_cidr"; else echo "network: $net_if missing"; rc=1; fi
  fi
  while read -r name; do
    pids="$(node_pids "$name" | wc -l)"
    if pid_alive "$(node_pidfile "$name")"; then
      printf '%s: slurmd pid %s, state %s%s\n' "$name" "$(cat "$(node_pidfile "$name")")" "$(node_state "$name" || echo '?')" \
        "$(namespaced "$name" && echo ", $pids processes in its namespace")"
    else
      printf '%s: slurmd not running, state %s%s\n' "$name" "$(node_state "$name" || echo '?')" \
        "$(namespaced "$name" && echo ", $pids processes in its namespace")"
      rc=1
    fi
  done <"$NODE_LIST"
  sinfo -N 2>&1 || rc=1
  return $rc
}

known_node() {
  grep -qx -- "$1" "$NODE_LIST" 2>/dev/null || die "no node '$1' in $NODE_LIST"
  namespaced "$1" || die "node '$1' runs in this host's namespace (a cluster of one node): kill-node and start-node need --nodes 2 or more"
}

do_kill_node() {
  known_node "$NODE_ARG"
  local pids p c names=""
  pids="$(node_pids "$NODE_ARG")"
  # Names with bash's own read: no process per pid between the scan and the kill.
  for p in $pids; do read -r c <"/proc/$p/comm" 2>/dev/null && names+="$c"$'\n'; done
  kill_node_processes "$NODE_ARG" || exit 1
  names="$(sort <<<"$names" | awk 'NF' | uniq -c | awk '{printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1}')"
  rm -f "$(node_pidfile "$NODE_ARG")"
  echo "node $NODE_ARG: killed (SIGKILL) ${names:-no processes}"
}

do_start_node() {
  known_node "$NODE_ARG"
  pid_alive "$(node_pidfile "$NODE_ARG")" && { echo "node $NODE_ARG: slurmd already running"; return 0; }
  kill_node_processes "$NODE_ARG" || exit 1
  start_slurmd "$NODE_ARG" || fail "slurmd of node $NODE_ARG failed to start"
  # A job that waited for the node (a requeued one) may take it at once.
  wait_state "$NODE_ARG" 60 "idle|mixed|allocated|completing"
  echo "node $NODE_ARG: slurmd pid $(cat "$(node_pidfile "$NODE_ARG")"), $(node_state "$NODE_ARG")"
}

case "$cmd" in
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
  kill-node) do_kill_node ;;
  start-node) do_start_node ;;
esac
