// SPDX-License-Identifier: MIT
// Curating a study's runs: a run's note, tags, name and archived flag, deleting runs, copying runs
// between studies, and compacting the file.
#pragma once

#include "core/store/store.h"

#include <cstdint>
#include <string>
#include <vector>

namespace optlog {

inline constexpr size_t kMaxNoteBytes = 8192;
inline constexpr size_t kMaxTagBytes = 64;

// Each is one transaction that changes nothing when it throws StoreError, which names the run and
// what would be right: a run that does not exist, a name in use or unfit for a table, a note over
// kMaxNoteBytes or with control characters, a tag with spaces or controls.

// An empty note clears it.
void setNote(Store &study, int64_t runId, const std::string &note);
// Adds then removes tags; removing a tag the run does not have is no error.
void changeTags(Store &study, int64_t runId, const std::vector<std::string> &add,
                const std::vector<std::string> &remove);
// The old name stays with the run as a former name. A run alone in its group takes its group
// along (a group is the run's own name unless replicates share one).
void renameRun(Store &study, int64_t runId, const std::string &newName);
void setArchived(Store &study, int64_t runId, bool archived);
// Removes the run and every row of it (metrics, validation, memory, events, numerics, tags,
// former names, weights files and quantizations) and its weights folder. Refused for a run
// whose engine is still at work.
void deleteRun(Store &study, int64_t runId);

// Copies finished runs of `source` (which is not `study`) into `study` with every row, their
// environment and stored predictions, as new runs named `name + suffix`; all or none. Refused for a
// run that is still running, a name already in `study`, or copying a study into itself. A source
// validated on other windows (another study seed) keeps its seed, which comparisons name.
std::vector<int64_t> copyRunsFrom(Store &study, const Store &source, const std::vector<int64_t> &runIds,
                                  const std::string &suffix = "");
// copyRunsFrom into the study at `destination`, created when missing with the source's study
// seed (so the copies are validated on the same windows), and removed again when the copy is
// refused. Returns the copies' ids in the destination.
std::vector<int64_t> copyRunsInto(const Store &source, const std::vector<int64_t> &runIds,
                                  const std::string &destination, const std::string &suffix = "");
// Removes the study file at `path` that this process made and no longer wants, with the files
// SQLite keeps beside it.
void removeStudyFile(const std::string &path);

// Rewrites the file without its free pages: the bytes of the file (and its write-ahead log)
// before and after.
struct Compaction
{
    int64_t bytesBefore = 0;
    int64_t bytesAfter = 0;
};
Compaction vacuum(Store &study);

} // namespace optlog
