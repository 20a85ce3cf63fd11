// SPDX-License-Identifier: MIT
// The study file itself: opening it (every check before a write, so that a refused file is left as
// it was), its study seed, the disk reserved for a run's last rows, and the runs whose engine
// process is gone.
#include "core/contract/format.h"
#include "core/contract/program.h"
#include "core/contract/thismachine.h"
#include "core/store/store_p.h"

#include <sqlite3.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

namespace optlog {

namespace StorePrivate {

SQLite::Database &database(const Store &study)
{
    return *study.m_db;
}

std::string processStartTime(int64_t pid)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(in, line))
        return {};
    // Field 2 (comm) may contain spaces; the fields after its closing parenthesis are plain.
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    std::string field;
    for (int i = 3; i <= 22 && rest >> field; ++i) {
    }
    return field;
}

} // namespace StorePrivate

using namespace StorePrivate;

namespace {

bool processAlive(int64_t pid, const std::string &startTime)
{
    if (pid <= 0)
        return false;
    if (kill(pid_t(pid), 0) != 0 && errno == ESRCH)
        return false;
    const std::string now = processStartTime(pid);
    return now.empty() || startTime.empty() || now == startTime;
}

// A read-only connection. SQLite reads a WAL-mode file through its -shm file and creates it when
// missing; in a folder this process may not write it cannot. Then, with no -wal file either,
// everything is in the main file and no writer of this folder can be at work without one, so the
// file is opened as immutable: read as it is, with no -shm.
std::unique_ptr<SQLite::Database> openReadOnly(const std::string &path)
{
    namespace fs = std::filesystem;
    std::error_code error;
    const fs::path absolute = fs::absolute(path, error);
    const bool canMakeShm = fs::exists(path + "-shm", error) || ::access(absolute.parent_path().c_str(), W_OK) == 0;
    if (canMakeShm || fs::exists(path + "-wal", error))
        return std::make_unique<SQLite::Database>(path, SQLite::OPEN_READONLY, kBusyTimeoutMs);
    std::string uri = "file:";
    for (const unsigned char c : absolute.string()) {
        if (std::isalnum(c) || std::string("/-._~").find(char(c)) != std::string::npos)
            uri += char(c);
        else
            uri += formatted("%%%02X", unsigned(c));
    }
    return std::make_unique<SQLite::Database>(uri + "?immutable=1", SQLite::OPEN_READONLY | SQLite::OPEN_URI,
                                              kBusyTimeoutMs);
}

bool hasOptlogHeader(const std::string &path, int *applicationId, int *userVersion, int *tableCount)
{
    std::ifstream in(path, std::ios::binary);
    char header[16] = {};
    in.read(header, sizeof(header));
    if (in.gcount() < 16 || std::string(header, 15) != "SQLite format 3")
        return false;
    const auto db = openReadOnly(path);
    *applicationId = db->execAndGet("PRAGMA application_id").getInt();
    *userVersion = db->execAndGet("PRAGMA user_version").getInt();
    *tableCount = db->execAndGet("SELECT count(*) FROM sqlite_master WHERE type = 'table'").getInt();
    return true;
}

// Why a study path cannot be a study file at all (a folder, a device), or empty when it can.
std::string unusablePath(const std::string &path)
{
    namespace fs = std::filesystem;
    std::error_code error;
    const fs::file_status status = fs::status(path, error);
    if (fs::is_directory(status))
        return "study '" + path + "' is a folder; give a file name, such as '"
               + (fs::path(path) / "study.sqlite").string() + "'";
    if (fs::exists(status) && !fs::is_regular_file(status))
        return "study '" + path
               + "' is not a regular file (a device, a pipe or a socket); give a file name, such as "
                 "'study.sqlite'";
    if (!fs::exists(status)) {
        const fs::path folder = fs::path(path).parent_path();
        if (!folder.empty() && !fs::is_directory(folder, error))
            return "study '" + path + "': the folder '" + folder.string() + "' does not exist";
    }
    return {};
}

// Why this process cannot write `path` (the system's reason), or empty when it can.
std::string unwritableReason(const std::string &path)
{
    if (access(path.c_str(), W_OK) == 0)
        return "the file system or another process refuses writes";
    return std::strerror(errno);
}

// The -wal and -shm files SQLite keeps beside a study: removed after a refused open that made
// them, when they hold nothing, so that a refusal leaves the folder as it found it.
class SideFiles
{
public:
    explicit SideFiles(const std::string &path)
        : m_paths{path + kSideFileSuffixes[0], path + kSideFileSuffixes[1]}
    {
        for (size_t i = 0; i < m_paths.size(); ++i)
            m_existed[i] = std::filesystem::exists(m_paths[i]);
    }
    void removeThoseWeMade() const
    {
        std::error_code error;
        if (m_existed[0] || std::filesystem::file_size(m_paths[0], error) != 0 || error)
            return; // a WAL with content may hold another writer's rows
        for (size_t i = 0; i < m_paths.size(); ++i)
            if (!m_existed[i])
                std::filesystem::remove(m_paths[i], error);
    }

private:
    std::array<std::string, 2> m_paths;
    std::array<bool, 2> m_existed{};
};

} // namespace

