// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
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

// Where a started program's standard output and standard error go.
enum class ProgramOutputs {
    Inherited,       // where ours go
    Pipes,           // each to a pipe of its own, whose read end StartedProgram holds
    Discarded,       // both to /dev/null
    OutputDiscarded, // standard output to /dev/null, standard error where ours goes
    AppendedToFile,  // both appended to ProgramStart::outputFile, created (0644) when missing
};

// Which process group a started program runs in.
enum class ProcessGroup {
    Ours,       // this process's: a Ctrl-C in the terminal reaches it too
    Own,        // a group of its own, in our session: a Ctrl-C in the terminal is ours to handle
    OwnSession, // a session of its own (no terminal, no SIGHUP when ours ends), its signals unblocked
                // and at their defaults, whatever we ignore or block
};

// How to start a program: every process optlog starts is described by one and started by
// startProgram below.
struct ProgramStart
{
    std::vector<std::string> argv; // argv[0] the program's path, or its name with lookUpOnPath
    bool lookUpOnPath = false;     // argv[0] without a '/' is looked up on PATH, as a shell does
    // Set over this process's environment, each replacing a variable of the same name.
    std::vector<std::pair<std::string, std::string>> variables;
    std::string inputFile; // what its standard input reads ("/dev/null": nothing); empty: ours
    ProgramOutputs output = ProgramOutputs::Inherited;
    std::string outputFile; // with ProgramOutputs::AppendedToFile
    ProcessGroup group = ProcessGroup::Ours;
    // Killed by the kernel (SIGKILL) when this process ends (strictly, the thread that started it),
    // and not run at all if that happened while it was starting: Linux's PR_SET_PDEATHSIG, which
    // posix_spawn cannot set, so such a program is started by fork and exec, and one that cannot
    // run then exits with kExitFailed instead of startProgram reporting it.
    bool diesWithParent = false;
};

// A started program. `pid` is -1 when it could not start, and `error` says why (strerror's words).
// With ProgramOutputs::Pipes, `out` and `err` are the read ends of its outputs' pipes (closed on
// exec), which the caller closes.
struct StartedProgram
{
    pid_t pid = -1;
    int out = -1;
    int err = -1;
    std::string error;
};
// Starts `start` and returns at once. Our buffered output is flushed first, so that what we printed
// before it comes before what it prints.
StartedProgram startProgram(const ProgramStart &start);
// runProgram's pieces, for a program whose output is read as it comes (a stream over ssh): started
// as runProgram starts it, its outputs on pipes.
StartedProgram startProgram(const std::vector<std::string> &argv, const std::string &inputFile = "");
// Waits for a started program: its exit code as runProgram reports it.
int waitForProgram(pid_t pid);
// Reaps the started program `pid` once it has ended, waiting for that when `block`: its raw wait
// status (read with WIFEXITED and the like); empty while it still runs, or when it is not our child.
std::optional<int> reapProgram(pid_t pid, bool block = true);

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
