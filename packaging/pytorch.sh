#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# optlog against PyTorch's own LibTorch, the one a GPU user trains with: PyPI's `torch` wheel (a
# CUDA build, which carries LibTorch's headers and CMake files) in a virtual environment, and the
# headless engine and CLI built against it, without the workbench. Its lines are the README's
# "Build against your own PyTorch"; `packaging/setup.sh test` runs it as its second configuration.
#   packaging/pytorch.sh environment   the virtual environment with torch; prints its interpreter
#   packaging/pytorch.sh build         the environment, then optlog built in build-pytorch/
#   packaging/pytorch.sh wheel         the environment, then optlog's wheel for it and its sdist in
#                                      dist/ (pyproject.toml; docs/building.md, "The wheel")
#   packaging/pytorch.sh test          build, then the wheel, then the whole suite but the
#                                      workbench's (no GPU needed): the CLI, the engine, the fault
#                                      suite, Slurm, ranks over Gloo, the Python side on this torch,
#                                      the wheel installed and run, device_checks
# OPTLOG_PYTORCH_VERSION picks the wheel (default: the version checked on a GPU, docs/building.md).
# The environment lives in ~/.cache/optlog, so a second run downloads nothing.
set -euo pipefail

mode=${1:-build}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
torch_version=${OPTLOG_PYTORCH_VERSION:-2.11.0}
venv=${XDG_CACHE_HOME:-$HOME/.cache}/optlog/pytorch-$torch_version
build=${OPTLOG_PYTORCH_BUILD_DIR:-$here/build-pytorch}
case "$mode" in environment | build | wheel | test) ;; *)
  echo "usage: packaging/pytorch.sh [environment|build|wheel|test]" >&2
  exit 2
  ;;
esac

# Debian's interpreter (python3-venv), not whichever python3 is first on the PATH. numpy only
# quiets torch's warning that it is missing. Lightning and the Hugging Face Trainer (transformers,
# accelerate): the trainers whose callbacks optlog's Python module brings, at the versions tested.
# And what builds the wheel for this torch (packaging/wheel/requirements.txt).
mapfile -t wheel_tools < <(grep -v '^#' "$here/packaging/wheel/requirements.txt")
requirements=("torch==$torch_version" numpy lightning==2.6.6 transformers==5.25.0 accelerate==1.16.0
  "${wheel_tools[@]}")
if ! "$venv/bin/python" - "${requirements[@]}" 2>/dev/null <<'EOF'
import sys
from importlib.metadata import version
for requirement in sys.argv[1:]:
    name, _, wanted = requirement.partition("==")
    assert version(name).split("+")[0] == wanted or not wanted
EOF
then
  echo "optlog pytorch: installing ${requirements[*]} from PyPI into $venv (about 4.6 GB, once)" >&2
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install -q "${requirements[@]}" >&2
fi
if [ "$mode" = environment ]; then
  echo "$venv/bin/python"
  exit 0
fi

# The CUDA toolkit's compiler, where the toolkit is installed but not on the PATH: LibTorch's CMake
# files need it to build optlog's CUDA path (a GPU is needed only to run it).
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
# No GPU to ask here: the architectures LibTorch's CMake files set up (the H100's and H200's).
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}

# The wheel and its sdist go to dist/ (the test command installs that wheel: tests/package).
dist=$here/dist
if [ "$mode" != wheel ]; then
  tests=OFF other_python=""
  [ "$mode" = test ] && tests=ON
  # Debian's python3-torch, where it is installed, scripts modules for this engine too (tests/python).
  /usr/bin/python3 -c 'import torch' 2>/dev/null && other_python=/usr/bin/python3
  mkdir -p "$build"
  cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPTLOG_BUILD_GUI=OFF \
    -DOPTLOG_BUILD_TESTS=$tests -DOPTLOG_PYTHON="$venv/bin/python" -DOPTLOG_OTHER_PYTHON="$other_python" \
    -DOPTLOG_TEST_TRAINER_CALLBACKS=$tests -DOPTLOG_BUILD_BENCHMARKS=OFF -DOPTLOG_TEST_WHEEL_DIR="$dist" \
    -DCMAKE_PREFIX_PATH="$("$venv/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)')" \
    >"$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
  grep '^-- optlog:' "$build/configure.log"
  if [ "$mode" = build ]; then
    cmake --build "$build" --target optlog
    exit 0
  fi
  cmake --build "$build"
fi
# After the test build, whose objects ccache then serves the wheel's build (the same flags).
"$here/packaging/wheel/build.sh" "$venv/bin/python" "$dist"
if [ "$mode" = test ]; then
  # Everything that links or runs LibTorch; the tests that never touch it ran in the first
  # configuration and would prove nothing new here (label no_libtorch, tests/CMakeLists.txt).
  (cd "$build" && python3 "$here/tools/where_time_went.py" busy . -- \
    ctest --output-on-failure --timeout 900 -j "$(nproc)" --label-exclude no_libtorch)
fi