Store::Store(const std::string &path, Access access)
    : m_path(path)
{
    namespace fs = std::filesystem;
    if (const std::string problem = unusablePath(path); !problem.empty())
        throw StoreError(problem);
    std::error_code error;
    const bool isNew = !fs::exists(path, error) || fs::file_size(path, error) == 0;
    if (isNew && access == Access::ReadOnly)
        throw StoreError("study '" + path + "' does not exist; `" + pasteableCommand({"optlog", "run", "--db", path})
                         + "` creates it");

    const SideFiles sideFiles(path);
    try {
        open(access, isNew);
    } catch (const StoreError &) {
        m_db.reset();
        sideFiles.removeThoseWeMade();
        throw;
    } catch (const SQLite::Exception &e) {
        m_db.reset();
        sideFiles.removeThoseWeMade();
        throw StoreError("study '" + path + "': " + e.what());
    }
}

void Store::open(Access mode, bool isNew)
{
    const std::string &path = m_path;
    if (!isNew) {
        // Every check happens on a read-only connection, so a file we refuse is never touched.
        if (::access(path.c_str(), R_OK) != 0)
            throw StoreError("study '" + path + "' cannot be read: " + std::strerror(errno));
        int applicationId = 0, userVersion = 0, tables = 0;
        if (!hasOptlogHeader(path, &applicationId, &userVersion, &tables))
            throw StoreError("'" + path + "' is not an optlog study: it is not an SQLite database");
        if (applicationId != kApplicationId && !(applicationId == 0 && tables == 0))
            throw StoreError("'" + path
                             + "' is not an optlog study: it is an SQLite database of another "
                               "application; choose a new file name for the study");
        if (userVersion < 0)
            throw StoreError("study '" + path + "' has schema version " + std::to_string(userVersion)
                             + ", which no optlog writes (versions count up from 0): the file is damaged or "
                               "was changed by another program. The file was not changed.");
        if (userVersion > kSchemaVersion)
            throw StoreError("study '" + path + "' has schema version " + std::to_string(userVersion)
                             + ", newer than this optlog knows (" + std::to_string(kSchemaVersion)
                             + "); open it with a newer optlog. The file was not changed.");
    }
    if (mode == Access::ReadOnly)
        m_db = openReadOnly(path);
    else
        m_db = std::make_unique<SQLite::Database>(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, kBusyTimeoutMs);
    if (mode == Access::ReadWrite) {
        // SQLite quietly opens a file it may not write read-only; a run would then fail at its
        // first row. Refuse now, before anything else.
        if (sqlite3_db_readonly(m_db->getHandle(), "main") == 1)
            throw StoreError("study '" + path + "' cannot be written (" + unwritableReason(path)
                             + "); it can still be read (`" + pasteableCommand({"optlog", "runs", path})
                             + "`); to add runs, copy it to a file you can write or choose another --db");
        m_db->exec("PRAGMA journal_mode = WAL");
        // In WAL mode NORMAL loses no committed data on a crash of the process, only on power loss.
        m_db->exec("PRAGMA synchronous = NORMAL");
        m_db->exec("PRAGMA foreign_keys = ON");
        migrate();
        markCrashedRuns();
        removeStaleReserves();
    } else if (const int version = schemaVersion(); version < kSchemaVersion) {
        // A reader of an older study migrates it forward once, when it may write it.
        m_db.reset();
        if (::access(path.c_str(), W_OK) != 0)
            throw StoreError("study '" + path + "' has the older schema version " + std::to_string(version)
                             + " and cannot be written to migrate it (" + std::strerror(errno)
                             + "); copy it to a folder you can write and open the copy");
        Store(path, Access::ReadWrite);
        m_db = openReadOnly(path);
    }
}

