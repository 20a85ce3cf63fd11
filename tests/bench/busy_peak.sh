#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The matmul peak measured quiet and beside busy loops (one per CPU), alternated quiet, busy, busy,
# quiet, each in a cache of its own; and what optlog's busy check said of each (docs/measurement.md).
#   tests/bench/busy_peak.sh [OPTLOG] [THREADS]     (default build/app/optlog, every CPU)
set -euo pipefail
optlog=${1:-build/app/optlog}
threads=${2:-$(nproc)}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) logical CPUs; $threads threads"
measure() { # $1: quiet | busy
    local loops=()
    if [[ $1 == busy ]]; then
        for _ in $(seq "$(nproc)"); do
            bash -c 'end=$((SECONDS + 300)); while ((SECONDS < end)); do :; done' &
            loops+=($!)
        done
    fi
    local cache="$work/$RANDOM"
    local out
    out=$(env -u OPTLOG_BUSY_SHARE XDG_CACHE_HOME="$cache" OMP_WAIT_POLICY=PASSIVE \
        "$optlog" tune --peak-only --threads "$threads")
    ((${#loops[@]} == 0)) || kill "${loops[@]}"
    wait 2>/dev/null || true
    local f32 bf16 said
    f32=$(awk '$1 == "float32" {print $2}' <<<"$out")
    bf16=$(awk '$1 == "bfloat16" {print $2}' <<<"$out")
    said=$(grep -o 'The machine was busy ([^)]*)' <<<"$out" || echo "quiet: kept")
    echo "$1: float32 $f32 GFLOP/s, bfloat16 $bf16 GFLOP/s; $said"
}
for state in quiet busy busy quiet; do measure "$state"; done
