# SPDX-License-Identifier: MIT
"""FP32 products through the two libraries LibTorch 1.13 links on this machine, side by side in
one process: torch.mm (ATen, which hands FP32 to the BLAS: OpenBLAS here) and oneDNN's own sgemm
(libdnnl.so.2, called through ctypes), the library optlog's engine uses with runtime.gemm = auto.
Each round times both on the same matrices, alternated A B B A; prints GFLOP/s per round and the
medians, and checks that both products agree (a library that computes wrong results fails).

Shapes: the default preset's linear layers (1024 rows = 8 sequences x 128 tokens, width 256) and
a square 2048 product, the size the machine peak is measured at.
Usage: OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 tests/bench/gemm_libraries.py [ROUNDS] [THREADS]
"""
import ctypes
import statistics
import sys
import time

import torch

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
torch.set_num_threads(threads)

dnnl = ctypes.CDLL("libdnnl.so.2")
sgemm = dnnl.dnnl_sgemm
sgemm.restype = ctypes.c_int
sgemm.argtypes = [ctypes.c_char, ctypes.c_char] + [ctypes.c_int64] * 3 + [ctypes.c_float, ctypes.c_void_p,
                  ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_float, ctypes.c_void_p, ctypes.c_int64]


def seconds(product, repeats):
    product()  # warm-up: threads, packing buffers
    start = time.perf_counter()
    for _ in range(repeats):
        product()
    return (time.perf_counter() - start) / repeats


shapes = [("QKV", 1024, 256, 768), ("attention out", 1024, 256, 256), ("MLP up", 1024, 256, 1024),
          ("MLP down", 1024, 1024, 256), ("square", 2048, 2048, 2048)]
print("| product (M x K by K x N) | round | OpenBLAS GFLOP/s | oneDNN GFLOP/s |")
print("|---|---|---|---|")
medians = []
for name, m, k, n in shapes:
    x = torch.randn(m, k)
    w = torch.randn(n, k)  # (out, in), as a linear layer's weight: y = x w^T
    out = torch.empty(m, n)
    reference = (x.double() @ w.double().t()).float()

    def aten():
        torch.mm(x, w.t(), out=out)

    def onednn():
        status = sgemm(b"N", b"T", m, n, k, 1.0, x.data_ptr(), k, w.data_ptr(), k, 0.0, out.data_ptr(), n)
        if status != 0:
            raise SystemExit(f"gemm_libraries.py: dnnl_sgemm failed with status {status}")

    for product, label in ((aten, "OpenBLAS"), (onednn, "oneDNN")):
        product()
        error = (out - reference).abs().max().item() / reference.abs().max().item()
        if not error < 1e-5:
            raise SystemExit(f"gemm_libraries.py: {label} is off by {error:.2e} (relative) for {name}")
    flops = 2.0 * m * n * k
    repeats = max(3, int(2e10 / flops))
    rates = {"aten": [], "onednn": []}
    for r in range(rounds):
        t = {"aten": 0.0, "onednn": 0.0}
        for side in ("aten", "onednn", "onednn", "aten"):
            t[side] += seconds(aten if side == "aten" else onednn, repeats)
        for side in t:
            rates[side].append(flops * 2 / t[side] / 1e9)
        print(f"| {m} x {k} by {k} x {n} ({name}) | {r + 1} | {rates['aten'][-1]:.0f} | {rates['onednn'][-1]:.0f} |")
    medians.append((name, m, k, n, statistics.median(rates["aten"]), statistics.median(rates["onednn"])))
print()
print("| product | OpenBLAS median GFLOP/s | oneDNN median GFLOP/s | oneDNN / OpenBLAS |")
print("|---|---|---|---|")
for name, m, k, n, a, o in medians:
    print(f"| {m} x {k} by {k} x {n} ({name}) | {a:.0f} | {o:.0f} | {o / a:.2f} |")
