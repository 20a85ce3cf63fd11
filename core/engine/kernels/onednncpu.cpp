// SPDX-License-Identifier: MIT
#include "core/engine/kernels/onednncpu.h"

#include "core/contract/rowlookup.h"

#include <oneapi/dnnl/dnnl.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <sstream>

#include <unistd.h>

#ifdef __x86_64__
#include <cpuid.h>
#include <sys/syscall.h>
#endif

namespace optlog {

namespace {

// Linux's arch_prctl requests for the extended state a process may use (asm/prctl.h), and AMX's
// tile data among those states (the XSAVE feature number).
constexpr int kArchGetXcompPerm = 0x1022;
constexpr int kArchReqXcompPerm = 0x1023;
constexpr int kXfeatureTileData = 18;

bool cpuHasAmx()
{
#ifdef __x86_64__
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
        return false;
    const bool tile = edx & (1u << 24), bf16 = edx & (1u << 22);
    return tile && bf16;
#else
    return false;
#endif
}

const char *userIsaCap()
{
    for (const char *name : {"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"})
        if (std::getenv(name))
            return name;
    return nullptr;
}

std::string amxState;

void askForAmx()
{
    if (!cpuHasAmx()) {
        amxState = "not on this CPU";
        return;
    }
#ifdef __x86_64__
    if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureTileData) != 0) {
        amxState = std::string("tile data refused by the kernel (arch_prctl: ") + std::strerror(errno)
                   + "; Linux 5.16 or later grants it)";
        return;
    }
    unsigned long permitted = 0;
    syscall(SYS_arch_prctl, kArchGetXcompPerm, &permitted);
    if (!(permitted & (1ul << kXfeatureTileData))) {
        amxState = "tile data not granted by the kernel";
        return;
    }
    if (const char *cap = userIsaCap()) { // the user's choice stands
        amxState = std::string("in use where ") + cap + "=" + std::getenv(cap) + " allows it";
        return;
    }
    const dnnl_status_t allowed = dnnl_set_max_cpu_isa(dnnl_cpu_isa_avx512_core_amx);
    amxState = allowed == dnnl_success ? "in use"
                                       : "oneDNN had chosen its kernels before AMX was allowed (status "
                                             + std::to_string(int(allowed)) + ")";
#endif
}

std::string isaName(dnnl_cpu_isa_t isa)
{
    static constexpr Named<dnnl_cpu_isa_t> names[] = {{dnnl_cpu_isa_sse41, "sse41"},
                                                      {dnnl_cpu_isa_avx, "avx"},
                                                      {dnnl_cpu_isa_avx2, "avx2"},
                                                      {dnnl_cpu_isa_avx2_vnni, "avx2_vnni"},
                                                      {dnnl_cpu_isa_avx512_core, "avx512_core"},
                                                      {dnnl_cpu_isa_avx512_core_vnni, "avx512_core_vnni"},
                                                      {dnnl_cpu_isa_avx512_core_bf16, "avx512_core_bf16"},
                                                      {dnnl_cpu_isa_avx512_core_amx, "avx512_core_amx"}};
    if (const Named<dnnl_cpu_isa_t> *row = findRow(names, &Named<dnnl_cpu_isa_t>::value, isa))
        return row->name;
    char hex[16];
    std::snprintf(hex, sizeof(hex), "%x", unsigned(isa));
    return "isa 0x" + std::string(hex);
}

} // namespace

void allowOneDnnAmx()
{
    static std::once_flag once;
    std::call_once(once, askForAmx);
}

OneDnnCpu oneDnnCpu()
{
    allowOneDnnAmx();
    const dnnl_version_t *v = dnnl_version();
    OneDnnCpu cpu;
    cpu.version = "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "."
                  + std::to_string(v->patch);
    cpu.isa = isaName(dnnl_get_effective_cpu_isa());
    // "in use" only where oneDNN took it.
    cpu.amx = amxState.rfind("in use", 0) == 0 && cpu.isa != "avx512_core_amx"
                  ? "allowed, but oneDNN dispatches to " + cpu.isa
                  : amxState;
    return cpu;
}

namespace {

// oneDNN's verbose log of what runs while it lives, into `log` in place of stdout; stdout and the
// user's own verbose level (ONEDNN_VERBOSE) come back however it ends.
class VerboseLog
{
public:
    explicit VerboseLog(std::FILE *log)
    {
        std::fflush(stdout);
        m_savedStdout = dup(STDOUT_FILENO);
        if (m_savedStdout < 0 || dup2(fileno(log), STDOUT_FILENO) < 0)
            return;
        m_logging = true;
        dnnl_set_verbose(1); // each execution, with its implementation
    }
    ~VerboseLog()
    {
        if (m_logging) {
            const char *level = std::getenv("ONEDNN_VERBOSE") ? std::getenv("ONEDNN_VERBOSE")
                                                              : std::getenv("DNNL_VERBOSE");
            dnnl_set_verbose(level ? std::atoi(level) : 0);
            std::fflush(stdout);
            dup2(m_savedStdout, STDOUT_FILENO);
        }
        if (m_savedStdout >= 0)
            close(m_savedStdout);
    }
    bool logging() const { return m_logging; }
    VerboseLog(const VerboseLog &) = delete;
    VerboseLog &operator=(const VerboseLog &) = delete;

private:
    int m_savedStdout = -1;
    bool m_logging = false;
};

} // namespace

std::string oneDnnImplementationsOf(const std::function<void()> &work)
{
    allowOneDnnAmx();
    std::FILE *log = std::tmpfile();
    if (!log) {
        work();
        return "";
    }
    {
        const VerboseLog verbose(log);
        work();
        if (!verbose.logging()) {
            std::fclose(log);
            return "";
        }
    }
    // "onednn_verbose,exec,cpu,matmul,brg:avx512_core_bf16,undef,src_bf16::...": the fifth field of
    // the products' lines (a reorder of an operand has lines of its own).
    std::set<std::string> implementations;
    std::string text;
    std::rewind(log);
    char buffer[4096];
    while (std::fgets(buffer, sizeof(buffer), log)) {
        std::istringstream line(buffer);
        std::string fields[5];
        for (std::string &field : fields)
            std::getline(line, field, ',');
        if (fields[1] == "exec" && (fields[3] == "matmul" || fields[3] == "inner_product") && !fields[4].empty())
            implementations.insert(fields[4]);
    }
    std::fclose(log);
    for (const std::string &implementation : implementations)
        text += (text.empty() ? "" : ", ") + implementation;
    return text;
}

} // namespace optlog
