// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/program.h"
#include "core/store/remoteruns.h"
#include "core/store/store.h"

#include <atomic>
#include <functional>
#include <string>

namespace optlog {

// Starting and resuming a run on a host, asked until the host answers: a lost answer (a cut link,
// a killed ssh) is asked again, and the host starts a key's run, or resumes a run, once
// (app/hostcommands.cpp). Each gives up after kStartTimeout without an answer, or when `stop` is set.

// What a host said to a start or a resume of a run.
struct StartAnswer
{
    enum class Kind {
        Started, // the run trains there: `run` and `place` say which and where
        Refused, // the host or its engine said no (`said`): nothing was started
        Lost,    // no answer (the connection dropped, or a stop was asked): it may train there
    };
    Kind kind = Kind::Lost;
    ProgramOutput said;
    RunRecord run;     // as the host made it (a resume: its engine and machine)
    RemotePlace place; // where it trains
    int64_t step = -1; // a resume: the checkpoint's step it goes on after
};

// A line for a person: "no answer from NAME to the start of run 3 (...); asking again".
using Say = std::function<void(const std::string &)>;

// Asks until the host answers the start of `copy` (with the copy's key and stored config) or
// refuses it; an answer is stored in `study` (answerRemoteStart, core/store/remoteruns.h).
StartAnswer startUntilAnswered(Store &study, const RemoteRun &copy, bool force, const Say &say,
                               const std::atomic<bool> &stop);
// Asks until the host answers a resume of `copy`'s run from its newest checkpoint there, or
// refuses it. `label`: "run 3 (name)", for `say`.
StartAnswer resumeUntilAnswered(const RemoteRun &copy, const std::string &label, const Say &say,
                                const std::atomic<bool> &stop);

// The starts this machine asked for and has no answer to yet, by key ($XDG_DATA_HOME/optlog/
// asked-starts.json). A copy whose start went unanswered is asked again only from the machine that
// asked first: a study from someone else never makes this one start its runs on a host.
void rememberAskedStart(const std::string &key);
bool askedHere(const std::string &key);
void forgetAskedStart(const std::string &key);

} // namespace optlog
