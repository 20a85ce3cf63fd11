// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <sys/types.h>

namespace optlog {

// What a program did: its exit code (127 when it could not start, 128 + N when signal N ended it,
// -1 when it ran past its time and was killed) and what it printed.
struct ProgramOutput
{
    int exitCode = 127;
    std::string out;
    std::string err;
};

// Runs `argv` (argv[0] a path, or a name looked up on PATH) and waits for it, reading both outputs
// at once so that a program that fills one while the other is read never stalls. Its standard input
// is `inputFile` (or /dev/null: never the terminal, so it cannot ask anything), and it runs in a
// process group of its own, so that a Ctrl-C in the terminal is this process's to handle. Killed
// after `timeout` when one is given (above 0).
ProgramOutput runProgram(const std::vector<std::string> &argv, std::chrono::milliseconds timeout = {},
                         const std::string &inputFile = "");

// runProgram's pieces, for a program whose output is read as it comes (a stream over ssh): started
// as runProgram starts it, its outputs on the read ends of two pipes (closed on exec), which the
// caller closes. `pid` is -1 when it could not start.
struct StartedProgram
{
    pid_t pid = -1;
    int out = -1;
    int err = -1;
};
StartedProgram startProgram(const std::vector<std::string> &argv, const std::string &inputFile = "");
// Waits for a started program: its exit code as runProgram reports it.
int waitForProgram(pid_t pid);

// `program`'s path on the PATH (/usr/bin:/bin where none is set), else empty.
std::string onPath(const std::string &program);

// Where optlog's engine, `optlog-engine` (the binary that trains with LibTorch), is installed for
// the `optlog` at `optlog`: in the same folder (a build) or in ../libexec/optlog (the packages);
// empty when it is in neither (the `optlog` package alone: docs/building.md).
std::string installedEngine(const std::string &optlog);

// `value` quoted for a POSIX shell: a batch script's arguments, a command line ssh runs on a host.
// Any byte is kept as it is, a newline too.
std::string shellQuoted(const std::string &value);
// Words joined into one such command line, each quoted.
std::string shellCommand(const std::vector<std::string> &words);
// A command for a person to paste into a shell (`optlog gather STUDY`): each word as it is where a
// shell gives none of its characters a meaning (letters, digits, - _ . / : , + = @ %), else quoted.
std::string pasteableCommand(const std::vector<std::string> &words);

// What makes a value more than one plain word to a shell or to ssh: white space, quotes, and what
// separates, substitutes or redirects commands. A host's name and its optlog command hold none.
inline constexpr char kNotInOneWord[] = " \t\r\n'\"\\;&|$`<>()";

} // namespace optlog
