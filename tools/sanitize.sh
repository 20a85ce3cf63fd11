#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole test suite under the sanitizers, in a build folder of its own (cmake/Sanitizers.cmake):
# for a developer to run before a change to the engine, the store or a parser, and nightly.
#   tools/sanitize.sh                      AddressSanitizer and UndefinedBehaviorSanitizer, build-asan/
#   tools/sanitize.sh thread               ThreadSanitizer, build-tsan/
#   tools/sanitize.sh KIND -R tst_store    any further arguments go to ctest
# Every report fails the test it happens in, in the test's own process or in an engine it starts
# (the options below are inherited): ASan and UBSan stop at the first (-fno-sanitize-recover), with
# exit code 99 so that no test can take it for one of optlog's own exit codes. Leaks are reported
# too, except those the suppression files name with their reasons. docs/robustness.md says how
# long it takes and what it found.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kind=${1:-address,undefined}
[ $# -gt 0 ] && shift
case $kind in
  address,undefined) folder=build-asan ;;
  thread) folder=build-tsan ;;
  *)
    echo "usage: tools/sanitize.sh [address,undefined|thread] [ctest arguments...]; '$kind' is neither" >&2
    exit 2
    ;;
esac
build=${OPTLOG_SANITIZE_BUILD_DIR:-$here/$folder}
start=$SECONDS

export CCACHE_BASEDIR="$here" CCACHE_NOHASHDIR=true
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPTLOG_SANITIZE="$kind" >/dev/null
cmake --build "$build"
built=$SECONDS

export ASAN_OPTIONS="exitcode=99:halt_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1"
export LSAN_OPTIONS="suppressions=$here/tools/sanitize.lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=99"
# die_after_fork=0: a test process is multi-threaded when QProcess forks an engine, and TSan
# otherwise ends a child that starts a thread before its exec.
export TSAN_OPTIONS="exitcode=99:halt_on_error=1:second_deadlock_stack=1:die_after_fork=0:suppressions=$here/tools/sanitize.tsan.supp"
# Not run: the format check (no code runs) and the package check (it would package this build).
status=0
(cd "$build" && ctest --output-on-failure --timeout 3600 -j "$(nproc)" -E '^(format|package)$' "$@") || status=$?
echo "tools/sanitize.sh $kind: built in $((built - start)) s, tests took $((SECONDS - built)) s, exit $status"
exit $status
