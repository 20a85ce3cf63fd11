// SPDX-License-Identifier: MIT
#include "core/contract/outcome.h"

#include "core/contract/rowlookup.h"

namespace optlog {

namespace {

struct OutcomeFacts
{
    Outcome outcome;
    const char *name;
    ExitCode exitCode;
};

constexpr OutcomeFacts kOutcomes[] = {
    {Outcome::Completed, "completed", kExitOk}, {Outcome::Diverged, "diverged", kExitDiverged},
    {Outcome::Failed, "failed", kExitFailed},   {Outcome::Cancelled, "cancelled", kExitCancelled},
    {Outcome::Oom, "oom", kExitOutOfBudget},    {Outcome::Crashed, "crashed", kExitFailed},
};

struct ExitCodeMeaning
{
    ExitCode code;
    const char *meaning;
};

constexpr ExitCodeMeaning kExitCodes[] = {
    {kExitOk, "completed"},      {kExitFailed, "failed"},       {kExitBadInput, "bad input (nothing written)"},
    {kExitDiverged, "diverged"}, {kExitCancelled, "cancelled"}, {kExitOutOfBudget, "out of memory budget"},
};

const OutcomeFacts &factsOf(Outcome outcome)
{
    return rowOf(kOutcomes, &OutcomeFacts::outcome, outcome);
}

} // namespace

const char *outcomeName(Outcome outcome)
{
    return factsOf(outcome).name;
}

const char *outcomeName(const std::optional<Outcome> &outcome)
{
    return outcome ? outcomeName(*outcome) : "running";
}

std::optional<Outcome> outcomeNamed(const std::string &name)
{
    const OutcomeFacts *facts = findRow(kOutcomes, &OutcomeFacts::name, name);
    return facts ? std::optional(facts->outcome) : std::nullopt;
}

std::string outcomeNamesText()
{
    std::string text = outcomeName(std::nullopt);
    for (size_t i = 0; i < std::size(kOutcomes); ++i)
        text += (i + 1 == std::size(kOutcomes) ? " and " : ", ") + std::string(kOutcomes[i].name);
    return text;
}

ExitCode exitCodeFor(Outcome outcome)
{
    return factsOf(outcome).exitCode;
}

std::optional<Outcome> outcomeForExitCode(int code)
{
    if (code == kExitBadInput)
        return std::nullopt;
    // The first row of the code: Failed before Crashed, the table's order decides.
    const OutcomeFacts *facts = findRow(kOutcomes, &OutcomeFacts::exitCode, ExitCode(code));
    return facts ? facts->outcome : Outcome::Failed;
}

std::string exitCodesText()
{
    std::string text;
    for (const auto &exit : kExitCodes)
        text += (text.empty() ? "" : ", ") + std::to_string(int(exit.code)) + " " + exit.meaning;
    return text;
}

} // namespace optlog
