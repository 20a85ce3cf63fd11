// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/memorymodel/devicecalibration.h"
#include "core/memorymodel/probedmemory.h"

#include <cstdint>
#include <map>
#include <string>

namespace optlog {

// The memory of a model optlog has never seen (ModelSource::TorchScript), by probing it: the
// module is trained for a few steps at microbatches 1 and 2 and contexts T/4, T/2 and T of the
// config's, in its precision mode, checkpointing and device, and each role fitted to ActivationFit's
// terms (temporaries as MemoryProbe says). Microbatch 2 at T is trained again on three other
// batches, which differ where the data changes the memory, and microbatch 4 at T is held out of
// the fit to choose its terms. The probes are cached ($XDG_CACHE_HOME/optlog/torchscript-probes.json)
// under the module file's SHA-256, then under probeSetting's precision mode, checkpoint_every and
// device (probedmemory.cpp), and probed again for a longer context or a changed file. Refuses a module that breaks the contract (InputError) before
// probing it.
ProbedMemory probeMemory(const RunConfig &config);

// Three steps of `config`'s model at this microbatch and context (one of warm-up, nothing written),
// measured as a run is: what probeMemory fits to, and what a prediction is checked against.
// shortRunConfig() is the config those steps train with.
struct TokenSplit;
RunConfig shortRunConfig(const RunConfig &config, int64_t microbatch, int64_t context);
MemoryProbe measureShortRun(const RunConfig &config, const TokenSplit &data, int64_t microbatch, int64_t context);

// The device calibration (devicecalibration.h) of `device` in config's precision mode: read from
// the cache, or, the first time (or when the cached one is stale), the built-in GPT probed at
// kCalibrationShapes on the device (2 layers, 4 heads, naive attention, no dropout or
// checkpointing, config's data and vocabulary), each shape predicted by the memory model and
// measured as a run is, the corrections fitted and cached.
DeviceCalibration calibrateDevice(const RunConfig &config, const DeviceTerms &device);

// The prediction for any config on one device: the memory model's for optlog's GPT, calibrated
// on the device where it is on this machine; for a TorchScript module, its probes' (probed, or
// read from the cache, once per setting, then kept).
class MemoryPredictor
{
public:
    explicit MemoryPredictor(DeviceTerms device);
    MemoryEstimate operator()(const RunConfig &config);
    const DeviceTerms &device() const { return m_device; }

private:
    DeviceTerms m_device;
    std::map<std::string, ProbedMemory> m_probed;            // by precision mode and checkpointing
    std::map<std::string, DeviceCalibration> m_calibrations; // by precision mode
};

} // namespace optlog
