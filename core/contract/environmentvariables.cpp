// SPDX-License-Identifier: MIT
#include "core/contract/environmentvariables.h"

namespace optlog {

const std::vector<EnvironmentVariable> &environmentVariables()
{
    static const std::vector<EnvironmentVariable> variables = {
        // optlog's own.
        {"OPTLOG", "Python module, workbench",
         "the optlog binary: the one `optlog record` runs as (default: `optlog` on the PATH) and the workbench's "
         "queue runs each run with (default: `optlog` beside it); the CUDA and Valgrind scripts run it too"},
        {"OPTLOG_ENGINE", "workbench",
         "OPTLOG's old name (it named the optlog binary, not the engine): read where OPTLOG is unset, for one "
         "release more (0.2), then no longer"},
        {"OPTLOG_MATMUL_PEAK", "engine",
         "0: measure no matmul peak (a run whose rates are not the machine's, under Valgrind): the run has no MFU; 1 "
         "or unset: measure it once per machine; another value is refused (exit 2)"},
        {"OPTLOG_BUSY_SHARE", "engine, tune",
         "the share of the machine's CPU time other processes (or a hypervisor's steal) may take while optlog "
         "measures its matmul peak or tunes it, before the measurement counts as disturbed and is not kept: 0 to 1, "
         "default 0.2; 1 keeps every measurement (the test suite sets it: ctest -j2 keeps the machine busy)"},
        {"OPTLOG_PROBE_UNTUNED", "launcher",
         "0: an untuned machine's first run skips the quick probe and runs with optlog's defaults, marked untuned "
         "(the test suite sets it)"},
        {"OPTLOG_TUNED_THREADS", "launcher → engine",
         "the intra-op threads `optlog tune` measured fastest for the run's precision; the launcher sets it for the "
         "engine it re-executes (OpenMP and OpenBLAS read their variables only as they load)"},
        {"OPTLOG_TUNED_GEMM", "launcher → engine", "the product path `optlog tune` measured fastest, likewise"},
        {"OPTLOG_TUNING", "launcher → engine", "how the run is tuned, in words, for its environment record"},
        {"OPTLOG_SET_VARIABLES", "launcher → engine",
         "which of these variables the launcher set, as opposed to the user or the system; also what stops it "
         "relaunching twice"},
        {"OPTLOG_SSH_CONFIG", "remote runs",
         "an OpenSSH client config file (`ssh -F`) to reach hosts with, instead of ~/.ssh/config (the tests' own "
         "sshd)"},
        {"OPTLOG_TEST_ALLOCATOR_OVERCOUNT", "engine (tests)",
         "bytes the counting allocator adds to each block: a device of its own, for the memory tests only"},
        // Libraries' own, which optlog sets, reads or records.
        {"OMP_WAIT_POLICY", "launcher, engine",
         "how idle OpenMP workers wait: set per precision by the launcher from `optlog tune`, never over a value "
         "already set; part of the matmul peak's cache key on a CPU"},
        {"OMP_NUM_THREADS", "engine, Python module", "recorded with each run"},
        {"OPENBLAS_NUM_THREADS", "engine, Python module", "recorded with each run"},
        {"OPENBLAS_CORETYPE", "launcher, engine, Python module",
         "OpenBLAS's kernels: set by the launcher from `optlog tune` where OpenBLAS fell back to generic ones, "
         "never over a value the user or the system set"},
        {"ONEDNN_MAX_CPU_ISA", "engine",
         "caps oneDNN's instruction set; where set, optlog asks for no AMX and reports the cap"},
        {"DNNL_MAX_CPU_ISA", "engine", "the same, by oneDNN's older name"},
        {"ONEDNN_VERBOSE", "engine",
         "set by optlog for one product, then restored, to read which kernels ATen's BF16 products reach"},
        {"DNNL_VERBOSE", "engine", "the same, by oneDNN's older name"},
        {"CUDA_VISIBLE_DEVICES", "launcher", "local data-parallel rank R is shown GPU R, unless it is already set"},
        {"GLOO_SOCKET_IFNAME", "engine", "the network interface c10d's Gloo uses between ranks"},
        {"GLOG_minloglevel", "engine",
         "glog's threshold for c10d's messages; unset, optlog keeps only fatal ones (a failed connection is "
         "reported once, in optlog's words)"},
        {"RANK", "engine", "this rank, as torchrun sets it (with WORLD_SIZE, MASTER_ADDR and MASTER_PORT)"},
        {"WORLD_SIZE", "engine", "the ranks, as torchrun sets them"},
        {"MASTER_ADDR", "engine", "rank 0's host: torchrun's; under `srun` default the step's first node"},
        {"MASTER_PORT", "engine", "rank 0's port: torchrun's; under `srun` default 20000 + the job's id modulo 20000"},
        {"SLURM_JOB_ID", "engine", "read under `srun`: the job, for MASTER_PORT's default"},
        {"SLURM_JOB_NODELIST", "engine", "read under `srun`: the job's nodes, for MASTER_ADDR's default"},
        {"SLURM_STEP_NODELIST", "engine", "read under `srun`: the step's nodes, first for MASTER_ADDR's default"},
        {"SLURM_STEP_ID", "engine", "read under `srun`: that the ranks run as a step's tasks"},
        {"SLURM_NTASKS", "engine", "read under `srun`: the world size"},
        {"SLURM_PROCID", "engine", "read under `srun`: this rank"},
        {"CUBLAS_WORKSPACE_CONFIG", "memory model, Python module",
         "sizes cuBLAS's workspaces, which the memory model counts on CUDA; a recorded run records it"},
        {"CUBLASLT_WORKSPACE_SIZE", "memory model, Python module", "the same, for cuBLASLt"},
        {"TORCH_CUBLASLT_UNIFIED_WORKSPACE", "memory model, Python module",
         "1: cuBLAS and cuBLASLt share one workspace (PyTorch 2.x)"},
        // Where files go, and the display.
        {"XDG_CACHE_HOME", "optlog, packaging/pytorch.sh",
         "caches (matmul peak, tuning, device calibration) and the PyTorch environment go to "
         "$XDG_CACHE_HOME/optlog (default ~/.cache/optlog)"},
        {"XDG_DATA_HOME", "optlog",
         "studies named by no --db go to $XDG_DATA_HOME/optlog (default ~/.local/share/optlog)"},
        {"XDG_CONFIG_HOME", "remote runs, workbench",
         "the hosts `optlog host check` reached are remembered in $XDG_CONFIG_HOME/optlog/hosts.json (default "
         "~/.config/optlog), for `optlog run --host` and the workbench's Run on list"},
        {"HOME", "optlog, packaging/pytorch.sh", "the base of the three defaults above"},
        {"PATH", "cluster", "where sbatch, squeue and the rest are found"},
        {"DISPLAY", "workbench, packaging/setup.sh",
         "with neither it, WAYLAND_DISPLAY nor QT_QPA_PLATFORM the workbench opens no window and says how (exit 2), "
         "and `packaging/setup.sh run` runs the study headless"},
        {"WAYLAND_DISPLAY", "workbench, packaging/setup.sh", "likewise"},
        {"QT_QPA_PLATFORM", "workbench, optlog report",
         "Qt's platform: `optlog report` draws its charts offscreen unless it is set; offscreen runs the workbench "
         "without a display (the tests')"},
        {"QT_SCALE_FACTOR", "tools/screenshots", "the scale factor the screenshots are taken at"},
        // The scripts'.
        {"OPTLOG_BUILD_DIR", "packaging/setup.sh", "its build folder (default build/)"},
        {"OPTLOG_PYTORCH_VERSION", "packaging/pytorch.sh", "PyPI's torch to build against (default 2.11.0)"},
        {"OPTLOG_PYTORCH_BUILD_DIR", "packaging/pytorch.sh", "its build folder (default build-pytorch/)"},
        {"TORCH_CUDA_ARCH_LIST", "packaging/pytorch.sh",
         "the GPU architectures the CUDA path compiles for without a GPU to ask (default 9.0)"},
        {"OPTLOG_SANITIZE_BUILD_DIR", "tools/sanitize.sh", "its build folder"},
        {"CLANG_FORMAT", "tools/format.sh", "the clang-format binary (default clang-format-14)"},
        {"VALGRIND_LOG_DIR", "tools/valgrind-optlog.sh", "where Valgrind's reports go (default /tmp)"},
        {"OUT", "tools/cuda", "where the GPU checks write (default out/cuda-check)"},
        {"DEVICE", "tools/cuda", "the device the checks run on (default cuda)"},
        {"BUILD", "tools/cuda", "their build folder (default /tmp/optlog-build-DEVICE)"},
        {"STEPS", "tools/cuda", "steps per run (check.sh 100, race.sh 20)"},
        {"CXX", "tools/cuda/check.sh", "the C++ compiler (default g++)"},
        {"EXTRA_CMAKE_ARGS", "tools/cuda/check.sh", "more CMake arguments"},
        {"PRESET", "tools/cuda/race.sh", "the race's preset (default gpt2-small)"},
        {"MODES", "tools/cuda/race.sh", "its precision modes (default fp32 tf32 autocast-bf16 autocast-fp16)"},
        {"MICROBATCH", "tools/cuda/race.sh", "its microbatch (default the preset's)"},
        {"PYTHON", "tools/cuda/race.sh", "the Python with PyTorch it races (default python3)"},
    };
    return variables;
}

const std::vector<EnvironmentVariable> &testEnvironmentVariables()
{
    static const std::vector<EnvironmentVariable> variables = {
        {"OPTLOG_BINARY", "tests (CTest)", "the optlog binary the tests run"},
        {"OPTLOG_SOURCE_DIR", "tests (CTest)", "the source tree the tests read docs, examples and scripts from"},
        {"OPTLOG_WRITE_DOCS", "tests",
         "1: a test that checks a generated section of docs/ writes it instead of failing (then review the diff)"},
        {"OPTLOG_REQUIRE_TORCH", "tests/python (CTest)",
         "1: the Python module's tests fail, not skip, where `import torch` fails (Debian's python3-torch is "
         "installed)"},
        {"OPTLOG_OTHER_PYTHON", "tests/python (CTest)",
         "an interpreter whose torch is another version: a TorchScript file made by one is trained by the other"},
        {"OPTLOG_TEST_WHEEL_DIR", "tests/package/test_wheel.py (CTest)",
         "the folder holding the wheel and sdist packaging/wheel/build.sh made, which the test installs"},
        {"OPTLOG_FUZZ_WRITE_SEEDS", "tests/fuzz", "a folder fuzz_weights writes the model's own weight files into"},
        {"OPTLOG_SSHHOST_SETENV", "tests/remote/sshhost.sh",
         "variables the test sshd sets in every session it serves (`SetEnv`), beside the host's own folders"},
        {"SLURM_CONF", "tests/cluster", "the one-node cluster's slurm.conf that tst_slurm starts and its commands use"},
        {"OPTLOG_REFERENCE_PYTHON", "tests/bench/engine_vs_pytorch.sh",
         "the interpreter whose PyTorch the engine is raced against (default /usr/bin/python3)"},
        {"STOPPED_RUNS_WAIT", "tests/bench/stopped_runs.sh", "seconds it waits for a run to stop (default 60)"},
    };
    return variables;
}

namespace {

std::string markdownTable(const std::vector<EnvironmentVariable> &variables)
{
    std::string out = "| variable | read by | what it does |\n|---|---|---|\n";
    for (const EnvironmentVariable &v : variables)
        out += std::string("| `") + v.name + "` | " + v.readBy + " | " + v.meaning + " |\n";
    return out;
}

} // namespace

std::string environmentVariablesMarkdown()
{
    return markdownTable(environmentVariables()) + "\nRead by the tests only:\n\n"
           + markdownTable(testEnvironmentVariables());
}

} // namespace optlog
