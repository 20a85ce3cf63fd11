#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The race (issue 60), on a GPU server right after check.sh has built optlog into $BUILD: the engine
# against the example PyTorch trainer (resources/examples/pytorch/train.py) at the preset's shape
# with the same features (SDPA attention, a fused AdamW, TF32 for the mode tf32, every step's
# metrics read back), per precision mode. The runs of a mode alternate engine, torch, torch, engine,
# so that a drift of the machine (clocks, heat) falls on both sides alike. Writes $OUT/race.sqlite,
# the table of steady-state tokens/s to $OUT/race.md and the terminal, and `optlog compare` of the
# study to $OUT/race-compare.txt; exits 1 if any run failed. DEVICE=cpu is a smoke run.
#
#   DEVICE=cuda PRESET=gpt2-small STEPS=20 MODES="fp32 tf32 autocast-bf16 autocast-fp16" tools/cuda/race.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
OUT=${OUT:-$ROOT/out/cuda-check}
DEVICE=${DEVICE:-cuda}
BUILD=${BUILD:-/tmp/optlog-build-$DEVICE}
PRESET=${PRESET:-gpt2-small}
STEPS=${STEPS:-20}
MODES=${MODES:-fp32 tf32 autocast-bf16 autocast-fp16}
MICROBATCH=${MICROBATCH:-} # empty: the preset's
PYTHON=${PYTHON:-python3}  # with PyTorch; train.py finds the `optlog` module in this source tree
OPTLOG=$BUILD/app/optlog
study=$OUT/race.sqlite
mkdir -p "$OUT"
# A new study and logs: a stale -wal beside a new study would be read back into it.
rm -rf "$study" "$study"-* "$study".weights "$OUT/race.log" "$OUT/race-runs.log"
log() { echo "== $*" | tee -a "$OUT/race.log"; }
fail() { log "FAILED: $*"; exit 1; }
[[ -x $OPTLOG ]] || fail "no $OPTLOG: run tools/cuda/check.sh first, or set BUILD"

# The study, read by Python: `shape RUN` prints train.py's flags for the GPT the engine's run RUN
# trained, one a line, from its stored config (so the preset's shape is optlog's alone); `table
# MODE...` the Markdown table, a MODE written `mode=why` being one that was skipped.
read -r -d '' reader <<'EOF'
import ast, json, statistics, sys
runs = json.load(sys.stdin)["runs"]

def config(run):  # the engine's stored TOML, one `key = scalar` a line, as {"model.width": 768, ...}
    flat, section = {}, ""
    for line in run["config_toml"].splitlines():
        if line.startswith("["):
            section = line.strip("[]") + "."
        elif " = " in line:
            key, value = line.split(" = ", 1)
            flat[section + key] = ast.literal_eval(value.title() if value in ("true", "false") else value)
    return flat

if sys.argv[1] == "shape":
    named = [r for r in runs if r["name"] == sys.argv[2]]
    if not named:
        sys.exit(f"race.sh: no run '{sys.argv[2]}' in the study to read the preset's shape from")
    c = config(named[0])
    unlike = [key for key, same in (("model.source", c["model.source"] == "builtin"), ("model.dropout",
              c["model.dropout"] == 0), ("model.tied_head", c["model.tied_head"]), ("memory.checkpoint_every",
              c["memory.checkpoint_every"] <= 1), ("distributed.ranks", c["distributed.ranks"] == 1)) if not same]
    if unlike:
        sys.exit(f"race.sh: train.py cannot train this preset's {', '.join(unlike)} as the engine does")
    flags = {"--vocab": "model.vocab_size", "--context": "model.context_length", "--width": "model.width",
             "--layers": "model.layers", "--heads": "model.heads", "--microbatch": "train.microbatch",
             "--accumulation": "train.accumulation", "--lr": "train.learning_rate",
             "--warmup": "train.warmup_steps", "--seed": "train.seed", "--corpus": "data.corpus",
             "--eval-sequences": "data.eval_sequences", "--threads": "runtime.threads"}
    words = [word for flag, key in flags.items() for word in (flag, str(c[key]))]
    words += ["--data", c["data.path"]] if c["data.path"] else []
    words += ["--checkpoint"] if c["memory.checkpoint_every"] else []
    print("\n".join(words))
    sys.exit()

# Steady state: the engine's memory.warmup_steps are left out, and at least steps 0-2, as train.py
# profiles its step 2 (MEASURED_STEP) for memory.
first = max([config(r)["memory.warmup_steps"] for r in runs if r["group"].startswith("engine ")] + [3])

def rate(group):  # tokens/s: each completed run's median over its measured steps, averaged over the runs
    medians = []
    for run in (r for r in runs if r["group"] == group and r["outcome"] == "completed"):
        rates = [m["tokens_per_second"] for m in run["metrics"] if m["step"] >= first and m.get("tokens_per_second")]
        medians += [statistics.median(rates)] if rates else []
    return sum(medians) / len(medians) if medians else None

def over(a, b):
    return a / b if a and b else None

def cells(*numbers, ratio=False):
    return [("-" if n is None else f"{n:.2f}" if ratio else f"{n:,.0f}") for n in numbers]

baseline, missing = rate("engine fp32"), 0
print(f"Tokens/s: each run's median over steps {first} and later, averaged over the side's two runs; "
      "the ratios to the engine's fp32 read every mode against one number.\n")
