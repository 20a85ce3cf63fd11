#!/bin/sh
# SPDX-License-Identifier: MIT
# Screenshots of the workbench under Xvfb at 1280x800 and 1920x1080, from a real study.
#   tools/screenshots/take.sh [STUDY] [OUTPUT_FOLDER]
# Without STUDY it runs the optimization-log study (150 steps per run) first: about 10 minutes.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
build="$here/build"
study=${1:-}
out=${2:-"$here/docs/screenshots"}
command -v xvfb-run >/dev/null || { echo "take.sh: needs xvfb-run (apt-get install xvfb xauth)" >&2; exit 2; }
cmake --build "$build" --target optlog optlog-workbench workbench_screenshots
if [ -z "$study" ]; then
  study="$build/screenshots-optimization-log.sqlite"
  "$build/app/optlog" study optimization-log --db "$study" --set train.steps=150 --set train.eval_interval=25
fi
# The live run's 25 seconds are for its curves: an untuned machine's first-run probe (under a
# minute, docs/tuning.md) would fill them.
OPTLOG_PROBE_UNTUNED=0 QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1920x1080x24" \
  "$build/tools/screenshots/workbench_screenshots" "$study" "$out" "$build/app/optlog"
rm -f "$out/screenshot-study.sqlite" "$out/screenshot-study.sqlite-wal" "$out/screenshot-study.sqlite-shm"
