#!/bin/sh
# SPDX-License-Identifier: MIT
# Screenshots of the workbench under Xvfb at 1280x800 and 1920x1080, light and dark, and at a
# scale factor of 2, from a real study.
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
# Every page light at both sizes; then the pages with charts and tables dark, and at a scale
# factor of 2 (a high-density screen) light and dark.
shots() {
  scale=$1
  shift
  OPTLOG_PROBE_UNTUNED=0 QT_SCALE_FACTOR=$scale QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 3840x2400x24" \
    "$build/tools/screenshots/workbench_screenshots" "$study" "$out" "$build/app/optlog" "$@"
}
shots 1
shots 1 --dark
shots 2 1280x800
shots 2 --dark 1280x800
rm -rf "$out"/screenshot-study.sqlite*
