#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Throughput of precision modes against FP32, alternated in short slices and repeated, so that a
# shared machine's drift falls on both sides: prints each round's steady tokens/s and the median
# ratio. Usage: tests/bench/precision_speed.sh [MODE] [ROUNDS] [STEPS] [PRESET]
# (OPTLOG=path picks another binary.)
set -euo pipefail
mode=${1:-autocast-bf16}
rounds=${2:-4}
steps=${3:-30}
preset=${4:-default}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
optlog=${OPTLOG:-$here/build/app/optlog}
study=$(mktemp -d)/speed.sqlite

# Rounds alternate which side runs first (AB BA AB ...), so a drift within a round does not always
# favour the same side; a run that fails fails the benchmark, with its last words.
log=$(dirname "$study")/run.log
for round in $(seq 1 "$rounds"); do
  order=(fp32 "$mode")
  [ $((round % 2)) -eq 0 ] && order=("$mode" fp32)
  for m in "${order[@]}"; do
    if ! "$optlog" run --preset "$preset" --db "$study" --set train.steps="$steps" --set train.eval_interval=1000000 \
      --set precision.mode="$m" --set name="\"$m-$round\"" 2>"$log"; then
      echo "precision_speed: round $round's $m run failed:" >&2
      tail -3 "$log" >&2
      exit 1
    fi
  done
done

# Steady state: the median over the steps after memory.warmup_steps (3 in every preset).
sqlite3 -separator ' ' "$study" "
  WITH ranked AS (
    SELECT r.name AS name, m.tokens_per_second AS tps,
           row_number() OVER (PARTITION BY r.id ORDER BY m.tokens_per_second) AS k,
           count(*) OVER (PARTITION BY r.id) AS n
    FROM runs r JOIN metrics m ON m.run_id = r.id WHERE m.step >= 3)
  SELECT name, round(avg(tps)) FROM ranked WHERE k IN ((n + 1) / 2, (n + 2) / 2) GROUP BY name ORDER BY name;" |
awk -v mode="$mode" '
  { split($1, part, "-"); round = part[length(part)]; name = substr($1, 1, length($1) - length(round) - 1);
    rate[name, round] = $2; rounds[round] = 1 }
  END {
    printf "%-6s %12s %14s %8s\n", "round", "fp32 tok/s", mode " tok/s", "ratio"
    n = 0
    for (r in rounds) { ratio = rate[mode, r] / rate["fp32", r]; ratios[++n] = ratio
      printf "%-6s %12.0f %14.0f %8.3f\n", r, rate["fp32", r], rate[mode, r], ratio }
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (ratios[j] < ratios[i]) { t = ratios[i]; ratios[i] = ratios[j]; ratios[j] = t }
    median = (n % 2) ? ratios[(n + 1) / 2] : (ratios[n / 2] + ratios[n / 2 + 1]) / 2
    printf "median ratio %s / fp32: %.3f (min %.3f, max %.3f, %d rounds)\n", mode, median, ratios[1], ratios[n], n }'
echo "study: $study"
