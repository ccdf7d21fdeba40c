#!/usr/bin/env bash
# A real single-node Slurm cluster on this host, for integration tests.
#
#   scripts/slurm_cluster.sh start  [STATE_DIR]   # default /tmp/linsweep-slurm
#   scripts/slurm_cluster.sh status [STATE_DIR]
#   scripts/slurm_cluster.sh stop   [STATE_DIR]
#
# Needs root (SlurmUser=root, munge key, apt-get). `start` installs slurm-wlm and
# munge only if they are missing, starts munged if it is not running, writes
# STATE_DIR/slurm.conf and starts slurmctld + slurmd on it, then waits until the
# node is idle. Nothing is written to /etc/slurm: every Slurm command finds the
# config through SLURM_CONF, which the caller must export (start prints the line):
#
#   export SLURM_CONF=/tmp/linsweep-slurm/slurm.conf
#
# Without it the client commands (sbatch, squeue, sinfo, scontrol, ...) fail with
# "fetch_config: DNS SRV lookup failed ... Could not establish a configuration
# source". slurmd sets SLURM_CONF in every job's environment (even with
# --export=NONE), so `scontrol requeue` / `srun` inside a job work too.
#
# Environment: LINSWEEP_SLURM_DIR (default STATE_DIR), LINSWEEP_SLURMCTLD_PORT /
# LINSWEEP_SLURMD_PORT (6817/6818; start refuses if they are taken, e.g. by a
# cluster on another STATE_DIR), LINSWEEP_SLURM_CRED_EXPIRE (10; Slurm's default is
# 120) and LINSWEEP_SLURM_SCHED_INTERVAL (5; default 60): together they set how long
# a requeued job waits before it runs again (here ~15 s, with defaults ~2-3 min).
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

