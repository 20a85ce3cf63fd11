// SPDX-License-Identifier: MIT
#include "core/analysis/runtables.h"

#include "core/analysis/studytext.h"
#include "core/analysis/texttable.h"
#include "core/contract/dtype.h"
#include "core/contract/format.h"
#include "core/contract/rowlookup.h"

#include <algorithm>
#include <cstdio>

namespace optlog {

namespace {

// The roles a rank's table shows: the model state and the buffers, which data parallelism and
// ZeRO change, then the peak.
constexpr MemoryRole kRankRoles[] = {MemoryRole::Gradients, MemoryRole::MasterWeights, MemoryRole::OptimizerState,
                                     MemoryRole::CommunicationBuffers, MemoryRole::Peak};

} // namespace

std::vector<std::string> rankHeader()
{
    std::vector<std::string> header = {"Rank", "Host", "Outcome", "Step time", "In collectives"};
    for (MemoryRole role : kRankRoles)
        header.push_back(memoryRoleLabel(role));
    return header;
}

std::vector<std::vector<std::string>> rankRows(const RunSummary &summary)
{
    // A run on one process is its own rank 0.
    std::vector<RankRecord> ranks = summary.ranks;
    std::map<int64_t, std::vector<MemoryRow>> memory = summary.rankMemory;
    if (ranks.empty()) {
        RankRecord own;
        own.host = summary.run.host;
        own.outcome = outcomeName(summary.run.outcome);
        ranks.push_back(own);
        memory[0] = summary.memory;
    }
    std::vector<std::vector<std::string>> rows;
    for (const RankRecord &rank : ranks) {
        const bool timed = rank.measuredSteps > 0 && rank.stepSeconds > 0;
        std::vector<std::string> row
            = {std::to_string(rank.rank), printable(rank.host), rank.outcome,
               timed ? formatted("%.1f ms", 1000.0 * rank.stepSeconds / double(rank.measuredSteps)) : "-",
               timed ? formatted("%.0f%%", 100.0 * rank.communicationSeconds / rank.stepSeconds) : "-"};
        const auto &rows0 = memory[rank.rank];
        for (MemoryRole role : kRankRoles) {
            int64_t measured = -1, predicted = -1;
            for (const MemoryRow &m : rows0)
                if (m.role == role)
                    (m.source == MemorySource::Measured ? measured : predicted) = m.bytes;
            row.push_back(measured < 0 && predicted < 0 ? "-"
                                                        : (measured >= 0 ? formatBytes(measured) : "-") + " / "
                                                              + (predicted >= 0 ? formatBytes(predicted) : "-"));
        }
        rows.push_back(row);
    }
    return rows;
}

std::string formatDataParallel(const std::vector<RunSummary> &runs)
{
    const bool any = std::any_of(runs.begin(), runs.end(), [](const RunSummary &s) { return !s.ranks.empty(); });
    if (!any)
        return "";
    std::vector<std::string> header = {"Run", "Ranks", "ZeRO", "Tokens/s (all ranks)"};
    for (const std::string &column : rankHeader())
        header.push_back(column);
    std::vector<std::vector<std::string>> rows;
    for (const RunSummary &s : runs) {
        const std::string ranks = s.config ? std::to_string(s.config->distributed.ranks) : "?";
        const std::string stage = s.config ? std::to_string(s.config->distributed.zeroStage) : "?";
        for (const auto &rankRow : rankRows(s)) {
            std::vector<std::string> row = {printable(s.run.name), ranks, stage,
                                            rankRow.front() == "0" ? formatted("%.0f", s.throughput.median) : ""};
            row.insert(row.end(), rankRow.begin(), rankRow.end());
            rows.push_back(row);
        }
    }
    return "\nData parallel, per rank (memory: measured / predicted):\n" + alignedTable(header, rows, "  ");
}

std::string effectiveBatch(const RunConfig &config)
{
    const auto &t = config.train;
    const int64_t sequences = config.distributed.ranks * t.microbatch * t.accumulation;
    return (config.distributed.ranks > 1 ? std::to_string(config.distributed.ranks) + " ranks x " : std::string())
           + "microbatch " + std::to_string(t.microbatch) + " x accumulation " + std::to_string(t.accumulation) + " = "
           + std::to_string(sequences) + " sequences per step";
}

std::string quantizationLabel(const QuantizationResult &r)
{
    std::string label = r.scheme + (r.groupSize > 0 ? " g" + std::to_string(r.groupSize) : " per channel");
    if (!r.int8Tensors.empty())
        label += " (int8: " + r.int8Tensors + ")";
    return label;
}

std::vector<std::string> quantizationHeader()
{
    return {"Weights",    "Bits per weight", "Weight bytes",    "Inference bill",       "Val loss",
            "Δ val loss", "KL (nats)",       "Top-1 agreement", "Most sensitive tensor"};
}

std::vector<std::vector<std::string>> quantizationRows(const std::vector<QuantizationResult> &results)
{
    std::vector<std::vector<std::string>> rows;
    if (results.empty())
        return rows;
    // The run's own weights: every element in its floating-point dtype.
    const QuantizationResult &first = results.front();
    int64_t ownBytes = 0;
    for (Dtype dtype : {Dtype::Float32, Dtype::BFloat16, Dtype::Float16})
        if (first.floatDtype == dtypeName(dtype))
            ownBytes = first.totalWeights * dtypeBytes(dtype);
    rows.push_back({first.floatDtype + " (the run's own)",
                    ownBytes ? formatted("%.2f", 8.0 * double(ownBytes) / double(first.totalWeights)) : "-",
                    ownBytes ? formatBytes(ownBytes) : "-", "-", formatted("%.4f", first.baseLoss), "0", "0", "100.0%",
                    "-"});
    for (const auto &r : results)
        rows.push_back({quantizationLabel(r), formatted("%.2f", r.bitsPerWeight()), formatBytes(r.weightBytes()),
                        formatBytes(r.inferenceBytes()), formatted("%.4f", r.loss), formatted("%+.5f", r.lossDelta()),
                        formatted("%.5f", r.kl), formatted("%.1f%%", 100.0 * r.top1Agreement),
                        r.sensitivity.empty() ? "-"
                                              : formatted("%s (%+.5f)", r.sensitivity.front().tensor.c_str(),
                                                          r.sensitivity.front().lossDelta)});
    return rows;
}

std::string quantizationUntouched()
{
    return "Quantizing weights shrinks the weights only: in training it leaves the optimizer state, the gradients "
           "and the activations as they were; in inference the activations (and a KV cache, which this model's "
           "evaluation does not keep) stay in floating point. The inference bill counts the packed codes, their "
           "scales and zero points, the tensors kept in floating point, the dequantization workspace (one matrix at "
           "a time, FP32) and the activations of one validation batch, all measured. Simulated: the matmuls run on "
           "dequantized FP32 weights; there are no int4 kernels here.";
}

std::vector<RoleMemory> memoryByRole(const std::vector<MemoryRow> &rows)
{
    std::vector<RoleMemory> lines;
    for (MemoryRole role : kMemoryRoles) {
        RoleMemory line;
        line.role = role;
        for (const auto &row : rows) {
            if (row.role != role)
                continue;
            (row.source == MemorySource::Predicted ? line.predicted : line.measured) = row.bytes;
            if (line.dtype.empty() || row.source == MemorySource::Measured)
                line.dtype = row.dtype;
        }
        if (line.predicted >= 0 || line.measured >= 0)
            lines.push_back(line);
    }
    return lines;
}

std::string residualText(const RoleMemory &line)
{
    if (line.predicted <= 0 || line.measured < 0)
        return "";
    char text[32];
    std::snprintf(text, sizeof(text), "%+.1f%%",
                  100.0 * double(line.measured - line.predicted) / double(line.predicted));
    return text;
}

std::string formatMemoryByRole(const std::vector<RunSummary> &runs)
{
    // Short headings: seven roles and the peak fit a terminal's 120 columns beside a run's name.
    static constexpr Named<MemoryRole> headings[] = {{MemoryRole::Parameters, "params"},
                                                     {MemoryRole::Gradients, "grads"},
                                                     {MemoryRole::MasterWeights, "masters"},
                                                     {MemoryRole::OptimizerState, "optimizer"},
                                                     {MemoryRole::CommunicationBuffers, "comm buffers"},
                                                     {MemoryRole::SavedActivations, "activations"},
                                                     {MemoryRole::Temporaries, "temporaries"}};
    const auto heading = [](MemoryRole role) {
        const Named<MemoryRole> *row = findRow(headings, &Named<MemoryRole>::value, role);
        return row ? row->name : memoryRoleLabel(role);
    };
    // Communication buffers only where a run trained over ranks.
    std::vector<MemoryRole> roles;
    for (MemoryRole role : kPeakParts)
        if (role != MemoryRole::CommunicationBuffers
            || std::any_of(runs.begin(), runs.end(), [](const RunSummary &r) { return !r.ranks.empty(); }))
            roles.push_back(role);
    std::vector<TextTable::Column> columns = {{"memory by role"}};
    for (MemoryRole role : roles)
        columns.push_back({heading(role), TextTable::Align::Right});
    columns.push_back({"peak", TextTable::Align::Right});
    TextTable table(columns);
    for (const auto &run : runs) {
        std::vector<std::string> cells = {printable(run.run.name)};
        const std::vector<RoleMemory> lines = memoryByRole(run.memory);
        for (MemoryRole role : roles) {
            std::string text = "-";
            // A state has one dtype; activations and temporaries hold several, as the note says.
            for (const auto &line : lines)
                if (line.role == role && line.measured >= 0)
                    text = formatBytes(line.measured)
                           + (line.dtype.empty() || line.dtype == "mixed" ? "" : " " + shortDtype(line.dtype));
            cells.push_back(text);
        }
        cells.push_back(run.peakBytes > 0 ? formatBytes(run.peakBytes) : "-");
        table.addRow(cells);
    }
    return table.render()
           + wrapped("Measured; each state with the dtype read from the run's tensors. Saved activations and "
                     "temporaries are the allocator's bytes over a step, in several dtypes. \"-\": the run has no "
                     "such state (master weights exist in the master modes only). `optlog show STUDY RUN` sets each "
                     "beside the memory model's prediction.");
}

} // namespace optlog
