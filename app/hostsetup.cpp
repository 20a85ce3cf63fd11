// SPDX-License-Identifier: MIT
// `optlog host setup NAME --python PATH`: optlog installed on a GPU host from here, into the Python
// environment that holds the torch the user trains with (docs/remote.md). The host's Python is
// asked for its torch; the wheel sent is installed by the host's own pip only where it was built
// for that torch (LibTorch's C++ ABI changes between minor versions), else the sdist is built there
// against it. Then `host check` describes the host and remembers its optlog.
#include "app/commands.h"
#include "app/remote.h"
#include "core/contract/format.h"
#include "core/contract/inputerror.h"
#include "core/contract/program.h"
#include "core/remote/hostlist.h"
#include "core/remote/sshclient.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>
#include <regex>
#include <sstream>

namespace optlog {

namespace {

// The oldest torch the engine builds against (core/engine/compat: Debian's LibTorch 1.13), and so
// the oldest the sdist can serve.
constexpr int kOldestTorch[2] = {1, 13};
// Building the engine from the sdist on a host takes minutes; compiling it on 2 cores, 20 or more.
constexpr auto kBuildTimeout = std::chrono::hours(2);
constexpr auto kAskTimeout = std::chrono::seconds(120);

// What the host's Python says of itself, as JSON: its torch, its version, where pip puts commands.
constexpr const char *kDescribePython = R"(import json, sys, sysconfig
import torch
print(json.dumps({"torch": torch.__version__, "cuda": torch.version.cuda or "",
                  "python": "%d.%d" % sys.version_info[:2], "scripts": sysconfig.get_path("scripts")})))";

// The torch requirement in a wheel's METADATA (torch_requirement.py writes `torch==X.Y.*`), read
// there by the host's Python: the laptop may have none.
constexpr const char *kWheelTorch = R"(import sys, zipfile
wheel = zipfile.ZipFile(sys.argv[1])
for name in wheel.namelist():
    if name.endswith(".dist-info/METADATA"):
        for line in wheel.read(name).decode().splitlines():
            if line.replace(" ", "").startswith("Requires-Dist:torch"):
                print(line.split(":", 1)[1].strip()))";

// `python` as one word of the host's shell: quoted, but a leading ~/ left to expand to the home there
// (a path typed for the host, as `ssh` users write it).
std::string pythonWord(const std::string &python)
{
    return python.rfind("~/", 0) == 0 ? "~/" + shellQuoted(python.substr(2)) : shellQuoted(python);
}

// `python ARGUMENTS` as a command line of the host's shell.
std::string pythonCommand(const std::string &python, const std::vector<std::string> &arguments)
{
    return pythonWord(python) + " " + shellCommand(arguments);
}

struct HostPython
{
    std::string torch; // its full version, 2.11.0+cu130
    int major = 0, minor = 0;
    std::string cuda;    // empty: a CPU build
    std::string python;  // 3.12
    std::string scripts; // the folder pip puts `optlog` in
};

// The last non-empty line a command printed on its standard error: Python's own words for why.
std::string lastLine(const std::string &text)
{
    std::string line;
    std::istringstream lines(text);
    for (std::string next; std::getline(lines, next);)
        if (next.find_first_not_of(" \t\r") != std::string::npos)
            line = next;
    return printable(line);
}

// ssh failed, not the host's command: said as every remote command says it (sshclient.h).
void refuseIfUnreachable(const SshClient &client, const ProgramOutput &result)
{
    if (connectionFailed(result))
        throw InputError(unreachableMessage(client.destination(), result));
}

HostPython askPython(const SshClient &client, const std::string &python)
{
    const ProgramOutput result = client.run(pythonCommand(python, {"-c", kDescribePython}), kAskTimeout);
    const std::string &name = client.destination();
    refuseIfUnreachable(client, result);
    if (result.exitCode == 127 || result.exitCode == 126)
        throw InputError(name + " has no Python at `" + python + "` (" + lastLine(result.err)
                         + "): name the interpreter of the environment you train in, e.g. --python "
                           "~/venv/bin/python");
    if (result.exitCode != 0) {
        const std::string said = lastLine(result.err);
        if (said.find("No module named 'torch'") != std::string::npos)
            throw InputError(name + "'s Python `" + python + "` has no torch (" + said
                             + "): name the environment that holds the torch you train with, or install torch "
                               "there first (pip install torch)");
        throw InputError(name + "'s Python `" + python + "` could not tell its torch: " + said);
    }
    const nlohmann::json json = nlohmann::json::parse(result.out, nullptr, false);
    HostPython out;
    if (json.is_object()) {
        out.torch = json.value("torch", "");
        out.cuda = json.value("cuda", "");
        out.python = json.value("python", "");
        out.scripts = json.value("scripts", "");
    }
    std::smatch version;
    if (!std::regex_search(out.torch, version, std::regex(R"(^(\d+)\.(\d+))")) || out.scripts.empty())
        throw InputError(name + "'s Python `" + python + "` answered with no torch version ("
                         + printable(result.out.substr(0, 80)) + ")");
    out.major = std::stoi(version[1]);
    out.minor = std::stoi(version[2]);
    return out;
}

