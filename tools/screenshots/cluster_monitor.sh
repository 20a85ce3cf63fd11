#!/bin/sh
# SPDX-License-Identifier: MIT
# The workbench on a study whose runs train on Slurm: the Runs list with each task's state and job,
# and the Monitor following the running task's shard. A one-node Slurm on the loopback
# (tests/cluster/onenode.sh, root), under Xvfb:
#   tools/screenshots/cluster_monitor.sh [OUTPUT.png]   (about a minute)
set -eu
. "$(dirname "$0")/monitor_common.sh"
out=${1:-"$here/docs/screenshots/monitor-cluster-1680x900.png"}
trap 'SLURM_CONF="$scratch/cluster/slurm.conf" scancel --name=optlog-two 2>/dev/null || true
      bash "$here/tests/cluster/onenode.sh" stop "$scratch/cluster"; rm -rf "$scratch"' EXIT
bash "$here/tests/cluster/onenode.sh" start "$scratch/cluster" >/dev/null
export SLURM_CONF="$scratch/cluster/slurm.conf" OPTLOG_PROBE_UNTUNED=0
cat > "$scratch/two.toml" <<'PLAN'
name = "two"
baseline = "fp32"
tolerance = 0.02

[[run]]
name = "fp32"
preset = "smoke"
overrides = ["data.corpus=generated", "train.steps=20000", "train.eval_interval=200"]

[[run]]
name = "bf16"
preset = "smoke"
overrides = ["data.corpus=generated", "precision.mode=\"autocast-bf16\""]
PLAN
# One task at a time: fp32 trains while bf16 waits in the queue.
"$build/app/optlog" study "$scratch/two.toml" --db "$scratch/two.sqlite" --scheduler slurm --max-parallel 1
sleep 15 # a few validations in, so that both curves show
monitor_shot "$scratch/two.sqlite" "$out" "on Slurm as job" 1680x900
