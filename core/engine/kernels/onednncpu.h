// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <string>

namespace optlog {

// What the system's oneDNN (the one Debian's LibTorch links, and optlog's sgemm and matmul
// primitive with it) may dispatch to on this CPU. Built only with oneDNN (gemm.h says when).

// oneDNN's kernels on a CPU with AMX: Linux (5.16 and later) lets a process use AMX's tile data
// only after it asks (arch_prctl ARCH_REQ_XCOMP_PERM), and oneDNN 2.x counts AMX among the ISAs it
// uses only on request. Asks for both, once per process, where the CPU has AMX and the user has
// not capped oneDNN's ISA (ONEDNN_MAX_CPU_ISA, DNNL_MAX_CPU_ISA); elsewhere does nothing. Called
// before oneDNN first chooses its kernels: the run's start, and each of optlog's paths into it.
void allowOneDnnAmx();

struct OneDnnCpu
{
    std::string version; // "oneDNN 2.6.3"
    std::string isa;     // the ISA it dispatches to: "avx512_core_amx", "avx512_core_bf16", "avx2", ...
    std::string amx;     // "in use", "not on this CPU", or why not ("tile data refused by the kernel: ...")
};
OneDnnCpu oneDnnCpu();

// The implementations oneDNN's log names for the primitives `work` executes ("brg:avx512_core_bf16"
// or "brg:avx512_core_amx", comma-separated, each once), empty where it executed none: how
// LibTorch's own BF16 products, which reach oneDNN through ideep, ran. The log goes to stdout,
// which is held in a file meanwhile: call it where nothing else prints.
std::string oneDnnImplementationsOf(const std::function<void()> &work);

} // namespace optlog
