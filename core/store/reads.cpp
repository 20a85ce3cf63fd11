// SPDX-License-Identifier: MIT
// What the CLI and the GUI read: the runs (a run whose engine is gone reads as crashed), a run by
// id or name, and each run's rows.
#include "core/contract/format.h"
#include "core/contract/program.h"
#include "core/store/store_p.h"

#include <algorithm>
#include <utility>

namespace optlog {

using namespace StorePrivate;

namespace {

// How a refusal that names no run ends: the command that lists them all, archived runs too (a
// name finds those as well).
std::string listingHint(const std::string &study)
{
    return "`" + pasteableCommand({"optlog", "runs", study, "--all"}) + "` lists them";
}

// The rows of a run's ordered query from the `from`th on (0: all of them).
std::string rowsFrom(int64_t from)
{
    return from > 0 ? " LIMIT -1 OFFSET " + std::to_string(from) : std::string();
}

} // namespace

std::vector<RunRecord> Store::runs() const
{
    const int64_t seed = studySeed();
    return guarded(m_path, "read its runs", [&] {
        SQLite::Statement query(*m_db,
                                "SELECT id, name, config_toml, coalesce(outcome_step, -1), coalesce(message, ''), "
                                "created_at, coalesce(finished_at, ''), coalesce(pid, 0), coalesce(host, ''), "
                                "coalesce(environment, ''), coalesce(dtypes, ''), coalesce(group_name, name), "
                                "coalesce(note, ''), archived, status, coalesce(outcome, ''), "
                                "coalesce(derived_from_study, ''), coalesce(derived_from_run, 0), "
                                "coalesce(derived_from_name, ''), coalesce(validation_seed, ?) FROM runs ORDER BY id");
        query.bind(1, seed);
        std::vector<RunRecord> out;
        while (query.executeStep()) {
            RunRecord r = readColumns(query, &RunRecord::id, &RunRecord::name, &RunRecord::configToml,
                                      &RunRecord::outcomeStep, &RunRecord::message, &RunRecord::createdAt,
                                      &RunRecord::finishedAt, &RunRecord::pid, &RunRecord::host,
                                      &RunRecord::environmentJson, &RunRecord::dtypesJson, &RunRecord::group,
                                      &RunRecord::note, &RunRecord::archived);
            if (query.getColumn(14).getString() == "finished") {
                const std::string outcome = query.getColumn(15).getString();
                r.outcome = outcomeNamed(outcome);
                if (!r.outcome) {
                    // Written by hand or by another program: show it as a failure that says what it was.
                    r.outcome = Outcome::Failed;
                    r.message = "the study records the outcome '" + outcome + "', which this optlog does not know"
                                + (r.message.empty() ? "" : "; " + r.message);
                }
            }
            r.derivedFrom = {query.getColumn(16).getString(), query.getColumn(17).getInt64(),
                             query.getColumn(18).getString()};
            r.validationSeed = query.getColumn(19).getInt64();
            out.push_back(std::move(r));
        }
        const auto byId = [&out](int64_t id) -> RunRecord * {
            for (RunRecord &r : out)
                if (r.id == id)
                    return &r;
            return nullptr;
        };
        SQLite::Statement tags(*m_db, "SELECT run_id, tag FROM tags ORDER BY tag");
        while (tags.executeStep())
            if (RunRecord *r = byId(tags.getColumn(0).getInt64()))
                r->tags.push_back(tags.getColumn(1).getString());
        SQLite::Statement former(*m_db, "SELECT run_id, name FROM former_names ORDER BY id");
        while (former.executeStep())
            if (RunRecord *r = byId(former.getColumn(0).getInt64()))
                r->formerNames.push_back(former.getColumn(1).getString());
        SQLite::Statement quantized(*m_db, "SELECT run_id, max(id) FROM quantizations GROUP BY run_id");
        while (quantized.executeStep())
            if (RunRecord *r = byId(quantized.getColumn(0).getInt64()))
                r->lastQuantization = quantized.getColumn(1).getInt64();
        // What a writer would mark, a reader shows without writing it.
        for (const DeadRun &dead : deadRuns())
            if (RunRecord *r = byId(dead.id)) {
                r->outcome = Outcome::Crashed;
                r->outcomeStep = dead.lastStep;
                r->message = dead.message + " (not yet stored: the next optlog that writes the study stores it)";
            }
        return out;
    });
}

std::optional<RunRecord> Store::findRun(const std::string &idOrName) const
{
    std::optional<RunRecord> found;
    for (auto &run : runs())
        if (std::to_string(run.id) == idOrName || run.name == idOrName)
            found = run; // the newest of that name wins
    return found;
}

std::vector<StepMetrics> Store::metrics(int64_t runId, int64_t from) const
{
    return guarded(m_path, "read metrics", [&] {
        return selectEach<StepMetrics>(
            *m_db,
            (std::string("SELECT step, tokens, train_loss, learning_rate, grad_norm, step_seconds, tokens_per_second, "
                         "coalesce(loss_scale, 0), skipped, coalesce(machine_gflops, 0), communication_seconds "
                         "FROM metrics WHERE run_id = ? ORDER BY step")
             + rowsFrom(from))
                .c_str(),
            runId, [](SQLite::Statement &query) {
                StepMetrics row = readColumns(query, &StepMetrics::step, &StepMetrics::tokens, &StepMetrics::trainLoss,
                                              &StepMetrics::learningRate, &StepMetrics::gradNorm,
                                              &StepMetrics::stepSeconds, &StepMetrics::tokensPerSecond,
                                              &StepMetrics::lossScale, &StepMetrics::skipped,
                                              &StepMetrics::machineGflops);
                if (!query.getColumn(10).isNull())
                    row.communicationSeconds = query.getColumn(10).getDouble();
                return std::optional(row);
            });
    });
}

std::vector<ValidationPoint> Store::validation(int64_t runId, int64_t from) const
{
    return guarded(m_path, "read validation losses", [&] {
        return selectEach<ValidationPoint>(
            *m_db,
            (std::string("SELECT step, tokens, loss, coalesce(sequences, 0), coalesce(sequence_sd, 0) FROM validation "
                         "WHERE run_id = ? ORDER BY step")
             + rowsFrom(from))
                .c_str(),
            runId, [](SQLite::Statement &query) {
                return std::optional(readColumns(query, &ValidationPoint::step, &ValidationPoint::tokens,
                                                 &ValidationPoint::loss, &ValidationPoint::sequences,
                                                 &ValidationPoint::sequenceSd));
            });
    });
}

std::vector<RankRecord> Store::ranks(int64_t runId) const
{
    return guarded(m_path, "read the ranks", [&] {
        return selectEach<RankRecord>(
            *m_db,
            "SELECT rank, host, coalesce(pid, 0), coalesce(environment, ''), measured_steps, step_seconds, "
            "communication_seconds, outcome, message FROM ranks WHERE run_id = ? ORDER BY rank",
            runId, [](SQLite::Statement &query) {
                return std::optional(readColumns(query, &RankRecord::rank, &RankRecord::host, &RankRecord::pid,
                                                 &RankRecord::environmentJson, &RankRecord::measuredSteps,
                                                 &RankRecord::stepSeconds, &RankRecord::communicationSeconds,
                                                 &RankRecord::outcome, &RankRecord::message));
            });
    });
}

std::vector<MemoryRow> Store::memory(int64_t runId, int64_t rank) const
{
    return guarded(m_path, "read memory by role", [&] {
        std::vector<MemoryRow> out = selectEach<MemoryRow>(
            *m_db,
            ("SELECT role, dtype, bytes, source FROM memory WHERE run_id = ? AND rank = " + std::to_string(rank)).c_str(),
            runId, [](SQLite::Statement &query) -> std::optional<MemoryRow> {
                const auto role = memoryRoleNamed(query.getColumn(0).getString());
                const auto source = memorySourceNamed(query.getColumn(3).getString());
                if (!role || !source)
                    return std::nullopt; // a role this optlog does not know stays in the file, unread
                return MemoryRow{*role, query.getColumn(1).getString(), query.getColumn(2).getInt64(), *source};
            });
        // In the roles' own order (memoryroles.h), each predicted before measured.
        std::sort(out.begin(), out.end(), [](const MemoryRow &a, const MemoryRow &b) {
            return std::pair(a.role, a.source) < std::pair(b.role, b.source);
        });
        return out;
    });
}

std::vector<MemoryTimeline> Store::timelines(int64_t runId) const
{
    return guarded(m_path, "read memory timelines", [&] {
        return selectEach<MemoryTimeline>(*m_db, "SELECT timeline FROM memory_timelines WHERE run_id = ? ORDER BY step",
                                          runId, [](SQLite::Statement &query) -> std::optional<MemoryTimeline> {
                                              try {
                                                  return timelineFromText(query.getColumn(0).getString());
                                              } catch (const InputError &) {
                                                  return std::nullopt;
                                              }
                                          });
    });
}

std::vector<EventRecord> Store::events(int64_t runId, int64_t from) const
{
    return guarded(m_path, "read events", [&] {
        return selectEach<EventRecord>(
            *m_db,
            (std::string("SELECT at, kind, message, coalesce(step, -1) FROM events WHERE run_id = ? ORDER BY id")
             + rowsFrom(from))
                .c_str(),
            runId, [](SQLite::Statement &query) {
                // A kind this optlog does not know still shows, as a note.
                const EventKind kind = eventKindNamed(query.getColumn(1).getString()).value_or(EventKind::Note);
                return std::optional<EventRecord>({query.getColumn(0).getString(), kind, query.getColumn(2).getString(),
                                                   query.getColumn(3).getInt64()});
            });
    });
}

std::vector<TensorNumerics> Store::numerics(int64_t runId) const
{
    return guarded(m_path, "read numerics", [&] {
        return selectEach<TensorNumerics>(
            *m_db,
            "SELECT step, tensor, fp16_underflow, fp16_subnormal, scaled_underflow, loss_scale, vanishing_updates, "
            "activation_max FROM numerics WHERE run_id = ? ORDER BY step, tensor",
            runId, [](SQLite::Statement &query) {
                return std::optional(readColumns(query, &TensorNumerics::step, &TensorNumerics::tensor,
                                                 &TensorNumerics::fp16Underflow, &TensorNumerics::fp16Subnormal,
                                                 &TensorNumerics::scaledUnderflow, &TensorNumerics::lossScale,
                                                 &TensorNumerics::vanishingUpdates, &TensorNumerics::activationMax));
            });
    });
}

RunRecord Store::requireRun(int64_t runId) const
{
    for (RunRecord &run : runs())
        if (run.id == runId)
            return std::move(run);
    throw StoreError("study '" + m_path + "' has no run " + std::to_string(runId) + "; " + listingHint(m_path));
}

RunRecord Store::requireRunNamed(const std::string &idOrName) const
{
    if (std::optional<RunRecord> run = findRun(idOrName))
        return std::move(*run);
    throw StoreError("no run '" + printable(idOrName) + "' in " + m_path + "; " + listingHint(m_path));
}

} // namespace optlog
