// SPDX-License-Identifier: MIT
// Weights on disk and what was made of them: a run's weights files (final weights, checkpoints),
// pruning checkpoints, reopening a run to continue from one, and its quantizations.
#include "core/contract/thismachine.h"
#include "core/store/store_p.h"

#include <cmath>
#include <filesystem>

#include <unistd.h>

namespace optlog {

using namespace StorePrivate;

std::string Store::weightsFolder(int64_t runId) const
{
    return std::filesystem::path(m_path).filename().string() + ".weights/run-" + std::to_string(runId);
}

std::string Store::absolutePath(const std::string &relative) const
{
    return (std::filesystem::path(m_path).parent_path() / relative).string();
}

void Store::addWeightFile(int64_t runId, const WeightFile &file)
{
    guarded(m_path, "store a weights file", [&] {
        SQLite::Statement insert(*m_db, "INSERT OR REPLACE INTO weight_files (run_id, kind, step, path, bytes, sha256, "
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

std::vector<WeightFile> Store::weightFiles(int64_t runId) const
{
    return guarded(m_path, "read the run's weights files", [&] {
        SQLite::Statement query(*m_db, "SELECT kind, step, path, bytes, sha256, written_at FROM weight_files "
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

int64_t Store::pruneCheckpoints(int64_t runId)
{
    const RunRecord run = requireRun(runId);
    if (!run.isFinished())
        throw StoreError("study '" + m_path + "': " + runLabel(run)
                         + " is running and writes checkpoints; prune it when it has finished");
    int64_t freed = 0;
    std::vector<std::string> paths;
    for (const WeightFile &file : weightFiles(runId))
        if (file.kind == WeightFileKind::Checkpoint) {
            paths.push_back(absolutePath(file.path));
            freed += file.bytes;
        }
    guarded(m_path, "forget the run's checkpoints", [&] {
        SQLite::Statement erase(*m_db, "DELETE FROM weight_files WHERE run_id = ? AND kind = 'checkpoint'");
        erase.bind(1, runId);
        erase.exec();
    });
    // The rows go first: a file whose row is gone is only disk, a row without its file a broken promise.
    for (const std::string &path : paths)
        std::filesystem::remove(path);
    return freed;
}

void Store::reopenRun(int64_t runId, int64_t step)
{
    const int64_t pid = getpid();
    reopenRunUnder(runId, step, pid, processStartTime(pid), thisMachine(), "");
}

void Store::reopenRemoteRun(int64_t runId, int64_t step, int64_t pid, const std::string &machine, const std::string &log)
{
    reopenRunUnder(runId, step, pid, "", machine, log);
}

void Store::reopenRunUnder(int64_t runId, int64_t step, int64_t pid, const std::string &pidStart,
                           const std::string &host, const std::string &remoteLog)
{
    requireRun(runId);
    guarded(m_path, "reopen the run", [&] {
        SQLite::Transaction transaction(*m_db, SQLite::TransactionBehavior::IMMEDIATE);
        // Reopened under this engine already (a resume answered twice): its rows since are kept.
        SQLite::Statement current(*m_db, "SELECT status = 'running' AND pid = ? AND host = ? FROM runs WHERE id = ?");
        current.bind(1, pid);
        current.bind(2, host);
        current.bind(3, runId);
        if (current.executeStep() && current.getColumn(0).getInt() == 1)
            return;
        for (const char *table : {"metrics", "validation", "numerics", "weight_files", "memory_timelines"}) {
            SQLite::Statement erase(*m_db, std::string("DELETE FROM ") + table + " WHERE run_id = ? AND step > ?");
            erase.bind(1, runId);
            erase.bind(2, step);
            erase.exec();
        }
        SQLite::Statement measured(*m_db, "DELETE FROM memory WHERE run_id = ? AND source = ?");
        measured.bind(1, runId);
        measured.bind(2, memorySourceName(MemorySource::Measured));
        measured.exec();
        SQLite::Statement update(*m_db, "UPDATE runs SET status = 'running', outcome = NULL, outcome_step = NULL, "
                                        "message = NULL, finished_at = NULL, pid = ?, pid_start = ?, host = ? "
                                        "WHERE id = ?");
        update.bind(1, pid);
        update.bind(2, pidStart);
        update.bind(3, host);
        update.bind(4, runId);
        update.exec();
        // A copy of a run elsewhere, gathered whole once it had ended, is to be gathered again, and
        // its engine there writes another log.
        SQLite::Statement regather(*m_db, "UPDATE remote_runs SET gathered_at = NULL, log = coalesce(nullif(?, ''), "
                                          "log) WHERE run_id = ?");
        regather.bind(1, remoteLog);
        regather.bind(2, runId);
        regather.exec();
        transaction.commit();
    });
}

std::optional<WeightFile> latestCheckpoint(const Store &store, int64_t runId)
{
    std::optional<WeightFile> last;
    for (const WeightFile &file : store.weightFiles(runId))
        if (file.kind == WeightFileKind::Checkpoint && (!last || file.step > last->step))
            last = file;
    return last;
}

void Store::storeQuantization(int64_t runId, const QuantizationResult &result)
{
    requireRun(runId);
    guarded(m_path, "store the quantization", [&] {
        SQLite::Transaction transaction(*m_db, SQLite::TransactionBehavior::IMMEDIATE);
        SQLite::Statement erase(*m_db, "DELETE FROM quantizations WHERE run_id = ? AND scheme = ? AND group_size = ? "
                                       "AND tensors = ?");
        erase.bind(1, runId);
        erase.bind(2, result.scheme);
        erase.bind(3, result.groupSize);
        erase.bind(4, result.tensors);
        erase.exec();
        SQLite::Statement insert(
            *m_db,
            "INSERT INTO quantizations (run_id, scheme, group_size, tensors, int8_tensors, quantized_weights, "
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
        const int64_t id = m_db->getLastInsertRowid();
        SQLite::Statement tensor(*m_db, "INSERT INTO quantization_sensitivity (quantization_id, tensor, loss_delta) "
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

std::vector<QuantizationResult> Store::quantizations(int64_t runId) const
{
    return guarded(m_path, "read the run's quantizations", [&] {
        SQLite::Statement
            query(*m_db,
                  "SELECT id, scheme, group_size, tensors, int8_tensors, quantized_weights, total_weights, code_bytes, "
                  "scale_bytes, zero_point_bytes, float_bytes, float_dtype, workspace_bytes, activation_bytes, "
                  "base_loss, loss, kl, top1_agreement, created_at FROM quantizations WHERE run_id = ? ORDER BY id");
        query.bind(1, runId);
        SQLite::Statement tensors(*m_db, "SELECT tensor, loss_delta FROM quantization_sensitivity "
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
