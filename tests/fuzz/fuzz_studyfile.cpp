// SPDX-License-Identifier: MIT
// A study file from outside (`optlog copy`, a shard gathered back, a file sent by a colleague):
// corrupted pages, a hostile schema, a newer user_version. Opening it for writing, as the engine
// does (migration, dead engines marked crashed), either refuses it with a StoreError or gives a
// study whose every run reads back. A page SQLite finds corrupt, or a table that lacks a column,
// while reading is a StoreError too ("cannot read its runs: ..."): the CLI's exit 2, never a crash
// and never SQLite's own exception.
#include "core/store/clusterjobs.h"
#include "core/store/store.h"
#include "core/store/weights.h"
#include "tests/fuzz/fuzzinput.h"

using namespace optlog;

namespace {

void readEverything(const Store &store)
{
    store.schemaVersion();
    store.studySeed();
    for (const RunRecord &run : store.runs()) {
        store.metrics(run.id);
        store.validation(run.id);
        store.memory(run.id);
        store.ranks(run.id);
        store.events(run.id);
        store.numerics(run.id);
        weightFiles(store, run.id);
        quantizations(store, run.id);
        store.findRun(run.name);
    }
    clusterJobs(store);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const fuzz::InputFile file(fuzz::textOf(data, size), ".sqlite");
    try {
        const Store store(file.path(), Store::Access::ReadWrite);
        readEverything(store);
    } catch (const InputError &) {
    }
    return 0;
}
