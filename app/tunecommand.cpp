// SPDX-License-Identifier: MIT
// `optlog tune`: measures, per precision family, which intra-op thread count, OpenMP wait policy
// and OpenBLAS core type train fastest on this machine, alternating the candidates in short
// runs, and caches the winner for the launcher. A core type is tried only when OpenBLAS fell
// back to its generic kernels, the CPU's flags support better ones, the user or system has not
// set OPENBLAS_CORETYPE, and a GEMM with that core type matches a reference result.
#include "app/commands.h"
#include "core/analysis/analysis.h"
#include "core/store/store.h"
#include "core/config/tuning.h"
#include "core/engine/environment.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>

#include <sys/wait.h>
#include <unistd.h>

namespace optlog {

namespace {

struct Candidate
{
    int threads = 1;
    std::string waitPolicy;
    std::string coreType; // empty: OpenBLAS's own choice
    std::vector<double> tokensPerSecond;

    std::string label() const
    {
        return std::to_string(threads) + " thread" + (threads == 1 ? "" : "s") + ", " + waitPolicy
               + (coreType.empty() ? "" : ", " + coreType);
    }
    double median() const
    {
        std::vector<double> v = tokensPerSecond;
        std::sort(v.begin(), v.end());
        if (v.empty())
            return 0;
        const size_t half = v.size() / 2;
        return v.size() % 2 ? v[half] : (v[half - 1] + v[half]) / 2;
    }
};

// Runs `self` with extra environment variables; returns its exit status.
int runWithEnvironment(const std::string &self, const std::vector<std::string> &arguments,
                       const std::vector<std::pair<std::string, std::string>> &variables)
{
    std::cout.flush();
    std::fflush(stdout); // else the child's freopen() would print the parent's pending lines again
    const pid_t pid = fork();
    if (pid == 0) {
        for (const auto &[name, value] : variables)
            setenv(name.c_str(), value.c_str(), 1);
        std::vector<char *> argv = {const_cast<char *>(self.c_str())};
        for (const auto &a : arguments)
            argv.push_back(const_cast<char *>(a.c_str()));
        argv.push_back(nullptr);
        // Quiet children: the table is the output.
        std::freopen("/dev/null", "w", stderr);
        std::freopen("/dev/null", "w", stdout);
        execv(self.c_str(), argv.data());
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The core type OpenBLAS would use with these flags if it knew this CPU; empty if none fits.
std::string coreTypeFor(const std::string &flags)
{
    if (flags.find("avx512f") != std::string::npos && flags.find("avx512bw") != std::string::npos)
        return "SkylakeX";
    if (flags.find("avx2") != std::string::npos)
        return "Haswell";
    return "";
}

} // namespace

int gemmCheckCommand()
{
    // A product of known random matrices against a plain double-precision loop.
    constexpr int64_t m = 128, k = 96, n = 80;
    std::mt19937 random(7);
    std::uniform_real_distribution<float> uniform(-1, 1);
    std::vector<float> a(m * k), b(k * n);
    for (auto &x : a)
        x = uniform(random);
    for (auto &x : b)
        x = uniform(random);
    const at::Tensor product = at::mm(at::from_blob(a.data(), {m, k}), at::from_blob(b.data(), {k, n}));
    const float *c = product.data_ptr<float>();
    double worst = 0;
    for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
            double expected = 0;
            for (int64_t p = 0; p < k; ++p)
                expected += double(a[i * k + p]) * double(b[p * n + j]);
            worst = std::max(worst, std::fabs(double(c[i * n + j]) - expected));
        }
    }
    std::printf("gemm check with core %s: largest error %.3g\n", blasCoreName().c_str(), worst);
    return worst < 1e-3 ? kExitOk : kExitFailed; // sums of 96 products of size 1: FP32 rounding is ~1e-5
}

int tuneCommand(const TuneRequest &request, const std::string &self)
{
    for (const std::string &mode : request.modes) {
        try {
            precisionFamily(mode);
        } catch (const ConfigError &e) {
            std::cerr << "optlog tune --modes: " << e.what() << "\n";
            return kExitBadInput;
        }
    }
    const std::string key = machineKey();
    const std::string cache = tuningCacheFile();
    if (request.ifNeeded && std::all_of(request.modes.begin(), request.modes.end(), [&](const std::string &mode) {
            return readTuning(cache, key, precisionFamily(mode)).has_value();
        })) {
        std::cout << "optlog tune: this machine is already tuned (" << cache << ")\n";
        return kExitOk;
    }
    const int cores = defaultThreads();
    std::vector<int> threadCounts = {cores};
    if (cores > 1)
        threadCounts.push_back(1);
    std::vector<std::string> coreTypes = {""};
    const char *userCore = std::getenv("OPENBLAS_CORETYPE");
    const std::string generic = blasCoreName();
    const std::string better = coreTypeFor(captureEnvironment({1, 1}, {}).value("cpu_flags", ""));
    if (userCore) {
        std::cout << "optlog tune: OPENBLAS_CORETYPE=" << userCore << " is set by the user or the system: kept\n";
    } else if ((generic == "Prescott" || generic == "Core2" || generic == "Katmai") && !better.empty()) {
        const int check = runWithEnvironment(self, {"tune", "--gemm-check"}, {{"OPENBLAS_CORETYPE", better}});
        std::cout << "optlog tune: OpenBLAS chose its generic " << generic << " kernels; " << better
                  << (check == 0 ? " passes the GEMM check and is a candidate\n" : " fails the GEMM check: not used\n");
        if (check == 0)
            coreTypes.push_back(better);
    }

    const std::filesystem::path folder = std::filesystem::temp_directory_path() / ("optlog-tune-" + std::to_string(getpid()));
    std::filesystem::create_directories(folder);
    const std::string study = (folder / "tune.sqlite").string();
    int runNumber = 0;
    for (const std::string &mode : request.modes) {
        const std::string family = precisionFamily(mode);
        std::vector<Candidate> candidates;
        for (int threads : threadCounts)
            for (const char *wait : {"PASSIVE", "ACTIVE"})
                for (const auto &core : coreTypes)
                    candidates.push_back({threads, wait, core, {}});
        // Rounds alternate the candidates, so a machine's drift falls on all of them alike.
        for (int round = 0; round < request.rounds; ++round) {
            for (auto &candidate : candidates) {
                const std::string name = "tune-" + std::to_string(++runNumber);
                std::vector<std::pair<std::string, std::string>> variables = {
                    {"OMP_WAIT_POLICY", candidate.waitPolicy},
                    {"OPTLOG_SET_VARIABLES", "OMP_WAIT_POLICY"}, // the launcher leaves these alone
                    {"OPTLOG_TUNING", "candidate of optlog tune"}};
                if (!candidate.coreType.empty())
                    variables.push_back({"OPENBLAS_CORETYPE", candidate.coreType});
                const int status = runWithEnvironment(
                    self,
                    {"run", "--preset", request.preset, "--db", study, "--set", "train.steps=" + std::to_string(request.steps),
                     "--set", "train.eval_interval=1000000", "--set", "runtime.speed_probe_every=0", "--set",
                     "precision.mode=\"" + mode + "\"", "--set", "runtime.threads=" + std::to_string(candidate.threads),
                     "--set", "name=\"" + name + "\""},
                    variables);
                if (status != 0) {
                    std::cerr << "optlog tune: the run with " << candidate.label() << " failed (exit " << status << ")\n";
                    std::filesystem::remove_all(folder);
                    return kExitFailed;
                }
                const Store store(study, Store::Access::ReadOnly);
                candidate.tokensPerSecond.push_back(summarize(store, *store.findRun(name)).throughput.median);
            }
        }
        const Candidate *best = &candidates.front();
        const Candidate *untuned = nullptr; // what the launcher does without a tuning
        std::printf("%s (%s, %d steps, %d rounds):\n", mode.c_str(), request.preset.c_str(), request.steps, request.rounds);
        for (const auto &c : candidates) {
            std::printf("  %-32s %9.0f tokens/s median of", c.label().c_str(), c.median());
            for (double t : c.tokensPerSecond)
                std::printf(" %.0f", t);
            std::printf("\n");
            if (c.median() > best->median())
                best = &c;
            if (c.threads == cores && c.waitPolicy == "PASSIVE" && c.coreType.empty())
                untuned = &c;
        }
        TunedSettings settings;
        settings.threads = best->threads;
        settings.waitPolicy = best->waitPolicy;
        settings.coreType = best->coreType;
        settings.tokensPerSecond = best->median();
        settings.untunedTokensPerSecond = untuned ? untuned->median() : 0;
        writeTuning(cache, key, family, settings);
        std::printf("  best for %s: %s, %.2fx the untuned default (%s)\n", family.c_str(), best->label().c_str(),
                    settings.untunedTokensPerSecond > 0 ? settings.tokensPerSecond / settings.untunedTokensPerSecond : 0.0,
                    untuned ? untuned->label().c_str() : "none");
    }
    std::filesystem::remove_all(folder);
    std::cout << "optlog tune: saved in " << cache << "; `optlog run` uses it from now on\n";
    return kExitOk;
}

} // namespace optlog