std::string minorVersion(int major, int minor)
{
    return std::to_string(major) + "." + std::to_string(minor);
}

// A private folder on the host for what is sent, removed when the setup ends however it ends.
class HostScratch
{
public:
    explicit HostScratch(const SshClient &client)
        : m_client(client)
    {
        const ProgramOutput made = client.run("mktemp -d", kAskTimeout);
        refuseIfUnreachable(client, made);
        m_folder = made.out.substr(0, made.out.find('\n'));
        if (made.exitCode != 0 || m_folder.empty() || m_folder.front() != '/')
            throw InputError(client.destination() + " made no private folder (mktemp -d: " + lastLine(made.err) + ")");
    }
    ~HostScratch() { m_client.run(shellCommand({"rm", "-rf", "--", m_folder}), kAskTimeout); }
    HostScratch(const HostScratch &) = delete;
    HostScratch &operator=(const HostScratch &) = delete;

    // `local` sent there under its own name (pip reads a wheel's tags from it): its path there.
    std::string send(const std::string &local) const
    {
        const std::string there = m_folder + "/" + std::filesystem::path(local).filename().string();
        std::cerr << "optlog host setup: sending " << local << " ("
                  << formatBytes(int64_t(std::filesystem::file_size(local))) << ") to " << m_client.destination()
                  << "\n";
        const ProgramOutput sent = m_client.run("cat > " + shellQuoted(there), std::chrono::seconds(3600), local);
        if (sent.exitCode != 0)
            throw InputError("cannot send " + local + " to " + m_client.destination() + ": " + lastLine(sent.err));
        return there;
    }

private:
    const SshClient &m_client;
    std::string m_folder;
};

// The host's pip, as `python -m pip ARGS`; refuses in pip's own words.
void hostPip(const SshClient &client, const std::string &python, const std::vector<std::string> &arguments,
             std::chrono::seconds timeout, const std::string &doing)
{
    std::vector<std::string> words = {"-m", "pip", "--disable-pip-version-check"};
    words.insert(words.end(), arguments.begin(), arguments.end());
    const ProgramOutput result = client.run(pythonCommand(python, words), timeout);
    refuseIfUnreachable(client, result);
    if (result.exitCode != 0)
        throw InputError(client.destination() + "'s pip could not " + doing + ": " + lastLine(result.err));
}

// The `torch==X.Y.*` a wheel requires, as X.Y; empty where it names none.
std::string wheelTorch(const SshClient &client, const std::string &python, const std::string &wheel)
{
    const ProgramOutput result = client.run(pythonCommand(python, {"-c", kWheelTorch, wheel}), kAskTimeout);
    if (result.exitCode != 0)
        throw InputError("cannot read " + std::filesystem::path(wheel).filename().string() + " on "
                         + client.destination() + ": " + lastLine(result.err) + " (is it optlog's wheel?)");
    std::smatch pinned;
    const std::string requirement = result.out;
    if (std::regex_search(requirement, pinned, std::regex(R"(==\s*(\d+\.\d+)\.\*)")))
        return pinned[1];
    return "";
}

void requirePackageFile(const std::string &path, const std::string &option, const std::string &ending)
{
    if (path.empty())
        return;
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error))
        throw InputError(option + " " + path + ": no such file");
    const std::string name = std::filesystem::path(path).filename().string();
    if (name.size() <= ending.size() || name.compare(name.size() - ending.size(), ending.size(), ending) != 0)
        throw InputError(option + " " + path + ": not a " + ending + " file (packaging/setup.sh wheel builds both)");
    if (!std::regex_match(name, std::regex(R"(optlog-[A-Za-z0-9._+-]+)")))
        throw InputError(option + " " + path + ": an optlog package is named optlog-VERSION..." + ending);
}

} // namespace

