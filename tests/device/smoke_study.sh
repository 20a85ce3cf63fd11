#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The smoke study through the real CLI: every run completes and the comparison prints.
#   smoke_study.sh OPTLOG PLAN STUDY
set -euo pipefail
optlog=$1 plan=$2 study=$3
rm -rf "$study" "$study"-wal "$study"-shm "$study".weights
"$optlog" study "$plan" --db "$study" >"$study.txt"
grep -q "^Study .*, baseline fp32" "$study.txt" || { cat "$study.txt"; echo "smoke study: no comparison printed" >&2; exit 1; }
runs=$(grep -c '^\[\[run\]\]' "$plan")
completed=$("$optlog" runs "$study" | grep -c ' completed ' || true)
"$optlog" runs "$study"
if [ "$completed" -ne "$runs" ]; then
  echo "smoke study: $completed of $runs runs completed" >&2
  exit 1
fi
echo "smoke study: $runs of $runs runs completed, compared against fp32"
