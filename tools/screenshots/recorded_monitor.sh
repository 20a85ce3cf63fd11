#!/bin/sh
# SPDX-License-Identifier: MIT
# The Monitor following a run the example PyTorch trainer records while it trains, under Xvfb:
#   tools/screenshots/recorded_monitor.sh [OUTPUT.png]   (about a minute)
set -eu
. "$(dirname "$0")/monitor_common.sh"
out=${1:-"$here/docs/screenshots/monitor-recorded-1280x800.png"}
trap 'kill -INT "$trainer" 2>/dev/null || true; wait "$trainer" 2>/dev/null || true; rm -rf "$scratch"' EXIT
OPTLOG="$build/app/optlog" /usr/bin/python3 "$here/resources/examples/pytorch/train.py" --study "$scratch/mine.sqlite" \
  --name "bf16 s1 (PyTorch)" --group bf16 --precision autocast-bf16 --steps 3000 --eval-interval 25 >/dev/null 2>&1 &
trainer=$!
sleep 25 # a few validations in, so that both curves show
monitor_shot "$scratch/mine.sqlite" "$out"
