#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Formats optlog's C++ as .clang-format says (Qt Creator's style, includes regrouped).
#   tools/format.sh           rewrites the files in place
#   tools/format.sh --check   changes nothing; fails naming each file and line that differs (a test)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
formatter=${CLANG_FORMAT:-$(command -v clang-format-14 || true)}
if [ -z "$formatter" ]; then
  echo "format.sh: clang-format-14 is missing (the style is checked with version 14): apt-get install" \
       "clang-format-14, or run packaging/setup.sh" >&2
  exit 2
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.h')
else
  mapfile -t files < <(find app core ui tests tools -name '*.cpp' -o -name '*.h' | sort)
fi
if [ "${1:-}" = --check ]; then
  "$formatter" --dry-run --Werror "${files[@]}"
  echo "format: ${#files[@]} files as .clang-format says"
else
  "$formatter" -i "${files[@]}"
fi
