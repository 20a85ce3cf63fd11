# SPDX-License-Identifier: MIT
# Shared by the speed benchmarks that set optlog beside PyTorch (engine_vs_pytorch.sh,
# torchscript_vs_eager.sh); sourced. optlog_rate and optlog_settings need $optlog, $study, $steps,
# $work and $python set before they are called.

# Exits 2 unless every word of $1 is a precision both sides run: fp32 or autocast-bf16.
check_precisions() {
  local word
  for word in $1; do
    case $word in fp32 | autocast-bf16) ;; *) echo "$(basename "$0"): precision '$word': expected fp32 or autocast-bf16" >&2; exit 2 ;; esac
  done
}

# One optlog run named $1 (then --set overrides); prints its median steady tokens/s.
optlog_rate() {
  local name=$1; shift
  "$optlog" run --preset default --db "$study" --set train.steps="$steps" --set train.eval_interval=1000000 \
    --set name="\"$name\"" "$@" >/dev/null 2>"$work/optlog.err" ||
    { echo "$(basename "$0"): optlog run $name failed:" >&2; cat "$work/optlog.err" >&2; exit 1; }
  local rate
  rate=$(sqlite3 "$study" "WITH run AS (SELECT id FROM runs WHERE name = '$name' AND outcome = 'completed'),
      r AS (SELECT m.tokens_per_second t, row_number() OVER (ORDER BY m.tokens_per_second) k, count(*) OVER () n
            FROM metrics m WHERE m.run_id = (SELECT id FROM run) AND m.step >= 3)
    SELECT printf('%.1f', avg(t)) FROM r WHERE k IN ((n + 1) / 2, (n + 2) / 2);")
  [ -n "$rate" ] || { echo "$(basename "$0"): no completed run $name in the study" >&2; exit 1; }
  echo "$rate"
}

# What optlog's run $1 ran with, as shell assignments: threads, wait policy, heap thresholds.
optlog_settings() {
  sqlite3 "$study" "SELECT environment FROM runs WHERE name = '$1'" | "$python" -c '
import json, sys
e = json.load(sys.stdin)
heap = e.get("heap", {})
tunables = []
if isinstance(heap.get("mmap_threshold_bytes"), int):
    tunables.append("glibc.malloc.mmap_threshold=%d" % heap["mmap_threshold_bytes"])
if isinstance(heap.get("trim_threshold_bytes"), int):
    tunables.append("glibc.malloc.trim_threshold=%d" % heap["trim_threshold_bytes"])
print("threads=%d" % e["intra_op_threads"])
print("wait_policy=%s" % (e["variables"].get("OMP_WAIT_POLICY") or ""))
print("tunables=%s" % ":".join(tunables))'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" -v c="$3" -v d="$4" 'BEGIN { printf "%.3f", (a + b) / (c + d) }'; }

