// SPDX-License-Identifier: MIT
#include "core/remote/sshclient.h"

#include "core/contract/format.h"
#include "core/contract/inputerror.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

namespace optlog {

namespace {

// What ssh said on its standard error is kept up to this many bytes, its last ones.
constexpr size_t kErrorBytesKept = 4096;

} // namespace

void requireDestination(const std::string &name)
{
    const std::string what = "a host is an SSH destination, as `ssh` takes it: an alias from ~/.ssh/config, "
                             "user@host or host";
    if (name.empty())
        throw InputError("no host named: " + what);
    if (name.front() == '-')
        throw InputError("host \"" + printable(name) + "\" begins with '-', which ssh would read as an option: " + what);
    if (name.find_first_of(kNotInOneWord) != std::string::npos || !unprintableCharacter(name).empty())
        throw InputError("host \"" + printable(name) + "\" is not one word: " + what);
}

std::string sshSaid(const ProgramOutput &result)
{
    std::string said = result.err;
    while (!said.empty() && (said.back() == '\n' || said.back() == '\r'))
        said.pop_back();
    if (said.empty())
        return "ssh ended with exit code " + std::to_string(result.exitCode) + " and said nothing";
    return printable(said);
}

std::string unreachableMessage(const std::string &destination, const ProgramOutput &result)
{
    return "cannot reach " + destination + " over SSH (" + sshSaid(result) + "); `ssh " + destination
           + " true` must work without a prompt: a key in your agent, the host in ~/.ssh/known_hosts";
}

SshClient::SshClient(std::string destination)
    : m_destination(std::move(destination))
{
    requireDestination(m_destination);
}

std::vector<std::string> SshClient::arguments(const std::string &remoteCommand) const
{
    std::vector<std::string> out = {"ssh",
                                    "-T", // no terminal there: the command's output is its bytes
                                    "-o",  "BatchMode=yes",         "-o", "ConnectTimeout=10",
                                    "-o",  "ServerAliveInterval=2", "-o", "ServerAliveCountMax=4",
                                    "-o",  "LogLevel=ERROR"};
    if (const char *config = std::getenv("OPTLOG_SSH_CONFIG"); config && *config) {
        out.push_back("-F");
        out.push_back(config);
    }
    out.push_back("--"); // what follows is the destination, whatever it begins with
    out.push_back(m_destination);
    out.push_back(remoteCommand);
    return out;
}

ProgramOutput SshClient::run(const std::string &remoteCommand, std::chrono::seconds timeout,
                             const std::string &inputFile) const
{
    return runProgram(arguments(remoteCommand), timeout, inputFile);
}

SshStream::SshStream(const SshClient &client, const std::string &remoteCommand)
{
    const StartedProgram started = startProgram(client.arguments(remoteCommand));
    if (started.pid < 0)
        throw std::runtime_error("cannot start ssh: is OpenSSH's client installed (apt-get install openssh-client)?");
    m_pid = started.pid;
    m_output = started.out;
    m_errorPipe = started.err;
    ::fcntl(m_errorPipe, F_SETFL, O_NONBLOCK);
}

SshStream::~SshStream()
{
    if (m_pid > 0) {
        kill();
        wait();
    }
    if (m_output >= 0)
        ::close(m_output);
    if (m_errorPipe >= 0)
        ::close(m_errorPipe);
}

void SshStream::drainErrors()
{
    char chunk[4096];
    ssize_t got;
    while (m_errorPipe >= 0 && (got = ::read(m_errorPipe, chunk, sizeof chunk)) > 0) {
        m_errors.append(chunk, size_t(got));
        if (m_errors.size() > kErrorBytesKept) // the last lines: enough for a message
            m_errors.erase(0, m_errors.size() - kErrorBytesKept);
    }
}

int SshStream::wait()
{
    if (m_pid > 0) {
        m_exitCode = waitForProgram(m_pid);
        m_pid = -1;
        drainErrors();
    }
    return m_exitCode;
}

void SshStream::kill()
{
    if (m_pid > 0)
        ::kill(m_pid, SIGKILL);
}

} // namespace optlog
