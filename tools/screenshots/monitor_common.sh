# SPDX-License-Identifier: MIT
# What the Monitor's screenshot scripts share, sourced by them (sh): the tree and its build, the
# programs they need, a scratch folder ($scratch, theirs to remove), and the shot under Xvfb:
#   monitor_shot STUDY OUTPUT.png [EXPECTED_TEXT [WIDTHxHEIGHT]]
here=$(cd "$(dirname "$0")/../.." && pwd)
build="$here/build"
command -v xvfb-run >/dev/null || { echo "$(basename "$0"): needs xvfb-run (apt-get install xvfb xauth)" >&2; exit 2; }
cmake --build "$build" --target optlog recorded_monitor_screenshot
scratch=$(mktemp -d)

monitor_shot() {
  study=$1 output=$2
  shift 2
  QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1920x1080x24" \
    "$build/tools/screenshots/recorded_monitor_screenshot" "$study" "$output" "$build/app/optlog" "$@"
}
