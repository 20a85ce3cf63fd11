// SPDX-License-Identifier: MIT
// Weights on disk and what was made of them: a run's weights files (final weights, checkpoints),
// pruning checkpoints, reopening a run to continue from one, and its quantizations.
#include "core/store/weights.h"

#include "core/store/store_p.h"

#include <cmath>
#include <filesystem>

namespace optlog {

using namespace StorePrivate;

std::string weightsFolder(const Store &study, int64_t runId)
{
    return std::filesystem::path(study.path()).filename().string() + ".weights/run-" + std::to_string(runId);
}

void addWeightFile(Store &study, int64_t runId, const WeightFile &file)
{
    guarded(study.path(), "store a weights file", [&] {
        SQLite::Statement insert(database(study),
                                 "INSERT OR REPLACE INTO weight_files (run_id, kind, step, path, bytes, sha256, "
                                 "written_at) VALUES (?, ?, ?, ?, ?, ?, ?)");
        insert.bind(1, runId);
        insert.bind(2, weightFileKindName(file.kind));
        insert.bind(3, file.step);
        insert.bind(4, file.path);
        insert.bind(5, file.bytes);
        insert.bind(6, file.sha256);
        insert.bind(7, file.writtenAt.empty() ? utcNow() : file.writtenAt);
        insert.exec();
    });
}

std::vector<WeightFile> weightFiles(const Store &study, int64_t runId)
{
    return guarded(study.path(), "read the run's weights files", [&] {
        SQLite::Statement query(database(study), "SELECT kind, step, path, bytes, sha256, written_at FROM weight_files "
                                                 "WHERE run_id = ? ORDER BY kind DESC, step");
        query.bind(1, runId);
        std::vector<WeightFile> files;
        while (query.executeStep()) {
            WeightFile file;
            // The table's CHECK admits only the two names.
            file.kind = weightFileKindNamed(query.getColumn(0).getString()).value_or(WeightFileKind::Checkpoint);
            file.step = query.getColumn(1).getInt64();
            file.path = query.getColumn(2).getString();
            file.bytes = query.getColumn(3).getInt64();
            file.sha256 = query.getColumn(4).getString();
            file.writtenAt = query.getColumn(5).getString();
            files.push_back(std::move(file));
        }
        return files;
    });
}

int64_t pruneCheckpoints(Store &study, int64_t runId)
{
    const RunRecord run = study.requireRun(runId);
    if (!run.isFinished())
        throw StoreError("study '" + study.path() + "': " + runLabel(run)
                         + " is running and writes checkpoints; prune it when it has finished");
    int64_t freed = 0;
    std::vector<std::string> paths;
    for (const WeightFile &file : weightFiles(study, runId))
        if (file.kind == WeightFileKind::Checkpoint) {
            paths.push_back(study.absolutePath(file.path));
            freed += file.bytes;
        }
    guarded(study.path(), "forget the run's checkpoints", [&] {
        SQLite::Statement erase(database(study), "DELETE FROM weight_files WHERE run_id = ? AND kind = 'checkpoint'");
        erase.bind(1, runId);
        erase.exec();
    });
    // The rows go first: a file whose row is gone is only disk, a row without its file a broken promise.
    for (const std::string &path : paths)
        std::filesystem::remove(path);
    return freed;
}

std::optional<WeightFile> latestCheckpoint(const Store &store, int64_t runId)
{
    std::optional<WeightFile> last;
    for (const WeightFile &file : weightFiles(store, runId))
        if (file.kind == WeightFileKind::Checkpoint && (!last || file.step > last->step))
            last = file;
    return last;
}

void storeQuantization(Store &study, int64_t runId, const QuantizationResult &result)
{
    SQLite::Database &db = database(study);
    study.requireRun(runId);
    guarded(study.path(), "store the quantization", [&] {
        SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
        SQLite::Statement erase(db, "DELETE FROM quantizations WHERE run_id = ? AND scheme = ? AND group_size = ? "
                                    "AND tensors = ?");
        erase.bind(1, runId);
        erase.bind(2, result.scheme);
        erase.bind(3, result.groupSize);
        erase.bind(4, result.tensors);
        erase.exec();
        SQLite::Statement insert(
            db, "INSERT INTO quantizations (run_id, scheme, group_size, tensors, int8_tensors, quantized_weights, "
                "total_weights, code_bytes, scale_bytes, zero_point_bytes, float_bytes, float_dtype, workspace_bytes, "
                "activation_bytes, base_loss, loss, kl, top1_agreement, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        int column = 1;
        insert.bind(column++, runId);
        insert.bind(column++, result.scheme);
        insert.bind(column++, result.groupSize);
        insert.bind(column++, result.tensors);
        insert.bind(column++, result.int8Tensors);
        insert.bind(column++, result.quantizedWeights);
        insert.bind(column++, result.totalWeights);
        insert.bind(column++, result.codeBytes);
        insert.bind(column++, result.scaleBytes);
        insert.bind(column++, result.zeroPointBytes);
        insert.bind(column++, result.floatBytes);
        insert.bind(column++, result.floatDtype);
        insert.bind(column++, result.workspaceBytes);
        insert.bind(column++, result.activationBytes);
        insert.bind(column++, result.baseLoss);
        insert.bind(column++, result.loss);
        insert.bind(column++, result.kl);
        insert.bind(column++, result.top1Agreement);
        insert.bind(column++, result.createdAt.empty() ? utcNow() : result.createdAt);
        insert.exec();
        const int64_t id = db.getLastInsertRowid();
        SQLite::Statement tensor(db, "INSERT INTO quantization_sensitivity (quantization_id, tensor, loss_delta) "
                                     "VALUES (?, ?, ?)");
        for (const TensorSensitivity &row : result.sensitivity) {
            tensor.bind(1, id);
            tensor.bind(2, row.tensor);
            tensor.bind(3, row.lossDelta);
            tensor.exec();
            tensor.reset();
        }
        transaction.commit();
    });
}

std::vector<QuantizationResult> quantizations(const Store &study, int64_t runId)
{
    SQLite::Database &db = database(study);
    return guarded(study.path(), "read the run's quantizations", [&] {
        SQLite::Statement
            query(db,
                  "SELECT id, scheme, group_size, tensors, int8_tensors, quantized_weights, total_weights, code_bytes, "
                  "scale_bytes, zero_point_bytes, float_bytes, float_dtype, workspace_bytes, activation_bytes, "
                  "base_loss, loss, kl, top1_agreement, created_at FROM quantizations WHERE run_id = ? ORDER BY id");
        query.bind(1, runId);
        SQLite::Statement tensors(db, "SELECT tensor, loss_delta FROM quantization_sensitivity "
                                      "WHERE quantization_id = ? ORDER BY loss_delta DESC, tensor");
        const auto real = [](const SQLite::Column &column) {
            return column.isNull() ? std::nan("") : column.getDouble();
        };
        std::vector<QuantizationResult> results;
        while (query.executeStep()) {
            QuantizationResult r;
            int column = 1;
            r.scheme = query.getColumn(column++).getString();
            r.groupSize = query.getColumn(column++).getInt64();
            r.tensors = query.getColumn(column++).getString();
            r.int8Tensors = query.getColumn(column++).getString();
            r.quantizedWeights = query.getColumn(column++).getInt64();
            r.totalWeights = query.getColumn(column++).getInt64();
            r.codeBytes = query.getColumn(column++).getInt64();
            r.scaleBytes = query.getColumn(column++).getInt64();
            r.zeroPointBytes = query.getColumn(column++).getInt64();
            r.floatBytes = query.getColumn(column++).getInt64();
            r.floatDtype = query.getColumn(column++).getString();
            r.workspaceBytes = query.getColumn(column++).getInt64();
            r.activationBytes = query.getColumn(column++).getInt64();
            r.baseLoss = real(query.getColumn(column++));
            r.loss = real(query.getColumn(column++));
            r.kl = real(query.getColumn(column++));
            r.top1Agreement = real(query.getColumn(column++));
            r.createdAt = query.getColumn(column++).getString();
            tensors.bind(1, query.getColumn(0).getInt64());
            while (tensors.executeStep())
                r.sensitivity.push_back({tensors.getColumn(0).getString(), real(tensors.getColumn(1))});
            tensors.reset();
            results.push_back(std::move(r));
        }
        return results;
    });
}

} // namespace optlog