Store::~Store()
{
    if (!m_reserve.empty())
        ::unlink(m_reserve.c_str());
}

void Store::reserveSpace(int64_t bytes) noexcept
{
    const std::string path = m_path + "-reserve-" + std::to_string(getpid());
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    const bool held = ::posix_fallocate(fd, 0, off_t(bytes)) == 0;
    ::close(fd);
    if (held)
        m_reserve = path;
    else
        ::unlink(path.c_str()); // no room even now: nothing to keep
}

void Store::removeStaleReserves() const noexcept
{
    namespace fs = std::filesystem;
    std::error_code error;
    const fs::path study = fs::absolute(m_path, error);
    const std::string prefix = study.filename().string() + "-reserve-";
    for (const auto &entry : fs::directory_iterator(study.parent_path(), error)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind(prefix, 0) != 0)
            continue;
        const long long pid = std::atoll(name.c_str() + prefix.size());
        if (pid > 0 && ::kill(pid_t(pid), 0) != 0 && errno == ESRCH)
            fs::remove(entry.path(), error);
    }
}

int64_t Store::studySeed() const
{
    return guarded(m_path, "read its seed", [&] {
        SQLite::Statement query(*m_db, "SELECT value FROM meta WHERE key = 'study_seed'");
        if (!query.executeStep())
            return kDefaultStudySeed;
        const std::string text = query.getColumn(0).getString();
        char *end = nullptr;
        errno = 0;
        const long long seed = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || *end != '\0' || errno == ERANGE || seed < 0)
            throw StoreError("study '" + m_path + "': its study_seed '" + text
                             + "' (table meta) is not a whole number of 0 or more; the file was edited by hand");
        return int64_t(seed);
    });
}

void Store::setStudySeed(int64_t seed)
{
    if (!runs().empty())
        throw StoreError("study '" + m_path
                         + "' has runs: its seed decides the windows they were validated on and "
                           "cannot change");
    if (seed < 0)
        throw StoreError("a study seed is 0 or more, not " + std::to_string(seed));
    guarded(m_path, "store its seed", [&] {
        SQLite::Statement update(*m_db, "INSERT OR REPLACE INTO meta (key, value) VALUES ('study_seed', ?)");
        update.bind(1, std::to_string(seed));
        update.exec();
    });
}

std::vector<Store::DeadRun> Store::deadRuns() const
{
    return guarded(m_path, "read its runs", [&] {
        SQLite::Statement running(*m_db, "SELECT id, pid, pid_start, host, "
                                         "(SELECT max(step) FROM metrics WHERE run_id = runs.id) "
                                         "FROM runs WHERE status = 'running' "
                                         "AND id NOT IN (SELECT run_id FROM remote_runs)");
        std::vector<DeadRun> dead;
        const std::string here = thisMachine();
        while (running.executeStep()) {
            const int64_t pid = running.getColumn(1).getInt64();
            // A run started on another machine (a shared study on a network drive, or one followed
            // over SSH, left out above) is not ours to judge.
            if (running.getColumn(3).getString() != here || processAlive(pid, running.getColumn(2).getString()))
                continue;
            const int64_t lastStep = running.getColumn(4).isNull() ? -1 : running.getColumn(4).getInt64();
            dead.push_back({running.getColumn(0).getInt64(), lastStep,
                            "engine process " + std::to_string(pid)
                                + " ended without finishing the run (killed, crashed or the machine stopped); "
                                + (lastStep < 0 ? std::string("it ended before its first step")
                                                : "metrics up to step " + std::to_string(lastStep) + " are kept")});
        }
        return dead;
    });
}

void Store::releaseSpace() noexcept
{
    if (!m_reserve.empty()) {
        ::unlink(m_reserve.c_str());
        m_reserve.clear();
    }
    try {
        m_db->exec("PRAGMA wal_checkpoint(TRUNCATE)");
    } catch (const std::exception &) {
    }
}

int Store::markCrashedRuns()
{
    const std::vector<DeadRun> dead = deadRuns();
    for (const auto &run : dead)
        finishRun(run.id, Outcome::Crashed, run.lastStep, run.message);
    return int(dead.size());
}

std::string Store::absolutePath(const std::string &relative) const
{
    return (std::filesystem::path(m_path).parent_path() / relative).string();
}

} // namespace optlog
