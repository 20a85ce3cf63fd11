#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# optlog's engine against the same model in PyTorch from Python (Debian's python3-torch, which this
# script installs when missing), alternating the two in short runs, same shape, hyperparameters and
# thread count. Prints each round's median tokens/s and the median ratio optlog / PyTorch.
# Usage: tests/bench/engine_vs_pytorch.sh [ROUNDS] [STEPS]
set -euo pipefail
rounds=${1:-3}
steps=${2:-30}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
optlog=${OPTLOG:-$here/build/app/optlog}
python=/usr/bin/python3 # Debian's, which python3-torch belongs to
if ! "$python" -c "import torch" 2>/dev/null; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get install -y -q python3-torch >/dev/null
fi
threads=$(nproc)
# optlog's launcher sets OMP_WAIT_POLICY=PASSIVE when it is unset; give Python the same.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY-PASSIVE}
study=$(mktemp -d)/bench.sqlite

optlog_rate() { # name, then --set overrides
  local name=$1; shift
  "$optlog" run --preset default --db "$study" --set train.steps="$steps" --set train.eval_interval=1000000 \
    --set runtime.threads="$threads" --set name="\"$name\"" "$@" 2>/dev/null || true
  sqlite3 "$study" "WITH r AS (SELECT m.tokens_per_second t, row_number() OVER (ORDER BY m.tokens_per_second) k,
      count(*) OVER () n FROM metrics m JOIN runs ON runs.id = m.run_id
      WHERE runs.id = (SELECT max(id) FROM runs) AND m.step >= 3)
    SELECT printf('%.1f', avg(t)) FROM r WHERE k IN ((n + 1) / 2, (n + 2) / 2);"
}

printf "%-8s %-14s %5s %12s %12s %7s\n" shape precision round optlog pytorch ratio
for shape in default small; do
  if [ $shape = default ]; then dims=(128 256 4 4 8); else dims=(32 64 2 2 4); fi
  sets=(--set model.context_length=${dims[0]} --set model.width=${dims[1]} --set model.layers=${dims[2]}
        --set model.heads=${dims[3]} --set train.microbatch=${dims[4]})
  for precision in fp32 autocast-bf16; do
    ratios=()
    for round in $(seq 1 "$rounds"); do
      a=$(optlog_rate "$shape-$precision-$round" "${sets[@]}" --set precision.mode=$precision)
      b=$("$python" "$here/tests/bench/reference_gpt.py" --context ${dims[0]} --width ${dims[1]} --layers ${dims[2]} \
            --heads ${dims[3]} --microbatch ${dims[4]} --steps "$steps" --threads "$threads" --precision $precision)
      r=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')
      ratios+=("$r")
      printf "%-8s %-14s %5s %12s %12s %7s\n" $shape $precision "$round" "$a" "$b" "$r"
    done
    printf "%-8s %-14s median ratio %s\n" $shape $precision \
      "$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')"
  done
done
