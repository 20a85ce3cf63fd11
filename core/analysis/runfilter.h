// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"
#include "core/config/recordedconfig.h"
#include "core/store/store.h"

#include <string>
#include <vector>

namespace optlog {

// Which runs a list shows, as typed in the workbench's Runs list and `optlog runs --filter`: words,
// each of which a run must match. Case does not matter.
//   fp32              a bare word: part of the name, a former name, a tag, the note, the group or
//                     any config value
//   tag:long          a tag equal to it
//   name:base         part of the name or of a former name
//   note:spike        part of the note
//   group:fp32        the group equal to it
//   outcome:oom       the outcome (running, completed, diverged, failed, cancelled, oom, crashed)
//   is:archived       archived runs only; lists leave archived runs out unless a filter names them
//                     or the list shows them (setShowArchived)
//   mode:pure-bf16    a config field by its full path (precision.mode) or its last part (mode):
//                     a number equal to it, a text containing it; a recorded run's own keys
//                     (`optlog record`) the same way, when the caller names them
// A word that starts with '-' leaves out what it matches; "quoted text" is one word.
class RunFilter
{
public:
    RunFilter() = default;
    // Throws ConfigError (field "filter") naming a key it does not know, an outcome that does not
    // exist or an unclosed quote, and what would be right. `recordedKeys`: the dotted config keys
    // of the recorded runs a list holds (recordedConfigKeys), which a filter may name too.
    static RunFilter parse(const std::string &text, const std::vector<std::string> &recordedKeys = {});

    // `config`: the run's config when the caller has it read; else read from the run's TOML.
    bool matches(const RunRecord &run, const RunConfig *config = nullptr) const;
    // Archived runs match too (else only when a word names is:archived).
    void setShowArchived(bool show) { m_showArchived = show; }
    bool empty() const { return m_terms.empty(); }

    // One word of a filter, parsed.
    struct Term
    {
        enum class Kind { Anywhere, Tag, Name, Note, Group, Outcome, Archived, Field } kind = Kind::Anywhere;
        std::vector<std::string> fields;       // Kind::Field: the engine's config paths the key names
        std::vector<std::string> recordedKeys; // and the recorded runs' keys it names (lower case)
        std::string value;                     // lower case
        bool negated = false;
    };

private:
    // `recorded`: a recorded run's config as dotted keys, when its config is not the engine's.
    static bool matchesTerm(const Term &term, const RunRecord &run, const RunConfig *config,
                            const std::vector<ConfigEntry> *recorded);

    std::vector<Term> m_terms;
    bool m_namesArchived = false; // a word is is:archived or -is:archived
    bool m_showArchived = false;
};

// The config keys of the runs their own trainers recorded (`optlog record`), for RunFilter::parse.
std::vector<std::string> recordedConfigKeys(const std::vector<RunRecord> &runs);

} // namespace optlog
