// SPDX-License-Identifier: MIT
// `optlog tune`: its options. The measuring is the engine's (app/engine/tune.cpp).
#include "app/cli.h"
#include "app/commands.h"
#include "app/enginework.h"

#include <algorithm>
#include <memory>

namespace optlog {

namespace {

// Steps per candidate run of a quick probe (`optlog tune --quick`): the three warm-up steps and
// five measured ones, about a second each at the default preset here.
constexpr int kQuickProbeSteps = 8;

} // namespace

Command addTuneCommand(CLI::App &app, const Invocation &invocation)
{
    auto request = std::make_shared<TuneRequest>();
    auto gemmCheck = std::make_shared<bool>(false);
    CLI::App *command = app.add_subcommand("tune", "measure the fastest threads, wait policy, BLAS core type and "
                                                   "product path per precision on this machine, and keep them for "
                                                   "optlog run");
    command->add_option("--preset", request->preset, "model to measure with")->capture_default_str();
    command->add_option("--modes", request->modes, "precision modes to tune, one per family")
        ->delimiter(',')
        ->capture_default_str();
    command->add_option("--steps", request->steps, "steps per candidate run")
        ->capture_default_str()
        ->check(CLI::Range(5, 100000));
    command->add_option("--rounds", request->rounds, "alternations of all candidates")
        ->capture_default_str()
        ->check(CLI::Range(1, 100));
    command->add_flag("--if-needed", request->ifNeeded,
                      "do nothing when every requested family is already tuned here (a quick probe does not count)");
    command->add_flag("--quick", request->quick,
                      "a quick probe: one round of short runs (seconds), what an untuned machine's first run does");
    command->add_flag("--status", request->status, "say which precision families are tuned here, and by what");
    command->add_flag("--peak-only", request->peakOnly,
                      "measure only the matmul peak (MFU's denominator), for runs your own trainer records here");
    command->add_option("--device", request->peakDevice, "with --peak-only: cpu or cuda")
        ->capture_default_str()
        ->check(CLI::IsMember({"cpu", "cuda"}));
    command
        ->add_option("--threads", request->peakThreads,
                     "with --peak-only: intra-op threads (default: LibTorch's, as PyTorch's)")
        ->check(CLI::Range(1, 4096));
    command->add_flag("--gemm-check", *gemmCheck, "internal: check a GEMM with this process's OpenBLAS core type")
        ->group(""); // hidden from --help and the manual
    return {command, [request, gemmCheck, invocation] {
                if (request->quick) {
                    request->steps = std::min(request->steps, kQuickProbeSteps);
                    request->rounds = 1;
                }
                if (*gemmCheck)
                    return gemmCheckCommand();
                return request->peakOnly ? peakCommand(*request) : tuneCommand(*request, invocation.self);
            }};
}

} // namespace optlog
