#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One entry point for a fresh Debian 12 machine: installs what is missing, builds, then
#   run   (default) opens the workbench on the default study and runs it; without a display
#                   (no DISPLAY or WAYLAND_DISPLAY) runs the study headless and prints its comparison
#   test            runs the whole test suite, then builds and tests again against PyTorch's own
#                   LibTorch (PyPI's torch, with CUDA: packaging/pytorch.sh)
#   package         builds the Debian packages: build/optlog_*.deb (the workbench and the CLI, no
#                   LibTorch: all a laptop needs) and build/optlog-engine_*.deb (training here):
#                   `sudo apt install ./build/optlog_*.deb ./build/optlog-engine_*.deb`
#   wheel           builds the Python wheel for a GPU server's torch environment, and its sdist,
#                   in dist/: against PyPI's torch (packaging/pytorch.sh wheel; docs/building.md)
# Idempotent: with everything installed and built it only checks and rebuilds what changed.
set -euo pipefail

mode=${1:-run}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${OPTLOG_BUILD_DIR:-$here/build}

# Build tools, libraries and the default corpus (fortunes). libopenblas0-pthread matters:
# without it LibTorch's FP32 matmuls run on the reference BLAS, about 20x slower.
packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libtorch-dev libopenblas0-pthread
  # oneDNN's header: the engine's FP32 products through the oneDNN LibTorch already links.
  libdnnl-dev
  # c10d's Gloo process group (data-parallel ranks): the headers ProcessGroupGloo.hpp includes.
  libgloo-dev
  libsqlite3-dev sqlite3 libsqlitecpp-dev libtomlplusplus-dev nlohmann-json3-dev libcli11-dev libssl-dev
  qt6-base-dev qt6-charts-dev
  fortunes fortunes-min
  poppler-utils
  # The second configuration's virtual environment, for PyPI's torch (packaging/pytorch.sh).
  python3-venv
  # The package's checks: its validators and the manual pages' renderer.
  desktop-file-utils appstream lintian groff
  # The test command checks that the code is formatted as .clang-format says, and runs the
  # fuzzers: clang's libFuzzer with its sanitizers (tests/fuzz).
  clang-format-14 clang-14 libclang-rt-14-dev
  # The Python recorder's tests train the example PyTorch trainer into a study (optlog record).
  python3 python3-torch
  # Studies on a cluster: Slurm (sbatch, squeue, ...) and munge; the test starts a one-node Slurm.
  slurm-wlm munge
  # Runs on another machine over SSH: OpenSSH's client, and the sshd the tests start as a second
  # host (on the loopback, and in a network namespace made with iproute2's ip).
  openssh-client openssh-server iproute2
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "optlog setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
fi

if [ "$mode" = wheel ]; then
  exec "$here/packaging/pytorch.sh" wheel
fi

if [ "$mode" = test ]; then
  # PyPI's torch for the second configuration (downloaded once, then cached) installs while the
  # first builds: a fresh machine's download and unpacking take minutes of their own.
  environment_out=$(mktemp) environment_err=$(mktemp)
  "$here/packaging/pytorch.sh" environment >"$environment_out" 2>"$environment_err" &
  environment=$!
fi
sdist_python=""
if [ "$mode" != run ]; then
  # The sdist the optlog package carries, which `optlog host setup` builds on a host against its
  # torch: its build tools from PyPI (Debian 12 packages no scikit-build-core), in a small
  # environment of their own, once.
  sdist_tools=${XDG_CACHE_HOME:-$HOME/.cache}/optlog/sdist-tools
  if ! "$sdist_tools/bin/python" -c 'import scikit_build_core, build' 2>/dev/null; then
    /usr/bin/python3 -m venv "$sdist_tools"
    "$sdist_tools/bin/pip" install -q --disable-pip-version-check -r "$here/packaging/wheel/requirements.txt"
  fi
  sdist_python=$sdist_tools/bin/python
fi
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPTLOG_BUILD_GUI=ON \
  ${sdist_python:+-DOPTLOG_SDIST_PYTHON="$sdist_python"} >/dev/null
cmake --build "$build"

case "$mode" in
  run)
    mkdir -p "$here/out"
    # First use on this machine: measure its best threads and wait policy per precision (about
    # two minutes, once; `optlog tune` again after a hardware or library change).
    "$build/app/optlog" tune --if-needed
    if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
      # Queues the default study's runs not yet completed in the file, and starts them.
      exec "$build/app/optlog-workbench" "$here/out/default.sqlite" --queue default --start
    fi
    "$build/app/optlog" study default --db "$here/out/default.sqlite"
    echo "The study is in out/default.sqlite: build/app/optlog runs out/default.sqlite lists its runs."
    ;;
  test)
    # PyPI's torch (downloaded once, then cached) scripts TorchScript modules for this build's engine
    # as a user's own PyTorch would (tests/python), before its own configuration below.
    wait "$environment" || { cat "$environment_err" >&2; exit 1; }
    other_python=$(cat "$environment_out")
    rm -f "$environment_out" "$environment_err"
    cmake -S "$here" -B "$build" -DOPTLOG_OTHER_PYTHON="$other_python" >/dev/null
    # The fuzzers build in a folder of their own: clang, ASan and UBSan (cmake/Fuzzing.cmake).
    fuzz_build=${build}-fuzz
    cmake -S "$here" -B "$fuzz_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
      -DOPTLOG_FUZZ=ON >/dev/null
    cmake --build "$fuzz_build"
    # In parallel, one test per core; those that time the machine run alone (tests/CMakeLists.txt).
    # Each suite runs under tools/where_time_went.py, which samples how busy the cores are.
    suite() { (cd "$1" && python3 "$here/tools/where_time_went.py" busy . -- ctest --output-on-failure "${@:2}" -j "$(nproc)"); }
    suite "$build" --timeout 900
    # The laptop's build, without the engine (OPTLOG_WITH_ENGINE=OFF): no LibTorch header is
    # compiled, so it is quick; its tests are those of what it has, the study commands' among them.
    laptop_build=${build}-laptop
    cmake -S "$here" -B "$laptop_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPTLOG_WITH_ENGINE=OFF >/dev/null
    cmake --build "$laptop_build"
    suite "$laptop_build" --timeout 300
    # Then each fuzzer for its short budget (OPTLOG_FUZZ_SECONDS, 20 s), from its seeds.
    suite "$fuzz_build" --timeout 300
    # The second configuration: the engine, the CLI and what exercises LibTorch, built against
    # PyPI's torch with its CUDA (nvcc compiles the CUDA path) and tested on this CPU.
    "$here/packaging/pytorch.sh" test
    # Where the time went: each build's compile time by target, each suite's tests, the cores' use.
    python3 "$here/tools/where_time_went.py" "$build" "$laptop_build" "$fuzz_build" \
      "${OPTLOG_PYTORCH_BUILD_DIR:-$here/build-pytorch}"
    ;;
  package)
    (cd "$build" && cpack >/dev/null)
    ls "$build"/optlog_*.deb "$build"/optlog-engine_*.deb
    ;;
  *)
    echo "usage: packaging/setup.sh [run|test|package|wheel]" >&2
    exit 2
    ;;
esac
