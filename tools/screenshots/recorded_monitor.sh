#!/bin/sh
# SPDX-License-Identifier: MIT
# The Monitor following a run the example PyTorch trainer records while it trains, under Xvfb:
#   tools/screenshots/recorded_monitor.sh [OUTPUT.png]   (about a minute)
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
build="$here/build"
out=${1:-"$here/docs/screenshots/monitor-recorded-1280x800.png"}
command -v xvfb-run >/dev/null || { echo "recorded_monitor.sh: needs xvfb-run (apt-get install xvfb xauth)" >&2; exit 2; }
cmake --build "$build" --target optlog recorded_monitor_screenshot
scratch=$(mktemp -d)
trap 'kill -INT "$trainer" 2>/dev/null || true; wait "$trainer" 2>/dev/null || true; rm -rf "$scratch"' EXIT
OPTLOG="$build/app/optlog" /usr/bin/python3 "$here/resources/examples/pytorch/train.py" --study "$scratch/mine.sqlite" \
  --name "bf16 s1 (PyTorch)" --group bf16 --precision autocast-bf16 --steps 3000 --eval-interval 25 >/dev/null 2>&1 &
trainer=$!
sleep 25 # a few validations in, so that both curves show
QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1920x1080x24" \
  "$build/tools/screenshots/recorded_monitor_screenshot" "$scratch/mine.sqlite" "$out" "$build/app/optlog"
