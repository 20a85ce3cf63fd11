// SPDX-License-Identifier: MIT
#pragma once

#include "core/contract/program.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <sys/types.h>

namespace optlog {

// OpenSSH's client, run as a program, to one destination (any name `ssh` accepts: an alias from
// ~/.ssh/config, user@host, host with a port there). It never waits on a prompt (BatchMode: the
// user's keys and agent only; no password passes through optlog), and a connection that goes
// quiet is given up within about 10 s (ServerAliveInterval), so that a follower reconnects. The
// environment variable OPTLOG_SSH_CONFIG names a client config file to use instead of the user's.
// Its destination is checked here, where ssh is run, whether it was typed or read from a study
// (which may come from someone else), and it follows `--`: it is never an option of ssh's.
class SshClient
{
public:
    // Throws InputError for a destination requireDestination refuses.
    explicit SshClient(std::string destination);
    const std::string &destination() const { return m_destination; }

    // ssh's whole command line for `remoteCommand` (a shell command line on the host).
    std::vector<std::string> arguments(const std::string &remoteCommand) const;

    // Runs `remoteCommand` and waits for it, at most `timeout`; `inputFile`, when given, is its
    // standard input (a file sent to the host). Exit code 255: ssh itself failed (unreachable,
    // keys refused, the connection dropped).
    ProgramOutput run(const std::string &remoteCommand, std::chrono::seconds timeout,
                      const std::string &inputFile = "") const;

private:
    std::string m_destination;
};

// Throws InputError for a name that ssh would read as an option or that is not one word of plain
// text, naming what a destination is.
void requireDestination(const std::string &name);

// Whether ssh itself failed (exit 255: unreachable, keys refused, the connection dropped; -1: it
// did not run or was stopped at its timeout), rather than the host's command answering: a failed
// connection may be tried again, an answer may not.
inline bool connectionFailed(const ProgramOutput &result)
{
    return result.exitCode == 255 || result.exitCode == -1;
}

// Why a connection failed, and what would make it work: "cannot reach NAME over SSH (what ssh
// said); `ssh NAME true` must work without a prompt: ...".
std::string unreachableMessage(const std::string &destination, const ProgramOutput &result);

// What ssh (or the command it ran) said on its standard error, on one line for a message: its last
// words, or its exit code where it said nothing.
std::string sshSaid(const ProgramOutput &result);

// ssh running one command on the host whose standard output is read here as it comes (a run's
// rows). Ends the process (and reaps it) when destroyed.
class SshStream
{
public:
    SshStream(const SshClient &client, const std::string &remoteCommand);
    ~SshStream();
    SshStream(const SshStream &) = delete;
    SshStream &operator=(const SshStream &) = delete;

    int output() const { return m_output; }
    // Waits for ssh to exit, after its output ended: its exit code (255: the connection failed or
    // dropped), and what it said on its standard error, the last lines of it.
    int wait();
    const std::string &errors() const { return m_errors; }
    // Ends it now, as a dropped connection would.
    void kill();

private:
    void drainErrors();

    pid_t m_pid = -1;
    int m_output = -1;
    int m_errorPipe = -1;
    std::string m_errors;
    int m_exitCode = -1;
};

} // namespace optlog
