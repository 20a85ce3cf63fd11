// SPDX-License-Identifier: MIT
#include "core/analysis/numericsrisks.h"

#include "core/contract/format.h"
#include "core/contract/rowlookup.h"

#include <algorithm>
#include <cmath>

namespace optlog {

namespace {

// A fraction as a percentage with the digits a small one needs: "12%", "0.4%", "0.003%".
std::string finePercent(double fraction)
{
    const double p = fraction * 100;
    if (p == 0 || p >= 10)
        return formatted("%.0f%%", p);
    return formatted("%.*f%%", std::max(0, 1 - int(std::floor(std::log10(p)))), p);
}

} // namespace

NumericsRisks numericsRisks(const std::vector<TensorNumerics> &rows)
{
    NumericsRisks risks;
    if (rows.empty())
        return risks;
    risks.step = rows.back().step; // rows come by step
    const TensorNumerics *underflow = nullptr, *vanishing = nullptr, *activation = nullptr;
    const auto larger = [](const TensorNumerics *best, const TensorNumerics &row, double TensorNumerics::*field) {
        return !std::isnan(row.*field) && (!best || row.*field > best->*field);
    };
    for (const auto &row : rows) {
        if (row.step != risks.step)
            continue;
        if (row.tensor == kAllParameters) {
            risks.fp16Underflow = row.fp16Underflow;
            risks.scaledUnderflow = row.scaledUnderflow;
            risks.lossScale = row.lossScale;
            risks.bf16LostUpdates = row.vanishingUpdates;
            continue;
        }
        if (larger(underflow, row, &TensorNumerics::fp16Underflow))
            underflow = &row;
        if (larger(vanishing, row, &TensorNumerics::vanishingUpdates))
            vanishing = &row;
        if (larger(activation, row, &TensorNumerics::activationMax))
            activation = &row;
    }
    if (underflow) {
        risks.underflowTensor = underflow->tensor;
        risks.underflowWorst = underflow->fp16Underflow;
    } else {
        risks.fp16Underflow = risks.scaledUnderflow = NAN; // no tensor measured: no share to speak of
    }
    if (vanishing) {
        risks.lostUpdatesTensor = vanishing->tensor;
        risks.lostUpdatesWorst = vanishing->vanishingUpdates;
    } else {
        risks.bf16LostUpdates = NAN;
    }
    if (activation) {
        risks.activationTensor = activation->tensor;
        risks.largestActivation = activation->activationMax;
    }
    return risks;
}

RiskLevel riskLevel(NumericsRisk risk, double value)
{
    if (std::isnan(value))
        return RiskLevel::Unknown;
    double watch = 0.001, trouble = 0.01; // shares of the gradient's elements
    if (risk == NumericsRisk::Bf16LostUpdates)
        watch = 0.01, trouble = 0.1;
    if (risk == NumericsRisk::LargestActivation)
        watch = 0.1 * kFp16Largest, trouble = 0.5 * kFp16Largest;
    return value < watch ? RiskLevel::Fine : value < trouble ? RiskLevel::Watch : RiskLevel::Trouble;
}

const char *riskTitle(NumericsRisk risk)
{
    static constexpr Named<NumericsRisk> titles[] = {{NumericsRisk::Fp16Underflow, "FP16 zeroed"},
                                                     {NumericsRisk::ScaledUnderflow, "with scaler"},
                                                     {NumericsRisk::Bf16LostUpdates, "BF16 lost updates"},
                                                     {NumericsRisk::LargestActivation, "largest activation"}};
    return nameIn(titles, risk);
}

std::string riskValueText(NumericsRisk risk, double value)
{
    if (std::isnan(value))
        return "–";
    if (risk == NumericsRisk::LargestActivation)
        return formatted("%.3g (%s of max)", value, finePercent(value / kFp16Largest).c_str());
    return finePercent(value);
}

double riskValue(const NumericsRisks &risks, NumericsRisk risk)
{
    switch (risk) {
    case NumericsRisk::Fp16Underflow: return risks.fp16Underflow;
    case NumericsRisk::ScaledUnderflow: return risks.scaledUnderflow;
    case NumericsRisk::Bf16LostUpdates: return risks.bf16LostUpdates;
    case NumericsRisk::LargestActivation: return risks.largestActivation;
    }
    return NAN;
}

std::string riskWorstTensor(const NumericsRisks &risks, NumericsRisk risk)
{
    switch (risk) {
    case NumericsRisk::Fp16Underflow:
    case NumericsRisk::ScaledUnderflow:
        return risks.underflowTensor.empty()
                   ? ""
                   : risks.underflowTensor + " (" + finePercent(risks.underflowWorst) + " without a scaler)";
    case NumericsRisk::Bf16LostUpdates:
        return risks.lostUpdatesTensor.empty()
                   ? ""
                   : risks.lostUpdatesTensor + " (" + finePercent(risks.lostUpdatesWorst) + ")";
    case NumericsRisk::LargestActivation: return risks.activationTensor;
    }
    return "";
}

std::string numericsText(const std::vector<TensorNumerics> &rows)
{
    const NumericsRisks risks = numericsRisks(rows);
    std::vector<std::string> sentences;
    if (!risks.underflowTensor.empty() && !std::isnan(risks.fp16Underflow))
        sentences.push_back(formatted("FP16 without a scaler would zero %s of the gradient elements (%s of %s's), "
                                      "%s at the scale of 2^%.0f a dynamic scaler would hold",
                                      finePercent(risks.fp16Underflow).c_str(),
                                      finePercent(risks.underflowWorst).c_str(), risks.underflowTensor.c_str(),
                                      finePercent(risks.scaledUnderflow).c_str(), std::log2(risks.lossScale)));
    if (!risks.lostUpdatesTensor.empty() && !std::isnan(risks.bf16LostUpdates))
        sentences.push_back(formatted("BF16 weights would lose %s of AdamW's updates (%s of %s's)",
                                      finePercent(risks.bf16LostUpdates).c_str(),
                                      finePercent(risks.lostUpdatesWorst).c_str(), risks.lostUpdatesTensor.c_str()));
    if (!risks.activationTensor.empty())
        sentences.push_back(formatted("largest activation %.3g in %s (FP16 holds 65504)", risks.largestActivation,
                                      risks.activationTensor.c_str()));
    if (sentences.empty())
        return "";
    std::string out = formatted("at step %lld: ", static_cast<long long>(risks.step));
    for (size_t i = 0; i < sentences.size(); ++i)
        out += (i ? "; " : "") + sentences[i];
    return out;
}

} // namespace optlog