std::string packagedSdist(const std::string &self)
{
    // The Debian package's, /usr/share/optlog/python/optlog-VERSION.tar.gz, or in a build the one it
    // made (cmake/Packaging.cmake), as installedEngine looks for the engine.
    const std::filesystem::path bin = std::filesystem::path(self).parent_path();
    for (const std::filesystem::path &folder : {bin / ".." / "share" / "optlog" / "python", bin / ".." / "sdist"}) {
        std::error_code error;
        for (const auto &entry : std::filesystem::directory_iterator(folder, error)) {
            const std::string name = entry.path().filename().string();
            if (name.rfind("optlog-", 0) == 0 && name.size() > 7 && name.substr(name.size() - 7) == ".tar.gz")
                return entry.path().lexically_normal().string();
        }
    }
    return "";
}

int hostSetupCommand(const HostSetupRequest &request, const std::string &self)
{
    std::string installed;
    if (const int refused = refuseBadInput("host setup", [&] {
            requireDestination(request.name);
            if (request.python.empty())
                throw InputError("--python names the interpreter of the environment on " + request.name
                                 + " that holds the torch you train with, e.g. ~/venv/bin/python");
            requirePackageFile(request.wheel, "--wheel", ".whl");
            requirePackageFile(request.sdist, "--sdist", ".tar.gz");
            const std::string sdist = request.sdist.empty() ? packagedSdist(self) : request.sdist;
            if (request.wheel.empty() && sdist.empty())
                throw InputError("this optlog carries no sdist to build on " + request.name
                                 + " (the Debian package does): name a wheel with --wheel FILE or an sdist with "
                                   "--sdist FILE (packaging/setup.sh wheel builds both)");

            const SshClient client(request.name);
            const HostPython host = askPython(client, request.python);
            std::cerr << "optlog host setup: " << request.name << "'s Python " << host.python << " has torch "
                      << host.torch << (host.cuda.empty() ? " (CPU)" : " (CUDA " + host.cuda + ")") << "\n";
            const std::string torch = minorVersion(host.major, host.minor);
            const bool servable = host.major > kOldestTorch[0]
                                  || (host.major == kOldestTorch[0] && host.minor >= kOldestTorch[1]);
            const HostScratch scratch(client);
            std::string package;
            if (!request.wheel.empty()) {
                package = scratch.send(request.wheel);
                const std::string built = wheelTorch(client, request.python, package);
                if (built != torch) {
                    const std::string why = std::filesystem::path(request.wheel).filename().string()
                                            + " was built for torch " + (built.empty() ? "?" : built) + ", and "
                                            + request.name + "'s is " + host.torch;
                    if (sdist.empty() || !servable)
                        throw InputError(why + ": build a wheel against that torch, or name an sdist with --sdist");
                    std::cerr << "optlog host setup: " << why << ": building the sdist there instead\n";
                    package.clear();
                }
            }
            if (package.empty()) {
                if (!servable)
                    throw InputError(request.name + "'s torch " + host.torch + " is older than any optlog builds "
                                     + "against (" + minorVersion(kOldestTorch[0], kOldestTorch[1])
                                     + "): upgrade torch there");
                package = scratch.send(sdist);
                // The build backend, which --no-build-isolation takes from the environment itself.
                hostPip(client, request.python, {"install", "-q", "scikit-build-core>=1.1"}, kAskTimeout * 5,
                        "install scikit-build-core, which builds optlog from its sdist");
                std::cerr << "optlog host setup: building optlog there against its torch " << host.torch
                          << " (the engine compiles: minutes)\n";
                hostPip(client, request.python,
                        {"install", "--no-build-isolation", "--no-index", "--force-reinstall", "--no-deps", package},
                        kBuildTimeout, "build optlog from its sdist");
            } else {
                // Its torch requirement was checked above against the host's torch; without an
                // index or dependencies pip fetches nothing, and never replaces the user's torch.
                hostPip(client, request.python, {"install", "--no-index", "--force-reinstall", "--no-deps", package},
                        kAskTimeout * 5, "install " + std::filesystem::path(package).filename().string());
            }
            installed = host.scripts + "/optlog";
        }))
        return refused;
    std::cerr << "optlog host setup: installed " << installed << " on " << request.name << "\n";
    return hostCheckCommand(request.name, installed);
}

} // namespace optlog
