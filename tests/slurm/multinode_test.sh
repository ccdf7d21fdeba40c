#!/usr/bin/env bash
# linsweep on a real two-node Slurm cluster on this host (scripts/slurm_cluster.sh start --nodes 2:
# slurmd n1 and n2 in UTS namespaces of their own, one slurmctld, everything on 127.0.0.1).
# Each check compares the tables with a single-process run of the same spec, bitwise.
#
#   multinode_test.sh BIN TEST_BIN SRC WORK setup       start the cluster on free ports, run the reference
#   multinode_test.sh BIN TEST_BIN SRC WORK submit      a sweep's ranks on both nodes: journal and unit logs
#                                              name the host, rank and threads that ran each unit;
#                                              worker groups that would span nodes are refused
#   multinode_test.sh BIN TEST_BIN SRC WORK node_death  the node of rank 0 (which holds the store lock) dies
#                                              mid-sweep: the lock is free at once, the job is
#                                              requeued, and with the node back the sweep completes
#   multinode_test.sh BIN TEST_BIN SRC WORK arrays      split units:2 with --max-concurrent 2: one job array
#                                              per dependency depth, afterok between them; status
#                                              and resume --submit see the tasks
#   multinode_test.sh BIN TEST_BIN SRC WORK node_loss   (long) the other node dies: the job fails at once,
#                                              and the sweep finishes on the remaining node
#   multinode_test.sh BIN TEST_BIN SRC WORK cleanup     stop the cluster; fail if a daemon, a process of a
#                                              node, a namespace or the nodes' network is left
# ctest runs setup and cleanup as a fixture around the others (cleanup also after a failure).
set -euo pipefail
bin="$1"; testbin="$2"; src="$3"; work="$4"; mode="$5"
state="$work/cluster"
cluster="$src/scripts/slurm_cluster.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Every rank's thread count derives from its node (CPUs / ranks on the node); the reference run
# sets the same (1 with 2 ranks per node on this host's CPUs), see check_threads.
unset LINSWEEP_THREADS
t_start=$SECONDS

say() { echo "[$(( SECONDS - t_start ))s] $*"; }
since() { awk -v now="$EPOCHREALTIME" -v then="$1" 'BEGIN { printf "%.1f", now - then }'; }  # seconds since $1

. "$src/tests/support/fixture_sweep.sh"
write_spec() {  # $1 file, $2 tasks per node, $3 extra runtime
  fixture_sweep "$src" "$work/unused" > "$1"
  cat >> "$1" <<YAML
runtime: {batch: 8, grace_seconds: 20$3}
# launcher_args: unbound ranks (the default), and OpenMPI's TCP transport and out-of-band
# channel on the cluster's own network, as on a cluster with several interfaces (docs/slurm.md).
resources: {nodes: 2, tasks_per_node: $2, time: "00:10:00", launcher_args: [--bind-to, none, --mca, btl_tcp_if_include, $NET_IF, --mca, oob_tcp_if_include, $NET_IF]}
YAML
}

