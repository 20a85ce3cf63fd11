#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How stopped runs end: starts a smoke run N times, sends it SIGTERM once its first metric row is
# stored (plus up to 0.9 s), and counts the exit codes: 4 (cancelled, as it should), 134 (aborted,
# as runs did while a stop handler could run inside oneDNN's sgemm: docs/benchmarks.md) and any
# other, whose last 40 lines of stderr it prints (a sanitizer's report under an OPTLOG_SANITIZE
# build). Runs beside other load to see it.
#   tests/bench/stopped_runs.sh [N] [OPTLOG]   (default: 48 build/app/optlog)
# OPTLOG may be a wrapper (valgrind ... optlog "$@"); STOPPED_RUNS_WAIT (seconds, default 60) is
# how long it waits for the first row before it sends the signal anyway.
set -uo pipefail
n=${1:-48}
optlog=${2:-$(dirname "$0")/../../build/app/optlog}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cancelled=0 aborted=0 other=0
for i in $(seq 1 "$n"); do
  study=$work/stopped-$i.sqlite
  "$optlog" run --db "$study" --preset smoke --set data.corpus='"generated"' --set train.steps=100000 \
    >/dev/null 2>"$work/stderr" &
  pid=$!
  for _ in $(seq 1 $((${STOPPED_RUNS_WAIT:-60} * 10))); do
    rows=$(sqlite3 "$study" "SELECT count(*) FROM metrics" 2>/dev/null || echo 0)
    [ "${rows:-0}" -ge 1 ] && break
    sleep 0.1
  done
  sleep "0.$((RANDOM % 10))"
  kill -TERM "$pid"
  wait "$pid"
  code=$?
  case $code in
    4) cancelled=$((cancelled + 1)) ;;
    134) aborted=$((aborted + 1)); echo "run $i aborted:"; tail -40 "$work/stderr" ;;
    *) other=$((other + 1)); echo "run $i exited $code:"; tail -40 "$work/stderr" ;;
  esac
  rm -rf "$study" "$study".*
done
echo "$n stopped runs of $optlog: $cancelled cancelled (exit 4), $aborted aborted (exit 134), $other other"
[ "$aborted" -eq 0 ] && [ "$other" -eq 0 ] # any run that did not end cancelled fails it
