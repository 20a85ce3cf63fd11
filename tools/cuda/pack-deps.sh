#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run here, on the Debian development machine: copies the files of the Debian packages that the
# engine's build needs besides LibTorch (SQLiteCpp, SQLite, toml++, nlohmann-json, CLI11, OpenSSL, and
# Gloo's headers, which c10d's ProcessGroupGloo.hpp includes and PyTorch's wheels do not ship) into
# .devdeps/, for a GPU server that has LibTorch (in PyTorch's Python package) but cannot install
# packages. Their CMake files are relocatable, so check.sh points CMAKE_PREFIX_PATH at the copy.
set -euo pipefail
cd "$(dirname "$0")/../.."
packages=(libsqlitecpp-dev libsqlite3-dev libsqlite3-0 libtomlplusplus-dev libtomlplusplus3
          nlohmann-json3-dev libcli11-dev libssl-dev libssl3 libgloo-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "pack-deps: not installed here: ${missing[*]} (packaging/setup.sh installs them)" >&2
  exit 1
fi
rm -rf .devdeps
mkdir -p .devdeps
for p in "${packages[@]}"; do
  # Files and symbolic links, not folders and not documentation.
  dpkg -L "$p" | grep -v -e '^/usr/share/doc' -e '^/usr/share/man' | while read -r f; do
    if [[ -f "$f" || -L "$f" ]]; then
      mkdir -p ".devdeps$(dirname "$f")"
      cp -P "$f" ".devdeps$f"
    fi
  done
done
echo "pack-deps: $(du -sh .devdeps | cut -f1) in .devdeps/ (carry it: tools/cuda/README.md)"
