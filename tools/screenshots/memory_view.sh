#!/bin/sh
# SPDX-License-Identifier: MIT
# The Memory page on two runs of one model, FP32 and with every block checkpointed, under Xvfb:
#   tools/screenshots/memory_view.sh [OUTPUT_FOLDER]   (about a minute)
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
build="$here/build"
out=${1:-"$here/docs/screenshots"}
command -v xvfb-run >/dev/null || { echo "memory_view.sh: needs xvfb-run (apt-get install xvfb xauth)" >&2; exit 2; }
cmake --build "$build" --target optlog optlog-workbench memory_view_screenshot
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for run in "name=fp32" "name=checkpointed memory.checkpoint_every=1"; do
  set -- --db "$scratch/memory.sqlite" --preset smoke
  for field in data.corpus=generated train.steps=4 memory.warmup_steps=2 model.layers=4 model.width=128 \
    model.heads=4 model.context_length=128 train.microbatch=8 $run; do
    set -- "$@" --set "$field"
  done
  OPTLOG_PROBE_UNTUNED=0 "$build/app/optlog" run "$@"
done
OPTLOG_PROBE_UNTUNED=0 QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1920x1080x24" \
  "$build/tools/screenshots/memory_view_screenshot" "$scratch/memory.sqlite" "$out" "$build/app/optlog"
