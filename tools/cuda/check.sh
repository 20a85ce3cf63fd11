#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The CUDA path's checks, in one call on a GPU server that has PyTorch (whose Python package
# carries LibTorch) but no Qt and no package registry: build the engine against that LibTorch
# with the dependencies carried in .devdeps/ (tools/cuda/pack-deps.sh, run on the Debian machine),
# run the device checks on the GPU (and on its CPU), then a short study of every precision mode
# on the GPU and its comparison. Logs and the study go to $OUT (or out/cuda-check). The race
# against PyTorch (race.sh) follows it in the same call: tools/cuda/check.sh && tools/cuda/race.sh
#
#   DEVICE=cuda STEPS=100 EXTRA_CMAKE_ARGS="..." tools/cuda/check.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/out/cuda-check}
DEVICE=${DEVICE:-cuda}
STEPS=${STEPS:-100}
BUILD=${BUILD:-/tmp/optlog-build-$DEVICE}
mkdir -p "$OUT"
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
fail() { log "FAILED: $*"; exit 1; }

[[ -d .devdeps/usr ]] || fail ".devdeps/ is missing: run tools/cuda/pack-deps.sh on the development machine and carry .devdeps"

log "machine: $(nvidia-smi -L 2>/dev/null | head -1 || echo 'no nvidia-smi'); $(nproc) cores"
TORCH_PREFIX=""
if python3 -c 'import torch' 2>/dev/null; then
  TORCH_PREFIX=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
  ABI=$(python3 -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
  log "python torch $(python3 -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda, "gpu", torch.cuda.is_available())') cxx11 abi $ABI"
  # The carried Debian libraries use the C++11 string ABI; a LibTorch without it cannot link with them.
  [[ $ABI == 1 ]] || fail "this LibTorch uses the old C++ string ABI; the carried Debian libraries need the new one"
fi
CXX=${CXX:-$(command -v g++ || command -v c++ || true)}
[[ -n $CXX ]] || fail "no C++ compiler (g++ or c++) on this machine"
log "compiler: $($CXX --version | head -1); cmake $(cmake --version | head -1 | cut -d' ' -f3); ninja $(ninja --version 2>/dev/null || echo none)"

cuda_args=()
if command -v nvcc >/dev/null; then
  # LibTorch's CMake files choose the architectures from the GPU they find (TORCH_CUDA_ARCH_LIST
  # overrides), and warn at CMAKE_CUDA_ARCHITECTURES.
  cuda_args=(-DCMAKE_CUDA_COMPILER="$(command -v nvcc)")
fi
generator=(); command -v ninja >/dev/null && generator=(-G Ninja)
log "configure"
cmake -S "$ROOT" -B "$BUILD" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$CXX" \
  -DOPTLOG_BUILD_GUI=OFF -DOPTLOG_BUILD_TESTS=ON "${cuda_args[@]}" ${EXTRA_CMAKE_ARGS:-} \
  -DCMAKE_PREFIX_PATH="$ROOT/.devdeps/usr;$ROOT/.devdeps/usr/share/cmake;$TORCH_PREFIX" \
  >"$OUT/configure.log" 2>&1 || { tail -40 "$OUT/configure.log"; fail "configure (configure.log)"; }
grep -E "^-- optlog:" "$OUT/configure.log"
log "build"
cmake --build "$BUILD" --parallel "$(nproc)" --target optlog device_checks \
  >"$OUT/build.log" 2>&1 || { grep -E "error|Error" -A3 "$OUT/build.log" | head -60; fail "build (build.log)"; }

status=0
log "device checks on $DEVICE"
"$BUILD/tests/device/device_checks" --device "$DEVICE" 2>&1 | tee "$OUT/device-checks-$DEVICE.txt" || status=1
if [[ $DEVICE != cpu ]]; then
  log "device checks on this machine's CPU (the same LibTorch)"
  "$BUILD/tests/device/device_checks" --device cpu 2>&1 | tee "$OUT/device-checks-cpu.txt" || status=1
fi

log "a study of every precision mode on $DEVICE ($STEPS steps of the default preset)"
study="$OUT/cuda-study.sqlite"
rm -f "$study"
modes=(fp32 autocast-bf16 master-bf16 pure-bf16)
[[ $DEVICE == cuda ]] && modes+=(autocast-fp16 master-fp16)
for mode in "${modes[@]}"; do
  "$BUILD/app/optlog" run --preset default --db "$study" --set "runtime.device=$DEVICE" \
    --set "precision.mode=$mode" --set "train.steps=$STEPS" --set "train.eval_interval=50" \
    --set "name=$mode" 2>&1 | tail -1 | tee -a "$OUT/summary.txt" || status=1
done
extras=("memory.checkpoint_every=1" "memory.attention=sdpa" "memory.attention=auto")
[[ $DEVICE == cuda ]] && extras+=("precision.tf32=true")
for extra in "${extras[@]}"; do
  "$BUILD/app/optlog" run --preset default --db "$study" --set "runtime.device=$DEVICE" \
    --set "train.steps=$STEPS" --set "train.eval_interval=50" --set "$extra" --set "name=fp32 $extra" \
    2>&1 | tail -1 | tee -a "$OUT/summary.txt" || status=1
done
"$BUILD/app/optlog" compare "$study" 2>&1 | tee "$OUT/compare.txt" || status=1
"$BUILD/app/optlog" show "$study" autocast-bf16 >"$OUT/show-autocast-bf16.txt" 2>&1 || status=1

log "done, status $status"
exit $status
