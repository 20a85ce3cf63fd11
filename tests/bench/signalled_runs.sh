#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Why stopped runs once aborted (docs/benchmarks.md), shown on the engine: smoke runs whose every
# thread, from the second step on, gets SIGUSR2 every 200 µs, with a handler (preloaded) that only
# counts, as the first stop handler did. optlog's stop signals no longer run a handler on its
# threads; this puts one back. Alternates runtime.gemm "aten" and "onednn" (A B B A), N pairs.
#   tests/bench/signalled_runs.sh [N] [OPTLOG]   (default: 2 build/app/optlog)
set -uo pipefail
pairs=${1:-2}
optlog=${2:-$(dirname "$0")/../../build/app/optlog}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/handler.c" <<'C'
#include <signal.h>
static void count(int s) { (void) s; }
__attribute__((constructor)) static void install(void)
{
    struct sigaction a = {0};
    a.sa_handler = count;
    a.sa_flags = SA_RESTART;
    sigaction(SIGUSR2, &a, 0);
}
C
cat >"$work/sender.c" <<'C'
#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char **argv) /* sender PID: SIGUSR2 to each of its threads every 200 us */
{
    const int pid = atoi(argv[1]);
    long sent = 0;
    char tasks[64];
    snprintf(tasks, sizeof tasks, "/proc/%d/task", pid);
    for (DIR *d; (d = opendir(tasks)); closedir(d), usleep(200))
        for (struct dirent *e; (e = readdir(d));)
            if (atoi(e->d_name) > 0 && syscall(SYS_tgkill, pid, atoi(e->d_name), SIGUSR2) == 0)
                ++sent;
    printf("%ld", sent);
    return 0;
}
C
cc -O2 -shared -fPIC -o "$work/handler.so" "$work/handler.c" && cc -O2 -o "$work/sender" "$work/sender.c" || exit 1
run() { # run GEMM: one signalled run; prints how it ended
  local study=$work/run.sqlite
  rm -f "$study" "$work/out" "$work/sent"
  XDG_CACHE_HOME=$work/cache OPTLOG_PROBE_UNTUNED=0 LD_PRELOAD=$work/handler.so "$optlog" run --db "$study" --jsonl \
    --preset smoke --set data.corpus='"generated"' --set train.steps=1500 --set train.eval_interval=1000 \
    --set runtime.gemm="\"$1\"" >"$work/out" 2>"$work/err" &
  local pid=$!
  while kill -0 $pid 2>/dev/null && ! grep -q '"step":2,' "$work/out"; do sleep 0.05; done
  "$work/sender" $pid >"$work/sent" &
  # A run that stops moving for 60 s hangs (a corrupted lock): it is killed and counted so.
  local steps=0 still=0
  while kill -0 $pid 2>/dev/null && [ $still -lt 600 ]; do
    sleep 0.1
    now=$(grep -c '"step"' "$work/out")
    if [ "$now" -eq "$steps" ]; then still=$((still + 1)); else steps=$now still=0; fi
  done
  kill -KILL $pid 2>/dev/null
  wait $pid 2>/dev/null
  local code=$?
  wait 2>/dev/null
  echo "gemm=$1: exit $code after $(grep -c '"step"' "$work/out") steps and $(cat "$work/sent") signals;" \
    "$([ $code -ne 0 ] && tail -1 "$work/err")"
}
for _ in $(seq 1 "$pairs"); do
  for gemm in aten onednn onednn aten; do
    run $gemm 2>/dev/null # not bash's own line for a job a signal ended
  done
done
