// SPDX-License-Identifier: MIT
#include "core/contract/outcome.h"

namespace optlog {

namespace {

struct OutcomeFacts
{
    Outcome outcome;
    const char *name;
    ExitCode exitCode;
};

constexpr OutcomeFacts kOutcomes[] = {
    {Outcome::Completed, "completed", kExitOk},   {Outcome::Diverged, "diverged", kExitDiverged},
    {Outcome::Failed, "failed", kExitFailed},     {Outcome::Cancelled, "cancelled", kExitCancelled},
    {Outcome::Oom, "oom", kExitOutOfBudget},      {Outcome::Crashed, "crashed", kExitFailed},
};

struct ExitCodeMeaning
{
    ExitCode code;
    const char *meaning;
};

constexpr ExitCodeMeaning kExitCodes[] = {
    {kExitOk, "completed"},
    {kExitFailed, "failed"},
    {kExitBadInput, "bad input (nothing written)"},
    {kExitDiverged, "diverged"},
    {kExitCancelled, "cancelled"},
    {kExitOutOfBudget, "out of memory budget"},
};

const OutcomeFacts &factsOf(Outcome outcome)
{
    for (const auto &facts : kOutcomes)
        if (facts.outcome == outcome)
            return facts;
    return kOutcomes[0]; // unreachable: every enumerator has a row
}

} // namespace

const char *outcomeName(Outcome outcome) { return factsOf(outcome).name; }

const char *outcomeName(const std::optional<Outcome> &outcome)
{
    return outcome ? outcomeName(*outcome) : "running";
}

std::optional<Outcome> outcomeNamed(const std::string &name)
{
    for (const auto &facts : kOutcomes)
        if (name == facts.name)
            return facts.outcome;
    return std::nullopt;
}

ExitCode exitCodeFor(Outcome outcome) { return factsOf(outcome).exitCode; }

std::optional<Outcome> outcomeForExitCode(int code)
{
    if (code == kExitBadInput)
        return std::nullopt;
    for (const auto &facts : kOutcomes)
        if (facts.exitCode == code)
            return facts.outcome; // Failed before Crashed: the table's order decides
    return Outcome::Failed;
}

std::string exitCodesText()
{
    std::string text;
    for (const auto &exit : kExitCodes)
        text += (text.empty() ? "" : ", ") + std::to_string(int(exit.code)) + " " + exit.meaning;
    return text;
}

} // namespace optlog
