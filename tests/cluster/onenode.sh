#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A one-node Slurm cluster on the loopback, in a scratch folder, for the cluster tests and for
# trying `optlog study --scheduler slurm` on one machine (docs/cluster.md):
#
#   tests/cluster/onenode.sh start DIR   writes DIR/slurm.conf and a munge key, starts munged,
#                                        slurmctld and slurmd, waits for the node to be idle and
#                                        prints the line to source (export SLURM_CONF=...)
#   tests/cluster/onenode.sh stop DIR    stops the daemons it started
#   tests/cluster/onenode.sh kill-node DIR
#                                        the node dies: slurmd, its job steps and their tasks are
#                                        killed with SIGKILL; slurmctld notices after SlurmdTimeout
#   tests/cluster/onenode.sh revive-node DIR
#                                        starts slurmd again and waits for the node to be idle
#
# It needs root (slurmd starts jobs as their user) and Debian's slurm-wlm and munge. Exit 77 says
# why it cannot start here; the tests skip on 77 and fail on anything else.
set -euo pipefail

action=${1:-}
dir=${2:-}
[[ ( $action == start || $action == stop || $action == kill-node || $action == revive-node ) && -n $dir ]] || {
  echo "usage: $0 start|stop|kill-node|revive-node DIR" >&2
  exit 2
}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

stop() {
  for daemon in slurmd slurmctld munged; do
    [[ -f $dir/$daemon.pid ]] || continue
    pid=$(cat "$dir/$daemon.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$dir/$daemon.pid"
  done
}

if [[ $action == stop ]]; then
  stop
  exit 0
fi

# Every process below PID, children before their parents are looked up.
descendants() {
  local child
  for child in $(ps -o pid= --ppid "$1"); do
    echo "$child"
    descendants "$child"
  done
}

export PATH=$PATH:/usr/sbin
export SLURM_CONF=$dir/slurm.conf

wait_idle() {
  for _ in $(seq 150); do
    state=$(sinfo -h -N -o %T 2>/dev/null || true)
    [[ $state == idle ]] && return 0
    sleep 0.2
  done
  echo "onenode.sh: the node did not become idle within 30 s (sinfo: ${state:-no answer})" >&2
  return 1
}

if [[ $action == kill-node ]]; then
  [[ -f $dir/slurmd.pid ]] || { echo "onenode.sh: no slurmd of $dir is running" >&2; exit 1; }
  victims=$(cat "$dir/slurmd.pid")
  # This cluster's job steps only: they carry its SLURM_CONF.
  for stepd in $(pgrep -x slurmstepd || true); do
    tr '\0' '\n' < "/proc/$stepd/environ" 2>/dev/null | grep -qx "SLURM_CONF=$SLURM_CONF" || continue
    victims="$victims $stepd $(descendants "$stepd")"
  done
  # shellcheck disable=SC2086 # one pid per word
  kill -9 $victims 2>/dev/null || true
  rm -f "$dir/slurmd.pid"
  exit 0
fi

if [[ $action == revive-node ]]; then
  slurmd -f "$SLURM_CONF" 2>>"$dir/start.log" || { echo "onenode.sh: slurmd did not start again" >&2; exit 1; }
  # A node that failed stays down until slurmctld hears from it; ReturnToService=2 then takes it back.
  wait_idle
  exit 0
fi

cannot() {
  echo "onenode.sh: cannot start a one-node Slurm here: $*" >&2
  stop
  exit 77
}
for program in munged slurmctld slurmd sbatch; do
  command -v "$program" >/dev/null || [[ -x /usr/sbin/$program ]] || cannot "$program is not installed (apt-get install slurm-wlm munge)"
done
[[ $(id -u) == 0 ]] || cannot "slurmd must run as root"

# Two free ports on the loopback for slurmctld and slurmd.
read -r ctld_port slurmd_port < <(python3 - <<'PY'
import socket
sockets = [socket.socket() for _ in range(2)]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in sockets])
PY
)

mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"
[[ -f $dir/munge/munge.key ]] || { head -c 1024 /dev/urandom > "$dir/munge/munge.key"; chmod 400 "$dir/munge/munge.key"; }
cpus=$(nproc)
memory=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
cat > "$dir/slurm.conf" <<CONF
# Written by tests/cluster/onenode.sh: one node, this machine, on the loopback.
ClusterName=optlog-onenode
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.txt
MpiDefault=none
ReturnToService=2
MinJobAge=3600
KillWait=5
SlurmdTimeout=15
InactiveLimit=0
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=onenode Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF

munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" --pid-file="$dir/munged.pid" \
  --log-file="$dir/munged.log" --seed-file="$dir/munge/munge.seed" --force 2>>"$dir/start.log" \
  || cannot "munged did not start: $(tail -n 3 "$dir/munged.log" "$dir/start.log" 2>/dev/null | tr '\n' ' ')"
slurmctld -f "$SLURM_CONF" 2>>"$dir/start.log" || cannot "slurmctld did not start: $(tail -n 3 "$dir/slurmctld.log" 2>/dev/null | tr '\n' ' ')"
slurmd -f "$SLURM_CONF" 2>>"$dir/start.log" || cannot "slurmd did not start: $(tail -n 3 "$dir/slurmd.log" 2>/dev/null | tr '\n' ' ')"
wait_idle 2>>"$dir/start.log" || cannot "$(tail -n 1 "$dir/start.log"); see $dir/slurmctld.log and $dir/slurmd.log"
echo "export SLURM_CONF=$SLURM_CONF"
