#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The sdist as a GPU server without a matching wheel meets it: installed with
# `pip install --no-build-isolation` into a fresh environment holding torch (a hard-linked copy of
# the wheel test's torch-only one), its engine compiled there against that torch, then a smoke run
# from a folder outside the clone. Not in the test command: it compiles the engine once more (29 min
# on the 2-core VM beside other work, with no ccache to share: pip builds in a folder of its own).
# Run by hand:
#   tests/package/sdist_install.sh dist/optlog-0.1.0.tar.gz
set -euo pipefail
[ $# -eq 1 ] || {
  echo "usage: tests/package/sdist_install.sh SDIST" >&2
  exit 2
}
sdist=$(realpath "$1")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The wheel test's environment for the torch packaging/pytorch.sh tests (its OPTLOG_PYTORCH_VERSION).
template=$HOME/.cache/optlog/torch-${OPTLOG_PYTORCH_VERSION:-2.11.0}-only
[ -f "$template/ready" ] || {
  echo "sdist_install.sh: no $template: run the wheel test first (ctest -R wheel in build-pytorch)" >&2
  exit 1
}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp -al "$template" "$scratch/venv"
rm "$scratch/venv/ready"
mkdir "$scratch/work"
cd "$scratch/work"
"$scratch/venv/bin/python" -m pip install -q --disable-pip-version-check -r "$here/packaging/wheel/requirements.txt"
start=$SECONDS
"$scratch/venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation --no-index "$sdist"
echo "sdist_install.sh: built and installed in $((SECONDS - start)) s"
env -u PYTHONPATH -u OPTLOG PATH="$scratch/venv/bin:$PATH" OPTLOG_PROBE_UNTUNED=0 OPTLOG_MATMUL_PEAK=0 \
  XDG_CACHE_HOME="$scratch/cache" XDG_DATA_HOME="$scratch/data" sh -c '
  optlog --version &&
  optlog run --db s.sqlite --preset smoke --set data.corpus=\"generated\" --set train.steps=8 >/dev/null &&
  optlog runs s.sqlite'
