// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/measurements.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace optlog {

// What the numerics diagnostics found at the last step they measured, as sentences:
// "FP16 without a scaler would zero 0.1% of the gradient elements (33% of blocks.1.attention.qkv.bias)
// at step 299; ...". Empty when the run measured none.
std::string numericsText(const std::vector<TensorNumerics> &rows);

// What 16-bit formats would do to a run's tensors at the last step its numerics diagnostics
// measured, each risk with the tensor where it is worst. NaN: not measured (no BF16 update
// measure outside the BF16 modes, say).
struct NumericsRisks
{
    int64_t step = -1;            // -1: the run measured no numerics
    double fp16Underflow = NAN;   // share of all gradient elements FP16 zeroes without a loss scaler
    double scaledUnderflow = NAN; // the same at the scale a dynamic scaler would hold
    double lossScale = NAN;
    double bf16LostUpdates = NAN;   // share of AdamW's updates a BF16 weight would lose
    double largestActivation = NAN; // largest absolute activation, against FP16's 65504
    std::string underflowTensor, lostUpdatesTensor, activationTensor; // where each is worst
    double underflowWorst = NAN, lostUpdatesWorst = NAN;              // that tensor's own share

    bool measured() const { return step >= 0; }
};
NumericsRisks numericsRisks(const std::vector<TensorNumerics> &rows);

// How close a risk is to trouble: the colour of its cell in the workbench, a mark in the terminal.
enum class RiskLevel { Unknown, Fine, Watch, Trouble };
enum class NumericsRisk { Fp16Underflow, ScaledUnderflow, Bf16LostUpdates, LargestActivation };
// Shares: fine under 0.1% (1% for lost updates), trouble from 1% (10%). The largest activation:
// fine under a tenth of FP16's maximum, trouble from half of it.
RiskLevel riskLevel(NumericsRisk risk, double value);
const char *riskTitle(NumericsRisk risk); // "FP16 zeroed", for a column
// The value as a cell shows it: "0.12%", "812 (1.2% of max)"; "–" when not measured.
std::string riskValueText(NumericsRisk risk, double value);
constexpr NumericsRisk kNumericsRisks[] = {NumericsRisk::Fp16Underflow, NumericsRisk::ScaledUnderflow,
                                           NumericsRisk::Bf16LostUpdates, NumericsRisk::LargestActivation};
double riskValue(const NumericsRisks &risks, NumericsRisk risk);
std::string riskWorstTensor(const NumericsRisks &risks, NumericsRisk risk); // "blocks.1.mlp.fc (3.2%)"

} // namespace optlog
