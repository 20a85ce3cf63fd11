#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Does the engine train a TorchScript model as PyTorch trains it? The example trainer's GPT
# (resources/examples/pytorch/train.py) trained by that trainer and, scripted, by optlog's engine,
# for the same steps, shape, data and hyperparameters, three seeds each (on both sides the seed sets
# the initial weights and the batch order). Both record into one study; prints each run's final
# validation loss and `optlog compare`'s verdict over the seed groups.
# Usage: tests/bench/torchscript_vs_trainer.sh [STEPS] [SEEDS]
set -euo pipefail
steps=${1:-300}
seeds=${2:-1 2 3}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
optlog=${OPTLOG:-$here/build/app/optlog}
python=/usr/bin/python3 # Debian's, which python3-torch belongs to
command -v sqlite3 >/dev/null || { echo "torchscript_vs_trainer.sh: needs sqlite3 (apt-get install sqlite3)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
study=$work/quality.sqlite
shape=(--width 128 --layers 4 --heads 4 --context 64)
for seed in $seeds; do
  "$python" "$here/resources/examples/torchscript/script_model.py" gpt "$work/gpt-$seed.pt" "${shape[@]}" \
    --seed "$seed" >/dev/null
  "$optlog" run --db "$study" --set name="\"engine s$seed\"" --set group=engine --set train.seed="$seed" \
    --set model.source=torchscript --set model.path="\"$work/gpt-$seed.pt\"" --set model.context_length=64 \
    --set train.microbatch=8 --set train.steps="$steps" --set data.corpus=generated >/dev/null
  OPTLOG="$optlog" "$python" "$here/resources/examples/pytorch/train.py" --study "$study" --name "pytorch s$seed" \
    --group pytorch --seed "$seed" --steps "$steps" "${shape[@]}" --microbatch 8 --corpus generated >/dev/null
done
sqlite3 -column -header "$study" "SELECT r.name AS run, printf('%.4f', v.loss) AS final_validation_loss
  FROM runs r JOIN validation v ON v.run_id = r.id
  WHERE v.step = (SELECT max(step) FROM validation WHERE run_id = r.id) ORDER BY r.name"
"$optlog" compare "$study" --baseline pytorch
