#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The engine training a TorchScript model against PyTorch's eager speed on the same model, and
# against the engine's own GPT of the same shape, at the default preset's shape (256 wide, 4 layers,
# context 128, microbatch 8):
#   A: optlog on the example trainer's GPT scripted (resources/examples/torchscript/script_model.py gpt);
#   B: PyTorch eager on that same GPT (reference_gpt.py --example), with every setting A ran with,
#      read back from its environment: intra-op threads, OMP_WAIT_POLICY, the heap thresholds;
#   C: optlog's built-in GPT of the shape, its products by ATen as the module's are (runtime.gemm = aten).
# A/B is the engine against eager PyTorch; A/C is what the TorchScript interpreter costs beside
# the engine's compiled C++ model. Each round runs A B C C B A; a ratio is one side's two runs over
# the other's. Prints every run and the median ratios.
# Usage: tests/bench/torchscript_vs_eager.sh [ROUNDS] [STEPS] [PRECISIONS]
set -euo pipefail
rounds=${1:-3}
steps=${2:-30}
precisions=${3:-fp32 autocast-bf16}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$here/tests/bench/rates.sh" # check_precisions, optlog_rate, optlog_settings, median, ratio
check_precisions "$precisions"
optlog=${OPTLOG:-$here/build/app/optlog}
python=/usr/bin/python3 # Debian's, which python3-torch belongs to
command -v sqlite3 >/dev/null || { echo "torchscript_vs_eager.sh: needs sqlite3 (apt-get install sqlite3)" >&2; exit 1; }
"$python" -c "import torch" 2>/dev/null || { echo "torchscript_vs_eager.sh: needs python3-torch" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
study=$work/bench.sqlite

module=$work/gpt.pt
"$python" "$here/resources/examples/torchscript/script_model.py" gpt "$module" --width 256 --layers 4 --heads 4 \
  --context 128 >/dev/null
scripted=(--set model.source=torchscript --set model.path="\"$module\"")
builtin=(--set runtime.gemm=aten)

printf "%-14s %5s %9s %9s %9s %9s %9s %9s %7s %7s  %s\n" precision round \
  scripted eager builtin builtin eager scripted "A/B" "A/C" "settings"
for precision in $precisions; do
  eager_ratios=(); builtin_ratios=()
  for round in $(seq 1 "$rounds"); do
    a1=$(optlog_rate "$precision-$round-a" "${scripted[@]}" --set precision.mode=$precision)
    eval "$(optlog_settings "$precision-$round-a")"
    eager() {
      env ${wait_policy:+OMP_WAIT_POLICY=$wait_policy} ${tunables:+GLIBC_TUNABLES=$tunables} \
        "$python" "$here/tests/bench/reference_gpt.py" --example --steps "$steps" --threads "$threads" \
        --precision $precision
    }
    b1=$(eager)
    c1=$(optlog_rate "$precision-$round-c" "${builtin[@]}" --set precision.mode=$precision)
    c2=$(optlog_rate "$precision-$round-d" "${builtin[@]}" --set precision.mode=$precision)
    b2=$(eager)
    a2=$(optlog_rate "$precision-$round-b" "${scripted[@]}" --set precision.mode=$precision)
    eager_ratios+=("$(ratio "$a1" "$a2" "$b1" "$b2")")
    builtin_ratios+=("$(ratio "$a1" "$a2" "$c1" "$c2")")
    printf "%-14s %5s %9s %9s %9s %9s %9s %9s %7s %7s  %s\n" $precision "$round" "$a1" "$b1" "$c1" "$c2" "$b2" "$a2" \
      "${eager_ratios[-1]}" "${builtin_ratios[-1]}" \
      "threads $threads, OMP_WAIT_POLICY=${wait_policy:-unset}, GLIBC_TUNABLES=${tunables:-unset}"
  done
  printf "%-14s median ratios: scripted / eager PyTorch %s (%s), scripted / built-in %s (%s)\n" $precision \
    "$(printf '%s\n' "${eager_ratios[@]}" | median)" "${eager_ratios[*]}" \
    "$(printf '%s\n' "${builtin_ratios[@]}" | median)" "${builtin_ratios[*]}"
done
