// SPDX-License-Identifier: MIT
// One machine identity for an engine run and a run its own trainer recorded: the same machine
// reads as the same, whichever wrote the environment, and a change that moves speeds reads as
// another machine.
#include "core/analysis/machineidentity.h"

#include <nlohmann/json.hpp>

#include <QtTest>

using namespace optlog;

class tst_MachineIdentity : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void engineAndRecordedRunsOnOneGpuAreOneMachine();
    void oldRunsAreReadFromTheirDevice();
    void whatMovesSpeedsMakesAnotherMachine();
    void releasesDropABuildsSuffix();
};

namespace {

// As the engine writes it (core/engine/machine/device.cpp) on an H200.
nlohmann::json engineEnvironment()
{
    return {{"cpu_model", "Intel(R) Xeon(R) Platinum 8480C"},
            {"logical_cpus", 16},
            {"device", "cuda:0 NVIDIA H200, 139.8 GiB"},
            {"device_name", "NVIDIA H200"},
            {"driver", "580.95.05"},
            {"libtorch_version", "2.11.0"}};
}

// As the Python module writes it (app/python/optlog/environment.py) on the same machine.
nlohmann::json recordedEnvironment()
{
    return {{"cpu_model", "Intel(R) Xeon(R) Platinum 8480C"},
            {"logical_cpus", 16},
            {"device", "cuda:0 (NVIDIA H200)"},
            {"device_name", "NVIDIA H200"},
            {"driver", "580.95.05"},
            {"torch_version", "2.11.0+cu130"},
            {"libtorch_version", "2.11.0+cu130"},
            {"python_version", "3.12.3"}};
}

} // namespace

void tst_MachineIdentity::engineAndRecordedRunsOnOneGpuAreOneMachine()
{
    const MachineIdentity engine = MachineIdentity::of(engineEnvironment());
    QCOMPARE(engine.text(), std::string("Intel(R) Xeon(R) Platinum 8480C, 16 CPUs, NVIDIA H200 (driver 580.95.05), "
                                        "LibTorch 2.11.0"));
    QCOMPARE(MachineIdentity::of(recordedEnvironment()).text(), engine.text());
    // And on a CPU.
    const nlohmann::json cpu = {{"cpu_model", "AMD EPYC"},
                                {"logical_cpus", 2},
                                {"device", "cpu"},
                                {"device_name", "cpu"},
                                {"libtorch_version", "1.13.0"}};
    nlohmann::json recorded = cpu;
    recorded["libtorch_version"] = "1.13.0a0"; // Debian's python3-torch says so of the same LibTorch
    QCOMPARE(MachineIdentity::of(recorded).text(), MachineIdentity::of(cpu).text());
    QCOMPARE(MachineIdentity::of(cpu).text(), std::string("AMD EPYC, 2 CPUs, cpu, LibTorch 1.13.0"));
}

void tst_MachineIdentity::oldRunsAreReadFromTheirDevice()
{
    nlohmann::json engine = engineEnvironment(), recorded = recordedEnvironment();
    for (nlohmann::json *env : {&engine, &recorded}) {
        env->erase("device_name");
        env->erase("driver");
    }
    recorded.erase("libtorch_version");
    QCOMPARE(MachineIdentity::of(engine).device, std::string("NVIDIA H200"));
    QCOMPARE(MachineIdentity::of(recorded).text(), MachineIdentity::of(engine).text());
    QVERIFY(!MachineIdentity::of(nlohmann::json::object()).known());
    QVERIFY(!MachineIdentity::of(nlohmann::json::array()).known());
}

void tst_MachineIdentity::whatMovesSpeedsMakesAnotherMachine()
{
    const std::string same = MachineIdentity::of(engineEnvironment()).text();
    for (const auto &[key, value] :
         std::vector<std::pair<std::string, nlohmann::json>>{{"cpu_model", "AMD EPYC 9654"},
                                                             {"logical_cpus", 32},
                                                             {"device_name", "NVIDIA H100 80GB HBM3"},
                                                             {"driver", "570.86.15"},
                                                             {"libtorch_version", "2.10.0"}}) {
        nlohmann::json other = recordedEnvironment();
        other[key] = value;
        QVERIFY2(MachineIdentity::of(other).text() != same, key.c_str());
    }
    // What does not move them does not count: the interpreter, the threads, the host's name.
    nlohmann::json other = recordedEnvironment();
    other["python_version"] = "3.11.2";
    other["intra_op_threads"] = 4;
    other["host"] = "node-7";
    QCOMPARE(MachineIdentity::of(other).text(), same);
}

void tst_MachineIdentity::releasesDropABuildsSuffix()
{
    QCOMPARE(releaseOf("2.11.0+cu130"), std::string("2.11.0"));
    QCOMPARE(releaseOf("1.13.0a0"), std::string("1.13.0"));
    QCOMPARE(releaseOf("2.5.1"), std::string("2.5.1"));
    QCOMPARE(releaseOf("2.6.0.dev20250101"), std::string("2.6.0"));
    QCOMPARE(releaseOf(""), std::string());
}

QTEST_APPLESS_MAIN(tst_MachineIdentity)
#include "tst_machineidentity.moc"
