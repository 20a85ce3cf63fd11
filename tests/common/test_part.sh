#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One part of a Qt Test executable, so that CTest runs a long one's parts side by side:
#   tests/common/test_part.sh BINARY K N [QTEST OPTIONS...]
# runs the test functions whose place in `BINARY -functions` (declaration order), counted from 0,
# leaves K when divided by N. Every function falls in exactly one part, a new one too.
set -euo pipefail

[ $# -ge 3 ] || {
  echo "usage: test_part.sh BINARY K N [QTEST OPTIONS...]" >&2
  exit 2
}
binary=$1 part=$2 parts=$3
shift 3
mapfile -t functions < <("$binary" -functions | sed -n 's/()$//p')
[ ${#functions[@]} -gt 0 ] || {
  echo "test_part.sh: $binary -functions listed no test function" >&2
  exit 1
}
chosen=()
for i in "${!functions[@]}"; do
  [ $((i % parts)) -eq "$part" ] && chosen+=("${functions[$i]}")
done
[ ${#chosen[@]} -gt 0 ] || {
  echo "test_part.sh: part $part of $parts of $binary has no function: use fewer parts" >&2
  exit 1
}
exec "$binary" "$@" "${chosen[@]}"
