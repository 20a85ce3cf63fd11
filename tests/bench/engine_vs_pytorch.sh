#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# optlog's engine against the same model in PyTorch from Python (Debian's python3-torch, which this
# script installs when missing), same shape and hyperparameters, in two columns:
#   like for like: PyTorch with every setting optlog's run used, read back from that run's
#     environment in the study: intra-op threads, OMP_WAIT_POLICY (optlog's launcher sets it from
#     `optlog tune`, or PASSIVE untuned), and the heap thresholds optlog sets with mallopt, given
#     to Python as GLIBC_TUNABLES;
#   as users run it: `python3 reference_gpt.py` with nothing set (PyTorch's own thread count).
# Each round runs optlog (A), PyTorch like for like (B) and as users run it (C) as A B C C B A, so a
# drift of the machine during the round falls on every side alike; a ratio is the sum of one side's
# two runs over the other's. Prints every run and the median ratios. A run that fails (or a
# study row that is not the run's own, completed) fails the benchmark.
# Usage: tests/bench/engine_vs_pytorch.sh [ROUNDS] [STEPS] [SHAPES] [PRECISIONS]
# OPTLOG names the engine (default: build/app/optlog), OPTLOG_REFERENCE_PYTHON the interpreter whose
# PyTorch it races (default: Debian's): the PyTorch 2.x build against its own wheel's, for one.
# (SHAPES: "default small" or one of them; PRECISIONS: "fp32 autocast-bf16" or one of them: on a
# CPU without AVX-512 PyTorch's BF16 steps take seconds each.)
set -euo pipefail
rounds=${1:-5}
steps=${2:-30}
shapes=${3:-default small}
precisions=${4:-fp32 autocast-bf16}
for word in $shapes; do
  case $word in default | small) ;; *) echo "engine_vs_pytorch.sh: shape '$word': expected default or small" >&2; exit 2 ;; esac
done
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# check_precisions, optlog_rate, optlog_settings, median, ratio: with $optlog, $study, $steps, $work
# and $python set before the last four are called.
source "$here/tests/bench/rates.sh"
check_precisions "$precisions"
optlog=${OPTLOG:-$here/build/app/optlog}
python=${OPTLOG_REFERENCE_PYTHON:-/usr/bin/python3} # Debian's, which python3-torch belongs to
reference=$here/tests/bench/reference_gpt.py
if [ "$python" = /usr/bin/python3 ] && ! "$python" -c "import torch" 2>/dev/null; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get install -y -q python3-torch >/dev/null
fi
command -v sqlite3 >/dev/null || { echo "engine_vs_pytorch.sh: needs sqlite3 (apt-get install sqlite3)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
study=$work/bench.sqlite

printf "%-8s %-14s %5s %9s %9s %9s %9s %9s %9s %7s %7s  %s\n" shape precision round \
  optlog pt-like pt-user pt-user pt-like optlog like user "like-for-like settings"
for shape in $shapes; do
  if [ $shape = default ]; then dims=(128 256 4 4 8); else dims=(32 64 2 2 4); fi
  sets=(--set model.context_length=${dims[0]} --set model.width=${dims[1]} --set model.layers=${dims[2]}
        --set model.heads=${dims[3]} --set train.microbatch=${dims[4]})
  shape_args=(--context ${dims[0]} --width ${dims[1]} --layers ${dims[2]} --heads ${dims[3]} --microbatch ${dims[4]}
              --steps "$steps")
  for precision in $precisions; do
    like=(); user=()
    for round in $(seq 1 "$rounds"); do
      a1=$(optlog_rate "$shape-$precision-$round-a" "${sets[@]}" --set precision.mode=$precision)
      eval "$(optlog_settings "$shape-$precision-$round-a")"
      pt_like() {
        env ${wait_policy:+OMP_WAIT_POLICY=$wait_policy} ${tunables:+GLIBC_TUNABLES=$tunables} \
          "$python" "$reference" "${shape_args[@]}" --threads "$threads" --precision $precision
      }
      pt_user() { env -u OMP_WAIT_POLICY -u GLIBC_TUNABLES "$python" "$reference" "${shape_args[@]}" --precision $precision; }
      b1=$(pt_like); c1=$(pt_user); c2=$(pt_user); b2=$(pt_like)
      a2=$(optlog_rate "$shape-$precision-$round-b" "${sets[@]}" --set precision.mode=$precision)
      like+=("$(ratio "$a1" "$a2" "$b1" "$b2")")
      user+=("$(ratio "$a1" "$a2" "$c1" "$c2")")
      printf "%-8s %-14s %5s %9s %9s %9s %9s %9s %9s %7s %7s  %s\n" $shape $precision "$round" \
        "$a1" "$b1" "$c1" "$c2" "$b2" "$a2" "${like[-1]}" "${user[-1]}" \
        "threads $threads, OMP_WAIT_POLICY=${wait_policy:-unset}, GLIBC_TUNABLES=${tunables:-unset}"
    done
    printf "%-8s %-14s median ratio optlog / PyTorch: like for like %s (%s), as users run it %s (%s)\n" \
      $shape $precision "$(printf '%s\n' "${like[@]}" | median)" "${like[*]}" \
      "$(printf '%s\n' "${user[@]}" | median)" "${user[*]}"
    # What optlog's products ran on (the path its tuning chose, and the kernels or ISA reached).
    sqlite3 "$study" "SELECT printf('%-8s %-14s optlog products: %s on %s (%s); %s', '$shape', '$precision',
        json_extract(environment, '\$.product_path.dtype'), json_extract(environment, '\$.product_path.path'),
        json_extract(environment, '\$.product_path.reached'), json_extract(environment, '\$.onednn'))
      FROM runs WHERE name = '$shape-$precision-1-a';"
  done
done
