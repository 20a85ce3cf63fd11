#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# optlog under Valgrind's memcheck, for tests/bench/stopped_runs.sh: it sees the writes of every
# library too (oneDNN's, OpenBLAS's), not only optlog's own, at about 50 times the time.
#   STOPPED_RUNS_WAIT=600 tests/bench/stopped_runs.sh 24 tools/valgrind-optlog.sh
# Any invalid read or write, or a use of uninitialised memory that decides a branch, exits 99 and
# writes the report into ${VALGRIND_LOG_DIR:-/tmp}/valgrind-optlog.<pid>.log. Leaks are not
# checked here (LibTorch's registries live as long as the process); valgrind-optlog.supp names the
# libraries' reports that are not faults, each with its reason. optlog re-executes itself
# (/proc/self/exe) to set its tuned OpenMP variables, which under Valgrind would name Valgrind's own
# tool: the marker below says they are set, and OMP_WAIT_POLICY takes the untuned default's value.
export OPTLOG_SET_VARIABLES=${OPTLOG_SET_VARIABLES-OMP_WAIT_POLICY} OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
# The matmul peak (calibration.h) would time 2048-square products at Valgrind's speed: skipped.
export OPTLOG_MATMUL_PEAK=0
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
exec valgrind --tool=memcheck --error-exitcode=99 --leak-check=no --trace-children=yes \
  --suppressions="$here/tools/valgrind-optlog.supp" \
  --log-file="${VALGRIND_LOG_DIR:-/tmp}/valgrind-optlog.%p.log" "${OPTLOG:-$here/build/app/optlog}" "$@"
