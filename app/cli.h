// SPDX-License-Identifier: MIT
#pragma once
// What the commands of `optlog` share on the command line: how one is registered, and the options
// and checks several of them declare.

#include "core/config/config.h"

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace optlog {

// The process the command line came to: what a command needs of it besides its options.
struct Invocation
{
    int argc = 0;
    char **argv = nullptr;
    std::string self; // this executable, which the engine's children run
};

// One subcommand of `optlog`: registered with its options (bound to state its callback owns), and
// the callback that runs it once the command line has been parsed, returning the exit code.
struct Command
{
    CLI::App *options = nullptr;
    std::function<int()> run;
};

// --preset, --config and --set: the sources of a run config, declared once for every command that
// builds one (run, estimate, fit).
void addConfigOptions(CLI::App *command, std::string &preset, std::string &configFile,
                      std::vector<std::string> &overrides);
// --tolerance: a finite number of nats, 0 or more: NaN would make every verdict "can't tell",
// a negative one every verdict a difference.
CLI::Validator toleranceCheck();
// Every value an option of `app` and its commands takes must be non-empty: optlog reads an empty
// string nowhere as an option's value, and taking it for "not given" would run with the default
// the user tried to replace (`--compute-capability ""`, `--db ""`). Arguments are left to their
// commands, which say what an empty one means ("the note is empty").
void refuseEmptyValues(CLI::App &app);
} // namespace optlog