print("| mode | engine tokens/s | torch tokens/s | engine / torch | engine / engine fp32 | torch / engine fp32 |")
print("|---|--:|--:|--:|--:|--:|")
for mode in sys.argv[2:]:
    if "=" in mode:
        print("| {} | {} | | | | |".format(*mode.split("=", 1)))
        continue
    engine, pytorch = rate(f"engine {mode}"), rate(f"torch {mode}")
    missing += engine is None or pytorch is None
    ratios = cells(over(engine, pytorch), over(engine, baseline), over(pytorch, baseline), ratio=True)
    print("| " + " | ".join([mode, *cells(engine, pytorch), *ratios]) + " |")
sys.exit(1 if missing else 0)
EOF

# What this PyTorch can do, in train.py's own words (its refusals, not a copy of its checks).
probe=$("$PYTHON" -c 'import sys; sys.path.insert(0, "resources/examples/pytorch"); import torch, train
print(torch.__version__); print(train.sdpa_refusal() or ""); print(train.fused_refusal(sys.argv[1]) or "")' \
  "$DEVICE") || fail "$PYTHON cannot run train.py's checks (does it have PyTorch?)"
{ read -r torch_version; read -r no_sdpa; read -r no_fused; } <<<"$probe"
machine=$(nvidia-smi -L 2>/dev/null | head -1)
machine="${machine:-$(nproc) CPU cores}, $("$OPTLOG" --version | head -1)"
log "race of $PRESET on $DEVICE, $STEPS steps a run: $machine; PyTorch $torch_version"
# memory.attention=auto is the engine's SDPA where it has one: on CUDA with LibTorch 2.x.
attention=(auto sdpa) # the engine's memory.attention, train.py's --attention
if [[ $DEVICE != cuda || -n $no_sdpa ]]; then
  attention=(naive naive)
  log "attention naive on both sides, like for like: ${no_sdpa:-memory.attention=auto is naive off CUDA}"
fi
fused=(--fused)
if [[ -n $no_fused ]]; then
  fused=()
  log "the torch side's AdamW is PyTorch's default, not fused: $no_fused"
fi
microbatch=()
[[ -n $MICROBATCH ]] && microbatch=(--set "train.microbatch=$MICROBATCH")

race_engine() { # MODE K
  local precision=(--set "precision.mode=$1")
  [[ $1 == tf32 ]] && precision=(--set precision.mode=fp32 --set precision.tf32=true)
  "$OPTLOG" run --preset "$PRESET" --db "$study" --set "runtime.device=$DEVICE" \
    --set "memory.attention=${attention[0]}" --set runtime.metrics_every=1 --set "train.steps=$STEPS" \
    --set "train.eval_interval=$STEPS" --set diagnostics.numerics=false --set runtime.speed_probe_every=0 \
    "${microbatch[@]}" "${precision[@]}" \
    --set "name=\"engine $1 #$2\"" --set "group=\"engine $1\"" 2>&1 | tee -a "$OUT/race-runs.log" | tail -1
}
race_torch() { # MODE K; train.py reads loss.item() once a step, as the engine reads its metrics here
  local precision=(--precision "$1")
  [[ $1 == tf32 ]] && precision=(--precision fp32 --tf32)
  OPTLOG=$OPTLOG "$PYTHON" resources/examples/pytorch/train.py --study "$study" --device "$DEVICE" \
    --attention "${attention[1]}" "${fused[@]}" --steps "$STEPS" --eval-interval "$STEPS" "${shape[@]}" \
    "${precision[@]}" --name "torch $1 #$2" --group "torch $1" 2>&1 | tee -a "$OUT/race-runs.log" | tail -1
}

status=0
shape=()
rows=()
for mode in $MODES; do
  why=""
  case $DEVICE:$mode in
    cpu:tf32) why="TF32 is a tensor-core format of NVIDIA GPUs; the CPU has none" ;;
    cpu:*fp16) why="FP16 autocast's loss scaler is CUDA's" ;;
  esac
  if [[ -n $why ]]; then
    log "$mode: skipped on the CPU: $why"
    rows+=("$mode=skipped on the CPU: $why")
    continue
  fi
  rows+=("$mode")
  log "$mode"
  race_engine "$mode" 1 || status=1
  if ((${#shape[@]} == 0)) && [[ -f $study ]] && words=$("$OPTLOG" export "$study" --format json |
    "$PYTHON" -c "$reader" shape "engine $mode #1"); then
    mapfile -t shape <<<"$words"
    log "the torch side's shape, from the engine's run: ${shape[*]}"
  fi
  if ((${#shape[@]} == 0)); then
    log "torch $mode: not run, without an engine run to read the preset's shape from"
    status=1
  else
    race_torch "$mode" 1 || status=1
    race_torch "$mode" 2 || status=1
  fi
  race_engine "$mode" 2 || status=1
done

[[ -f $study ]] || fail "no run reached $study (each run's output: $OUT/race-runs.log)"
{
  echo "# The race: $PRESET on $DEVICE, $STEPS steps a run"
  echo
  echo "$machine; PyTorch $torch_version; engine memory.attention=${attention[0]}," \
    "torch --attention ${attention[1]} ${fused[*]:-(AdamW not fused)}"
  echo
  "$OPTLOG" export "$study" --format json | "$PYTHON" -c "$reader" table "${rows[@]}"
} >"$OUT/race.md" || status=1
cat "$OUT/race.md"
"$OPTLOG" compare "$study" >"$OUT/race-compare.txt" 2>&1 || status=1
log "done, status $status (each run's output: $OUT/race-runs.log)"
exit $status