port_free() { ! timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

# ---- helpers for the checks -----------------------------------------------------------------
# The fixture's cluster, as an earlier check may have left it: that check's jobs cancelled and
# every node up again.
load_env() {
  if [ -s "$work/skip" ]; then echo "skipped: $(cat "$work/skip")"; exit 77; fi
  [ -s "$work/env" ] || { echo "no $work/env: the setup test did not run or failed"; exit 1; }
  # shellcheck disable=SC1091
  . "$work/env"
  export SLURM_CONF
  scancel --quiet --user=root 2>/dev/null || true
  local node
  for node in n1 n2; do
    [ -n "$(node_processes "$node")" ] || "$cluster" start-node "$node" "$state"
  done
  for _ in $(seq 1 60); do
    [ -z "$(squeue -h -o %i)" ] && return 0
    sleep 0.5
  done
  echo "jobs of an earlier check are still in the queue:"; squeue; exit 1
}
job_field() {  # $1 store, $2 job index, $3 field
  "$bin" status "$1" --json | /usr/bin/python3 -c "import json,sys; j=json.load(sys.stdin)['slurm_jobs'][$2]; print(j['$3'])"
}
wait_state() {  # $1 store, $2 job index, $3 state regex, $4 timeout seconds
  local s="" deadline=$(( SECONDS + $4 ))
  while [ "$SECONDS" -lt "$deadline" ]; do
    s=$(job_field "$1" "$2" state)
    if [[ "$s" =~ ^($3)$ ]]; then say "job $(job_field "$1" "$2" job_id): $s"; return 0; fi
    sleep 1
  done
  echo "timed out waiting for $3 (last state: $s)"; "$bin" status "$1"
  tail -n 40 "$1"/slurm/logs/*.out "$state"/slurmctld.log "$state"/nodes/*/slurmd.log || true
  return 1
}
committed() { find "$1/units" -maxdepth 1 -name '*.h5' ! -name '*.arrays.h5' ! -name '.*' 2>/dev/null | wc -l; }
wait_committed() {  # $1 store, $2 count
  for _ in $(seq 1 240); do
    [ "$(committed "$1")" -ge "$2" ] && return 0
    sleep 0.5
  done
  echo "fewer than $2 units committed in $1"; return 1
}
compare() { /usr/bin/python3 "$src/tests/orchestrator/compare_stores.py" "$work/local" "$1" --exact --ignore=toy; }
# Processes of node $1 (its UTS namespace), as "pid comm" lines.
node_processes() {
  local ino p c
  ino=$(stat -L -c %i "$state/nodes/$1/uts")
  for p in $(find /proc/[0-9]*/ns/uts -maxdepth 0 -printf '%p %l\n' 2>/dev/null |
             awk -v want="uts:[$ino]" '$2 == want { split($1, part, "/"); print part[3] }'); do
    read -r c <"/proc/$p/comm" 2>/dev/null && echo "$p $c"
  done
  return 0
}
# True when a linsweep rank (the tool or the test binary, whose comm is cut to 15 characters)
# runs on node $1 (captured first: grep -q would end the pipe early).
ranks_on() {
  local procs
  procs=$(node_processes "$1")
  grep -qE " linsweep(_test_c)?$" <<<"$procs"
}
# The committed journal lines as "host rank" pairs, one per line.
committed_hosts() {
  /usr/bin/python3 -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["event"] == "committed" and not e.get("recovered"):
        print(e["host"], e["rank"])' "$1/journal.jsonl"
}

# Every committed line names the rank that ran the unit and that rank's node: with 2 ranks per
# node placed by slot, ranks 0-1 are on n1 and 2-3 on n2; both nodes ran units.
check_hosts() {
  local pairs
  pairs=$(committed_hosts "$1")
  echo "committed units by host and rank:"; sort <<<"$pairs" | uniq -c
  while read -r host rank; do
    case "$rank" in
      1) [ "$host" = n1 ] || { echo "rank 1 ran on n1, journal says $host"; exit 1; } ;;
      2|3) [ "$host" = n2 ] || { echo "rank $rank ran on n2, journal says $host"; exit 1; } ;;
      *) echo "committed by rank $rank: not a worker"; exit 1 ;;
    esac
  done <<<"$pairs"
  grep -q '^n1 ' <<<"$pairs" || { echo "no unit committed from n1"; exit 1; }
  grep -q '^n2 ' <<<"$pairs" || { echo "no unit committed from n2"; exit 1; }
  # The unit logs say the same, with the thread count each rank derived on its node.
  grep -hoE "on n[12] rank [0-9]+, [0-9]+ threads?" "$1"/logs/*.log | sort | uniq -c
  grep -qE "on n1 rank 1, " "$1"/logs/*.log
  grep -qE "on n2 rank [23], " "$1"/logs/*.log
}

# Threads per rank = CPUs of the node / ranks on the node (2 ranks per node, unbound).
check_threads() {
  local want=$(( $(nproc) / 2 )) seen
  [ "$want" -ge 1 ] || want=1
  seen=$(grep -hoE "on n[12] rank [0-9]+, [0-9]+ threads?" "$1"/logs/*.log)
  [ -n "$seen" ] || { echo "no thread counts in the unit logs"; return 1; }
  if grep -vqE ", $want threads?$" <<<"$seen"; then
    echo "a rank did not run $want threads (CPUs $(nproc) / 2 ranks on its node):"
    sort <<<"$seen" | uniq -c
    return 1
  fi
}

# ---- the modes ------------------------------------------------------------------------------
do_setup() {
  # A cluster an interrupted earlier run left (its namespaces are mounted inside $work).
  [ -d "$state" ] && "$cluster" stop "$state"
  rm -rf "$work"; mkdir -p "$work"
  # Nodes need UTS namespaces and bind mounts (root, CAP_SYS_ADMIN): a container without them
  # skips these tests, as disk_full does without mount.
  if ! unshare --uts true 2>/dev/null; then
    echo "no UTS namespaces here (unshare --uts: $(unshare --uts true 2>&1 | head -n 1))" > "$work/skip"
    echo "skipped: $(cat "$work/skip")"; exit 77
  fi
  # The nodes' network is a veth pair (CAP_NET_ADMIN); without it, the same.
  if ! ip link add "lswq$$" type veth peer name "lswq$$p" 2>"$work/veth.err"; then
    echo "no veth interfaces here (ip link add: $(head -n 1 "$work/veth.err"))" > "$work/skip"
    echo "skipped: $(cat "$work/skip")"; exit 77
  fi
  ip link del "lswq$$"
  local base="" p
  for _ in 1 2 3 4 5 6 7 8; do
    p=$(( 20000 + (RANDOM % 2000) * 10 ))
    if port_free "$p" && port_free $(( p + 1 )) && port_free $(( p + 2 )); then base=$p; break; fi
  done
  [ -n "$base" ] || { echo "no free ports for the cluster"; exit 1; }
  export LINSWEEP_SLURMCTLD_PORT=$base LINSWEEP_SLURMD_PORT=$(( base + 1 ))
  "$cluster" start --nodes 2 "$state" > "$work/cluster.log" 2>&1 || { cat "$work/cluster.log"; exit 1; }
  cat "$work/cluster.log"
  [ -s "$state/network" ] || { echo "the cluster made no network ($state/network)"; exit 1; }
  { echo "SLURM_CONF=$state/slurm.conf"; echo "NET_IF=$(cut -d' ' -f1 "$state/network")"; } > "$work/env"
  load_env
  "$cluster" status "$state"
  srun -N2 hostname | sort | tr '\n' ' ' | grep -qx "n1 n2 " || { echo "srun -N2 hostname does not print n1 and n2"; exit 1; }
  write_spec "$work/spec.yaml" 2 ""
  local threads=$(( $(nproc) / 2 )); [ "$threads" -ge 1 ] || threads=1
  say "reference: one process, $threads thread(s)"
  LINSWEEP_THREADS=$threads "$bin" run "$work/spec.yaml" --store "$work/local" --quiet
  say "setup done"
}

do_submit() {
  load_env
  local s="$work/submit" g="$work/groups"
  rm -rf "$s" "$g"
  # First a layout whose worker group would span the nodes: 2 nodes x 2 ranks, rank 0 and 1 on
  # n1, 2 and 3 on n2, and one group of the 3 workers. It must be refused (exit 2).
  write_spec "$work/spec-groups.yaml" 2 ", ranks_per_group: 3"
  "$bin" submit "$work/spec-groups.yaml" --store "$g"
  "$bin" submit "$work/spec.yaml" --store "$s"
  grep -q -- "--mca' 'btl_tcp_if_include' '$NET_IF'" "$s"/slurm/*.sh
  wait_state "$s" 0 "COMPLETED" 300
  [ "$(job_field "$g" 0 state)" = FAILED ]
  grep -h "runtime.ranks_per_group 3: worker group 0 (ranks 1-3) spans n1 and n2" "$g"/slurm/logs/*.out
  grep -h "^linsweep job" "$s"/slurm/logs/*.out
  grep -q "on n1 (nodes n\[1-2\])" "$s"/slurm/logs/*.out   # the batch script runs on the first node
  compare "$s"
  check_hosts "$s"
  check_threads "$s"
  say "submit across nodes: passed"
}

do_node_death() {
  load_env
  local s="$work/death" before t0 lock id
  rm -rf "$s"
  # Sleeping toy units beside the sweep (test binary) so that the node dies mid-sweep.
  sed 's|^experiments:|experiments:\n  toy: {units: 4, sleep: 2}|' "$work/spec.yaml" > "$work/slow.yaml"
  "$testbin" submit "$work/slow.yaml" --store "$s"
  wait_committed "$s" 2
  lock=$(cat "$s/lock")
  echo "store lock record: $lock"
  [[ "$lock" == "host n1 pid "* ]]                 # rank 0 runs on n1 and holds the lock
  if flock -n "$s/lock" true; then echo "the store lock is not held while the job runs"; exit 1; fi
  ranks_on n2 || { echo "no rank runs on n2"; node_processes n2; exit 1; }
  t0=$EPOCHREALTIME
  "$cluster" kill-node n1 "$state"
  # The lock went with rank 0's process: free at once, not after a timeout; the record still
  # names the dead holder.
  flock -n "$s/lock" true || { echo "store lock still held after n1 died"; exit 1; }
  [ "$(cat "$s/lock")" = "$lock" ]
  say "store lock free $(since "$t0") s after the kill began"
  # n2's ranks lose mpirun (their orted's parent) and end; Slurm has not noticed anything yet.
  for _ in $(seq 1 30); do ranks_on n2 || break; sleep 0.5; done
  if ranks_on n2; then echo "ranks still running on n2:"; node_processes n2; exit 1; fi
  say "ranks on n2 gone $(since "$t0") s after the kill began"
  id=$(job_field "$s" 0 job_id)
  before=$(committed "$s")
  # A writer takes the store at once, and every committed unit reads whole (rebuild reads each
  # file after checking its seal): nothing was lost or half-written.
  "$bin" rebuild "$s" | tee "$work/rebuild.txt"
  grep -q "from $before committed units" "$work/rebuild.txt"
  # Slurm sets n1 DOWN once it stops answering, and requeues the job (--requeue).
  wait_state "$s" 0 "REQUEUED|NODE_FAIL|FAILED" 120
  "$bin" status "$s" | tee "$work/status-death.txt"
  grep -qE "REQUEUED|NODE_FAIL|FAILED" "$work/status-death.txt"
  say "job $id ended by the node's death: $(job_field "$s" 0 state) $(since "$t0") s after the kill began"
  "$cluster" start-node n1 "$state"
  "$testbin" resume "$s" --submit 2>&1 | tee "$work/resume-death.txt"
  if [ "$(job_field "$s" 0 state)" = FAILED ]; then
    grep -q "submit: job " "$work/resume-death.txt"
    wait_state "$s" 1 "COMPLETED" 300
  else
    grep -q "held by live job" "$work/resume-death.txt"   # the requeued job resumes by itself
    wait_state "$s" 0 "COMPLETED" 300
  fi
  [ "$(committed "$s")" -ge "$before" ]
  compare "$s"
  say "node death and resume: passed"
}

do_arrays() {
  load_env
  local s="$work/arrays" n a0 a1 a2 blocker
  rm -rf "$s"
  # One rank per node (the coordinator on n1, a worker on n2), so that two tasks fit at once;
  # one thread per rank as in the reference.
  write_spec "$work/spec-arrays.yaml" 1 ", threads: 1"
  # A job holding both nodes keeps every task pending while the submission is inspected.
  blocker=$(sbatch --parsable --exclusive -N2 --output=/dev/null --wrap "sleep 300")
  "$bin" submit "$work/spec-arrays.yaml" --store "$s" --split units:2 --max-concurrent 2 --json > "$work/arrays.json"
  cat "$work/arrays.json"; echo
  # stats, fit and all_linear: 4 units each, 2 per task: three arrays of 2 tasks, each after the
  # one before.
  n=$(/usr/bin/python3 -c "import json; print(len(json.load(open('$work/arrays.json'))['jobs']))")
  [ "$n" -eq 3 ]
  read -r a0 a1 a2 < <(/usr/bin/python3 -c "import json; print(*(j['job_id'] for j in json.load(open('$work/arrays.json'))['jobs']))")
  [ "$(grep -c "^#SBATCH --array=0-1%2$" "$s"/slurm/*.sh | awk -F: '{n += $2} END {print n}')" -eq 3 ]
  scontrol show job "${a1}_0" | grep -o "Dependency=[^ ]*" | tee "$work/dep.txt"
  grep -q "Dependency=afterok:${a0}_\*" "$work/dep.txt"
  # status lists every task with its units; resume --submit leaves the live ones alone.
  "$bin" status "$s"
  [ "$(job_field "$s" 0 job_id)" = "${a0}_0" ]
  [ "$(job_field "$s" 5 job_id)" = "${a2}_1" ]
  [ "$(job_field "$s" 5 units)" -eq 2 ]
  "$bin" resume "$s" --submit 2>&1 | tee "$work/resume-arrays.txt"
  grep -q "nothing to submit" "$work/resume-arrays.txt"
  grep -q "held by live job(s) \[\"${a0}_0\",\"${a0}_1\",\"${a1}_0\",\"${a1}_1\",\"${a2}_0\",\"${a2}_1\"\]" "$work/resume-arrays.txt"
  # A cancelled task's units, and only those, are submitted again, after the live tasks that
  # hold their dependencies.
  scancel "${a2}_1"
  wait_state "$s" 5 "CANCELLED" 30
  "$bin" resume "$s" --submit 2>&1 | tee "$work/resume-cancelled.txt"
  [ "$(grep -c "submit: job " "$work/resume-cancelled.txt")" -eq 1 ]
  grep -qE "submit: job [0-9]+ .*: 2 units, after \[(\"afterok:${a1}_[01]\",?)+\]" "$work/resume-cancelled.txt"
  scancel "$blocker"
  wait_state "$s" 6 "COMPLETED" 300
  wait_state "$s" 4 "COMPLETED" 60
  for i in 0 1 2 3; do [ "$(job_field "$s" $i state)" = COMPLETED ]; done
  "$bin" status "$s"
  compare "$s"
  say "arrays: passed"
}

# Long: the node without rank 0 dies. mpirun loses that node's orted and ends the job at once
# (FAILED); the sweep is then finished on the remaining node alone: resources are no part of a
# unit's id, so changing the spec's nodes reruns nothing.
do_node_loss() {
  [ "${LINSWEEP_LONG_TESTS:-0}" = 1 ] || { echo "skipped: set LINSWEEP_LONG_TESTS=1"; exit 77; }
  load_env
  local s="$work/loss" spec="$work/spec-loss.yaml" t0 before
  rm -rf "$s"
  sed 's|^experiments:|experiments:\n  toy: {units: 4, sleep: 3}|' "$work/spec.yaml" > "$spec"
  "$testbin" submit "$spec" --store "$s"
  wait_committed "$s" 2
  ranks_on n2 || { echo "no rank runs on n2"; node_processes n2; exit 1; }
  t0=$EPOCHREALTIME
  "$cluster" kill-node n2 "$state"
  for _ in $(seq 1 30); do ranks_on n1 || break; sleep 0.5; done
  if ranks_on n1; then echo "ranks still running on n1:"; node_processes n1; exit 1; fi
  say "ranks on n1 gone $(since "$t0") s after n2 was killed"
  flock -n "$s/lock" true
  before=$(committed "$s")
  wait_state "$s" 0 "FAILED" 120
  grep -q "ORTE has lost communication with a remote daemon" "$s"/slurm/logs/*.out
  "$bin" status "$s" | grep -E "FAILED"
  say "job failed $(since "$t0") s after the kill; n2: $(sinfo -h -n n2 -o %T)"
  sed -i 's/nodes: 2, tasks_per_node: 2/nodes: 1, tasks_per_node: 2/' "$spec"
  "$testbin" resume "$s" --submit 2>&1 | tee "$work/resume-loss.txt"
  grep -q "submit: job " "$work/resume-loss.txt"
  wait_state "$s" 1 "COMPLETED" 300
  grep -q "on n1 (nodes n1)" "$s"/slurm/logs/*.out
  [ "$(committed "$s")" -ge "$before" ]
  compare "$s"
  "$cluster" start-node n2 "$state"
  say "node loss, finished on the remaining node: passed"
}

do_cleanup() {
  local left=0 pin namespaces="" ctld="" net_if="" p
  [ -d "$state" ] || { echo "no cluster at $state"; return 0; }
  for pin in "$state"/nodes/*/uts; do
    [ -e "$pin" ] && namespaces+="uts:[$(stat -L -c %i "$pin")] "
  done
  [ -s "$state/slurmctld.pid" ] && ctld=$(cat "$state/slurmctld.pid")
  [ -s "$state/network" ] && net_if=$(cut -d' ' -f1 "$state/network")
  "$cluster" stop "$state" || left=1
  # A namespace is gone once no process is in it and nothing keeps it mounted.
  for p in $(find /proc/[0-9]*/ns/uts -maxdepth 0 -printf '%p %l\n' 2>/dev/null |
             awk -v ns="$namespaces" '$2 != "" && index(ns, $2 " ") { split($1, part, "/"); print part[3] }'); do
    echo "process $p ($(cat "/proc/$p/comm" 2>/dev/null)) is still in a node's namespace"; left=1
  done
  if [ -n "$(findmnt -rn -o TARGET | grep -F "$state/" || true)" ]; then echo "still mounted under $state"; left=1; fi
  if [ -e "$state" ]; then echo "$state left behind"; left=1; fi
  if pgrep -f -- "-f $state/slurm.conf" >/dev/null; then echo "daemons left:"; pgrep -af -- "$state/slurm.conf"; left=1; fi
  if [ -n "$ctld" ] && pgrep -P "$ctld" >/dev/null; then echo "children of slurmctld left:"; pgrep -aP "$ctld"; left=1; fi
  if pgrep -f -- "--socket=$state/munge" >/dev/null; then echo "munged left"; left=1; fi
  if [ -n "$net_if" ] && ip link show "$net_if" >/dev/null 2>&1; then echo "interface $net_if left"; left=1; fi
  [ "$left" -eq 0 ] && echo "cluster stopped; no daemon, node process or namespace left"
  return "$left"
}

case "$mode" in
  setup) do_setup ;;
  submit) do_submit ;;
  node_death) do_node_death ;;
  arrays) do_arrays ;;
  node_loss) do_node_loss ;;
  cleanup) do_cleanup ;;
  *) echo "usage: $0 BIN SRC WORK setup|submit|node_death|arrays|node_loss|cleanup" >&2; exit 2 ;;
esac