cmd="${1:-}"
STATE_DIR="${2:-${LINSWEEP_SLURM_DIR:-/tmp/linsweep-slurm}}"
case "$STATE_DIR" in /*) ;; *) STATE_DIR="$(pwd)/$STATE_DIR" ;; esac
CONF="$STATE_DIR/slurm.conf"
export SLURM_CONF="$CONF"
NODE="$(hostname -s)"
PARTITION=debug

die() { echo "slurm_cluster.sh: $*" >&2; exit 1; }

log_tails() {
  local f
  for f in "$STATE_DIR"/slurmctld.log "$STATE_DIR"/slurmd.log \
           "$STATE_DIR"/slurmctld.stderr "$STATE_DIR"/slurmd.stderr \
           "$STATE_DIR"/munged.stderr; do
    [ -s "$f" ] || continue
    echo "---- tail $f" >&2
    tail -n 25 "$f" >&2
  done
}

STARTING=0
# Failure: message, daemon log tails; a failed start stops the daemons it started
# (STATE_DIR and its logs stay for inspection; `stop` removes them).
fail() {
  echo "slurm_cluster.sh: $*" >&2
  log_tails
  if [ "$STARTING" = 1 ]; then stop_daemons >/dev/null 2>&1 || true; fi
  exit 1
}

pid_alive() {  # pidfile -> 0 if the process in it runs
  local pid
  [ -s "$1" ] || return 1
  pid="$(cat "$1" 2>/dev/null)" || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

munged_pidfile=/run/munge/munged.pid
munged_running() {
  pid_alive "$munged_pidfile" && return 0
  munge -n </dev/null >/dev/null 2>&1
}

install_packages() {
  if command -v slurmctld >/dev/null && command -v slurmd >/dev/null &&
     command -v sbatch >/dev/null && command -v munged >/dev/null &&
     command -v munge >/dev/null; then
    return 0
  fi
  [ "$(id -u)" -eq 0 ] || die "slurm-wlm/munge missing and not root to install them"
  echo "slurm_cluster.sh: installing slurm-wlm munge" >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -q slurm-wlm munge >/dev/null 2>&1; then
    apt-get update -q >/dev/null 2>&1 || true
    apt-get install -y -q slurm-wlm munge >/dev/null || die "apt-get install slurm-wlm munge failed"
  fi
  # The Debian packages do not start anything here (no systemd); we start the daemons below.
}

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
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge
  chmod 0755 /run/munge
  rm -f /run/munge/munge.socket.2 /run/munge/munge.socket.2.lock
  runuser -u munge -- /usr/sbin/munged 2>"$STATE_DIR/munged.stderr" || fail "munged failed to start"
  local i
  for i in $(seq 1 50); do munged_running && break; sleep 0.1; done
  munged_running || fail "munged started but 'munge -n' does not work"
  touch "$STATE_DIR/munged.started-by-us"
}

write_conf() {
  local cpus mem_kb mem_mb
  cpus="$(nproc)"
  mem_kb="$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)"
  mem_mb=$(( mem_kb / 1024 ))
  # A bit below the real amount: a node reporting less than RealMemory is drained.
  mem_mb=$(( mem_mb * 9 / 10 ))
  cat >"$CONF" <<EOF
# Generated by scripts/slurm_cluster.sh for linsweep integration tests.
ClusterName=linsweep
SlurmctldHost=${NODE}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=${CTLD_PORT}
SlurmdPort=${SLURMD_PORT}
AuthType=auth/munge
# cred_expire (default 120 s) is also how long a requeued job must wait before it
# may start again (Reason=BeginTime, EligibleTime = requeue + cred_expire + 1).
AuthInfo=cred_expire=${LINSWEEP_SLURM_CRED_EXPIRE:-10}
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
ReturnToService=2
KillWait=5
# Finished jobs stay in slurmctld's memory (scontrol show job) this long.
MinJobAge=300
SlurmctldTimeout=10
SlurmdTimeout=10
InactiveLimit=0
Waittime=0
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
StateSaveLocation=${STATE_DIR}/state
SlurmdSpoolDir=${STATE_DIR}/spool
SlurmctldPidFile=${STATE_DIR}/slurmctld.pid
SlurmdPidFile=${STATE_DIR}/slurmd.pid
SlurmctldLogFile=${STATE_DIR}/slurmctld.log
SlurmdLogFile=${STATE_DIR}/slurmd.log
MailProg=/bin/true
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=${STATE_DIR}/plugstack.conf
NodeName=${NODE} NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=${mem_mb} State=UNKNOWN
PartitionName=${PARTITION} Nodes=${NODE} Default=YES MaxTime=INFINITE State=UP
EOF
  : >"$STATE_DIR/plugstack.conf"
}

CTLD_PORT="${LINSWEEP_SLURMCTLD_PORT:-6817}"
SLURMD_PORT="${LINSWEEP_SLURMD_PORT:-6818}"

port_in_use() {  # something accepts connections on 127.0.0.1:$1
  timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

port_owner() {
  command -v ss >/dev/null && ss -ltnpH "sport = :$1" 2>/dev/null | grep -oE 'users:.*' | head -n 1
}

node_state() { sinfo -h -n "$NODE" -o %T 2>/dev/null | head -n 1; }

cluster_up() {
  pid_alive "$STATE_DIR/slurmctld.pid" && pid_alive "$STATE_DIR/slurmd.pid" &&
    case "$(node_state)" in idle*|mixed*|allocated*|completing*) true ;; *) false ;; esac
}

do_start() {
  [ "$(id -u)" -eq 0 ] || die "must run as root (SlurmUser=root)"
  mkdir -p "$STATE_DIR"
  if [ -s "$CONF" ] && cluster_up; then
    echo "slurm cluster already running: node $NODE ($(node_state)), SLURM_CONF=$CONF"
    echo "export SLURM_CONF=$CONF"
    return 0
  fi
  # Daemons from an earlier, half-started run on this STATE_DIR.
  stop_daemons
  install_packages
  start_munge
  # Another cluster (another STATE_DIR) on the same ports would answer our
  # clients while our daemons die on bind(): refuse instead.
  local port
  for port in "$CTLD_PORT" "$SLURMD_PORT"; do
    if port_in_use "$port"; then
      die "port $port is in use ($(port_owner "$port")); another Slurm cluster runs (stop it: $0 stop OTHER_STATE_DIR) or set LINSWEEP_SLURMCTLD_PORT / LINSWEEP_SLURMD_PORT"
    fi
  done
  mkdir -p "$STATE_DIR/state" "$STATE_DIR/spool"
  STARTING=1
  write_conf
  slurmctld -f "$CONF" -c -i 2>"$STATE_DIR/slurmctld.stderr" || fail "slurmctld failed to start"
  slurmd -f "$CONF" 2>"$STATE_DIR/slurmd.stderr" || fail "slurmd failed to start"
  local i st="" resumed=0
  for i in $(seq 1 120); do
    if [ "$i" -gt 4 ]; then
      pid_alive "$STATE_DIR/slurmctld.pid" || fail "slurmctld is not running"
      pid_alive "$STATE_DIR/slurmd.pid" || fail "slurmd is not running"
    fi
    st="$(node_state)"
    case "$st" in
      idle) break ;;
      down*|drain*|fail*)
        if [ "$resumed" -eq 0 ] || [ $(( i % 10 )) -eq 0 ]; then
          scontrol update nodename="$NODE" state=resume >/dev/null 2>&1 || true
          resumed=1
        fi ;;
    esac
    sleep 0.5
  done
  pid_alive "$STATE_DIR/slurmctld.pid" || fail "slurmctld is not running"
  pid_alive "$STATE_DIR/slurmd.pid" || fail "slurmd is not running"
  [ "$st" = idle ] || fail "node $NODE not idle after 60 s (state '${st:-?}'): $(scontrol show node "$NODE" 2>&1 | grep -E 'State=|Reason=' | tr -s ' ' | tr '\n' ' ')"
  echo "slurm cluster started: slurmctld pid $(cat "$STATE_DIR/slurmctld.pid"), slurmd pid $(cat "$STATE_DIR/slurmd.pid")$( [ -e "$STATE_DIR/munged.started-by-us" ] && echo ", munged" ), node $NODE CPUs=$(nproc) partition $PARTITION, $(sinfo --version), state in $STATE_DIR"
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

stop_daemons() {
  if [ -s "$CONF" ] && pid_alive "$STATE_DIR/slurmctld.pid"; then
    scancel --quiet --full --partition="$PARTITION" 2>/dev/null || true
    scancel --quiet --state=PENDING 2>/dev/null || true
    local i
    for i in $(seq 1 30); do
      [ -z "$(squeue -h -t RUNNING,COMPLETING,SUSPENDED,CONFIGURING -o %i 2>/dev/null)" ] && break
      sleep 0.5
    done
  fi
  kill_pidfile "$STATE_DIR/slurmd.pid" slurmd
  kill_pidfile "$STATE_DIR/slurmctld.pid" slurmctld
}

do_stop() {
  [ -d "$STATE_DIR" ] || { echo "slurm cluster not running (no $STATE_DIR)"; return 0; }
  stop_daemons
  if [ -e "$STATE_DIR/munged.started-by-us" ] && pid_alive "$munged_pidfile"; then
    kill_pidfile "$munged_pidfile" munged
  fi
  rm -rf "$STATE_DIR"
  echo "slurm cluster stopped, $STATE_DIR removed"
}

do_status() {
  local rc=0 d
  for d in slurmctld slurmd; do
    if pid_alive "$STATE_DIR/$d.pid"; then
      echo "$d: running (pid $(cat "$STATE_DIR/$d.pid"))"
    else
      echo "$d: not running"; rc=1
    fi
  done
  if munged_running; then echo "munged: running"; else echo "munged: not running"; rc=1; fi
  if [ -s "$CONF" ]; then
    echo "SLURM_CONF=$CONF"
    sinfo 2>&1 || rc=1
  else
    echo "no $CONF"; rc=1
  fi
  return $rc
}

case "$cmd" in
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
  *) echo "usage: $0 start|stop|status [STATE_DIR]" >&2; exit 2 ;;
esac
