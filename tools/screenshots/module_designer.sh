#!/bin/sh
# SPDX-License-Identifier: MIT
# The Design page on the example GPT scripted as a TorchScript module, before and after "Probe the
# module" ran the engine's probes, under Xvfb (about a minute):
#   tools/screenshots/module_designer.sh [OUTPUT_FOLDER]
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
build="$here/build"
out=${1:-"$here/docs/screenshots"}
command -v xvfb-run >/dev/null || { echo "module_designer.sh: needs xvfb-run (apt-get install xvfb xauth)" >&2; exit 2; }
cmake --build "$build" --target optlog module_designer_screenshot
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
/usr/bin/python3 "$here/resources/examples/torchscript/script_model.py" gpt "$scratch/mine.pt" \
  --width 256 --layers 4 --heads 4 --context 128
# An empty cache, so that the module is met unprobed; and no first-run tuning in the probes' time.
XDG_CACHE_HOME="$scratch/cache" OPTLOG_PROBE_UNTUNED=0 QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1920x1080x24" \
  "$build/tools/screenshots/module_designer_screenshot" "$scratch/mine.pt" "$build/app/optlog" \
  "$out/design-module-unprobed-1280x800.png" "$out/design-module-1280x800.png"
